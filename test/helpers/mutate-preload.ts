/**
 * Setup file of mutation runs only (vitest.mutate.config.ts): loads the mutated modules before
 * the test file does. The in-process command tests import the engine inside a test
 * (test/helpers/run.ts), so without this a module's top level would run inside that test and
 * Stryker would count its tables (rules.ts's operators, display.ts's locale overrides) as
 * covered by it: those mutants then run against that one test, on a module already loaded
 * without them, and survive though every test would fail with them. Loaded here, the tables
 * are static mutants, which `ignoreStatic` leaves out (docs/hardening.md, "Mutation testing").
 */
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {chosenGroups, GROUPS} from '../../scripts/mutate-groups.mjs'

const ROOT = join(import.meta.dirname, '..', '..')
const files = new Set(chosenGroups().flatMap((g) => GROUPS[g].mutate.map((m) => m.split(':')[0])))
for (const file of files) await import(pathToFileURL(join(ROOT, file)).href)
