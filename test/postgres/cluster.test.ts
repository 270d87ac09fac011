import {execFileSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {reachableBin, runAs, startCluster} from '../../scripts/postgres-cluster.mjs'

/**
 * The throwaway cluster of the tests and the bench (scripts/postgres-cluster.mjs): a failed
 * initdb or start leaves no temp folder behind, and binaries the server's user cannot reach
 * are staged to a folder it can.
 */

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, {force: true, recursive: true})
})

/**
 * A folder the server's user can enter (as root, PostgreSQL runs as another user, and the
 * test file's own temp folder is root's only): beside the run's folder, removed after the test.
 */
function parentFolder(): string {
  const base = process.env.PRICECTL_TEST_RUN_DIR ? dirname(process.env.PRICECTL_TEST_RUN_DIR) : tmpdir()
  const dir = mkdtempSync(join(base, 'pricectl-cluster-test-'))
  chmodSync(dir, 0o711)
  made.push(dir)
  return dir
}

/** A fake installation (bin/initdb failing, bin/postgres answering --version) in a folder only root may enter. */
function hiddenInstallation(): string {
  const hidden = mkdtempSync(join(tmpdir(), 'pricectl-hidden-'))
  made.push(hidden)
  chmodSync(hidden, 0o700)
  const bin = join(hidden, 'pg', 'bin')
  mkdirSync(bin, {recursive: true})
  mkdirSync(join(hidden, 'pg', 'share'))
  writeFileSync(join(bin, 'postgres'), '#!/bin/sh\necho "postgres (PostgreSQL) 0"\n', {mode: 0o755})
  writeFileSync(join(bin, 'initdb'), '#!/bin/sh\necho "initdb: forced failure" >&2\nexit 1\n', {mode: 0o755})
  chmodSync(join(hidden, 'pg'), 0o755)
  return bin
}

describe('the throwaway PostgreSQL cluster', () => {
  it('removes its data folder when initdb fails, and says why', async () => {
    const parent = parentFolder()
    await expect(startCluster({initdbArgs: ['--no-such-option'], parent, prefix: 'pricectl-pg-'})).rejects.toThrow(/^initdb failed in .*pricectl-pg-\w+ \(removed\): .*no-such-option/s)
    expect(readdirSync(parent)).toEqual([])
  })

  it('removes its data folder when the server fails to start, and shows its log', async () => {
    const parent = parentFolder()
    await expect(startCluster({parent, settings: {shared_buffers: 'not-a-size'}})).rejects.toThrow(/exited \(1\) before accepting connections:.*shared_buffers/s)
    expect(readdirSync(parent)).toEqual([])
  })

  it('stages binaries the server user cannot reach to a readable folder, and removes it too when initdb fails', async () => {
    const bin = hiddenInstallation()
    const parent = parentFolder()
    const user = runAs()
    const reached = reachableBin(bin, user, parent)
    if (user) {
      // Root: the server's user cannot enter the 0700 folder; the copy is runnable by it.
      expect(reached.staged).toBeDefined()
      expect(reached.bin).toBe(join(reached.staged!, 'bin'))
      expect(existsSync(join(reached.staged!, 'share'))).toBe(true)
      expect(execFileSync(join(reached.bin, 'postgres'), ['--version'], {encoding: 'utf8', ...user})).toContain('PostgreSQL')
      rmSync(reached.staged!, {recursive: true})
    } else {
      // Not root: the server runs as this user, who reaches everything it does.
      expect(reached).toEqual({bin})
    }
    await expect(startCluster({bin, parent})).rejects.toThrow(/initdb failed in .* \(removed\): initdb: forced failure/)
    expect(readdirSync(parent)).toEqual([])
  })
})
