import {mkdtempSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll} from 'vitest'

// Tables fit $COLUMNS when it is set: tests see whole lines, whatever terminal runs them.
delete process.env.COLUMNS

/**
 * Setup file: each test file gets its own temp folder (TMPDIR, so tmpdir(), mkdtemp and
 * every child process use it) inside the run's folder, removed after the file's last
 * test, passed or failed. Stores, fixtures and command output need no cleanup of their own.
 */
const runDir = process.env.PRICECTL_TEST_RUN_DIR
if (runDir) {
  const dir = mkdtempSync(join(runDir, 'file-'))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = dir
  afterAll(() => {
    process.env.TMPDIR = previous
    rmSync(dir, {force: true, maxRetries: 3, recursive: true})
  })
}
