import {type Command, Config, run as oclifRun, settings} from '@oclif/core'
import {captureOutput} from '@oclif/test'
import {spawnSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

export const ROOT = join(import.meta.dirname, '..', '..')

const templates = new Map<string, Promise<string>>()

/**
 * Make `db` (a store that does not exist yet) by copying a template that `seed` made once
 * for `key` in this worker: seeding through commands costs about half a second a test,
 * a copy a millisecond. The templates live in the run's folder (test/helpers/global-setup.ts
 * removes them); a PostgreSQL URL or a store that exists is seeded as asked.
 */
export async function seededStore(db: string, key: string, seed: (db: string) => Promise<void>): Promise<void> {
  const runDir = process.env.PRICECTL_TEST_RUN_DIR
  if (!runDir || /^postgres(ql)?:\/\//i.test(db) || existsSync(db)) return seed(db)
  let template = templates.get(key)
  if (!template) {
    const made = (async () => {
      const dir = join(runDir, TEMPLATES)
      mkdirSync(dir, {recursive: true})
      const path = join(mkdtempSync(join(dir, 'store-')), 'store.db')
      await seed(path)
      return path
    })()
    templates.set(key, made)
    made.catch(() => templates.delete(key))
    template = made
  }
  copyFileSync(await template, db)
}

/** The folder of the run's store templates (seededStore). */
export const TEMPLATES = 'templates'

/** A fresh store path in its own temp folder (the file is created by the first command). */
export function tempStore(): string {
  return join(mkdtempSync(join(tmpdir(), 'pricectl-test-')), 'store.db')
}

/**
 * A new store as `db init` makes it (migrated, the defaults seeded) at `db` (default: a fresh
 * temp path): commands that only read refuse a --db that names no store. Copied from a
 * template made once per worker (seededStore).
 */
export async function initStore(db = tempStore()): Promise<string> {
  await seededStore(db, 'db init', async (path) => {
    const r = await run(path, ['db', 'init'])
    if (r.code !== 0) throw new Error(`db init --db ${path}: exit ${r.code}: ${r.stderr}`)
  })
  return db
}

export type Run = {code: number; json: any; stderr: string; stdout: string}

function parseJson(stdout: string): unknown {
  try {
    return JSON.parse(stdout)
  } catch {
    return undefined
  }
}

let config: Promise<Config> | undefined

/**
 * The command class for `args` from the TypeScript sources (commands/a/b.ts or
 * commands/a/index.ts), imported through vitest's transform: no build, and the engine's
 * modules load once per test file instead of once per command. Help and version go
 * through oclif's own dispatch (`oclifDispatch` below), which needs the build.
 */
async function sourceCommand(args: string[]): Promise<{command: Command.Class; rest: string[]} | undefined> {
  if (args.some((a) => a === '--help' || a === '-h' || a === '--version')) return undefined
  // The help command loads the help class, which oclif would look for as TypeScript under vitest.
  if (args[0] === 'help') return undefined
  let words = 0
  while (words < args.length && /^[a-z][a-z-]*$/.test(args[words])) words++
  for (let n = words; n > 0; n--) {
    const base = join(ROOT, 'commands', ...args.slice(0, n))
    const file = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f))
    if (!file) continue
    const command = (await import(pathToFileURL(file).href)).default as Command.Class
    command.id = args.slice(0, n).join(':')
    return {command, rest: args.slice(n)}
  }
  return undefined
}

/**
 * oclif's own dispatch (help, version, unknown commands, plugins) on the build, as bin/run.js
 * does: under vitest NODE_ENV is "test", where oclif would swap the manifest's dist/ paths
 * (the help class, the command_not_found hook) for the TypeScript sources and fail to
 * import them natively.
 */
async function oclifDispatch(argv: string[]): Promise<unknown> {
  const saved = settings.enableAutoTranspile
  settings.enableAutoTranspile = false
  try {
    return await oclifRun(argv, {root: ROOT})
  } finally {
    settings.enableAutoTranspile = saved
  }
}

/**
 * Run a command in-process (@oclif/test captureOutput) against `db` (none: no `--db`, the
 * command's default or PRICECTL_DB). Arguments are passed as given (runCommand would re-split
 * them on spaces).
 */
export async function run(db: string | undefined, args: string[]): Promise<Run> {
  const dbArgs = db === undefined ? [] : ['--db', db]
  const found = await sourceCommand(args)
  const {error, stderr, stdout} = await captureOutput(async () => {
    if (!found) return oclifDispatch([...args, ...dbArgs])
    config ??= Config.load({root: ROOT})
    return found.command.run([...found.rest, ...dbArgs], await config)
  })
  const code = error ? ((error as {oclif?: {exit?: number}}).oclif?.exit ?? 1) : 0
  return {code, json: parseJson(stdout), stderr, stdout}
}

/**
 * Run `fn` with `env` set in this process (what runBin's `env` is to a child), and the
 * variables as they were after it: an in-process command reads them as a child would.
 */
export async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))
  Object.assign(process.env, env)
  try {
    return await fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

/** Run bin/run.js (the build) in a child process, as a user would. */
export function runBin(db: string | undefined, args: string[], options: {env?: Record<string, string>; input?: string; bin?: string} = {}): Run {
  const env: Record<string, string | undefined> = {...process.env, NODE_ENV: undefined, ...options.env}
  if (db) env.PRICECTL_DB = db
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', options.bin ?? 'run.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: env as NodeJS.ProcessEnv,
    input: options.input ?? '',
    maxBuffer: 256 * 1024 * 1024,
  })
  return {code: r.status ?? 1, json: parseJson(r.stdout), stderr: r.stderr, stdout: r.stdout}
}
