import {mkdtempSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll} from 'vitest'

// Tables fit $COLUMNS when it is set: tests see whole lines, whatever terminal runs them.
delete process.env.COLUMNS
// The store is named by the test, never by the environment of whoever runs the tests.
delete process.env.PRICECTL_PROFILE
delete process.env.PRICECTL_CONFIG_DIR

// Test files of the quick project share a worker (isolate: false, vitest.config.ts): the
// environment a file sets (PRICECTL_NOW, PRICECTL_IMPORT_BATCH, ...) ends with the file.
const env = {...process.env}
afterAll(() => {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key]
  Object.assign(process.env, env)
})

/**
 * Setup file: each test file gets its own temp folder (TMPDIR, so tmpdir(), mkdtemp and
 * every child process use it; XDG_CONFIG_HOME, for pricectl's config file) inside the run's
 * folder, removed after the file's last test, passed or failed. Stores, fixtures and command
 * output need no cleanup of their own.
 */
const runDir = process.env.PRICECTL_TEST_RUN_DIR
if (runDir) {
  const dir = mkdtempSync(join(runDir, 'file-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = dir
  // pricectl's config file (src/cli/config-file.ts): the file's own, empty folder, never the user's.
  const previousConfig = process.env.XDG_CONFIG_HOME
  process.env.XDG_CONFIG_HOME = join(dir, 'config')
  afterAll(() => {
    process.env.TMPDIR = previous
    if (previousConfig === undefined) delete process.env.XDG_CONFIG_HOME
    else process.env.XDG_CONFIG_HOME = previousConfig
    rmSync(dir, {force: true, maxRetries: 3, recursive: true})
  })
}
