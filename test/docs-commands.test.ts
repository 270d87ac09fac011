import {execFileSync} from 'node:child_process'
import {copyFileSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect, it} from 'vitest'

import {ROOT} from './helpers/run.js'

it('docs/commands.md is what `npm run docs` writes for the current commands', () => {
  // Regenerate into a copy (the same options as the npm script) and compare.
  const copy = join(mkdtempSync(join(tmpdir(), 'pricectl-docs-')), 'commands.md')
  copyFileSync(join(ROOT, 'docs', 'commands.md'), copy)
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'oclif', 'bin', 'run.js'), 'readme', '--readme-path', copy, '--no-source-links'], {
    cwd: ROOT,
    // Not NODE_ENV=test (vitest's): oclif would then load the TypeScript sources, as in development.
    env: {...process.env, COLUMNS: '120', NODE_ENV: undefined, OCLIF_SKIP_NEW_VERSION_CHECK: 'true'},
    stdio: 'pipe',
  })
  const current = readFileSync(join(ROOT, 'docs', 'commands.md'), 'utf8')
  expect(current === readFileSync(copy, 'utf8'), 'docs/commands.md is stale: run "npm run docs" and commit it').toBe(true)
  expect(current).toContain('## `pricectl products list`')
  expect(current).toContain('--[no-]header')
})
