import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eSeeded, tableCount, tableRows} from '../helpers/e2e.js'
import {experimentStore} from '../helpers/experiment-fixtures.js'
import {ROOT} from '../helpers/run.js'

/** bin/run.js in a child process, without waiting for it: processes that race. */
function start(db: string, args: string[]): Promise<{code: number; stderr: string; stdout: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), ...args], {cwd: ROOT, env: {...process.env, NODE_ENV: undefined, PRICECTL_DB: db}})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({code: code ?? 1, stderr, stdout}))
  })
}

/**
 * Issue 15 item 5: `experiments create --start` is atomic. Two processes that create and
 * start clashing experiments at the same moment: one runs, the other is refused, and the
 * refused one leaves no draft behind (check, insert and start are one write transaction).
 */
describe('experiments create --start under a race', () => {
  it('three processes, one experiment: the loser exits 1 and leaves no draft', async () => {
    const db = await e2eSeeded('experiments', (file) => experimentStore(file))
    const runs = await Promise.all(
      ['a', 'b', 'c'].map((name) => start(db, ['experiments', 'create', '--name', name, '-p', 'pro_monthly', '--arm', 'x0.8', '--start', '--json'])),
    )
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1, 1])
    for (const r of runs.filter((x) => x.code === 1)) expect(JSON.parse(r.stdout).message).toContain('already runs on pro_monthly for the same visitors')
    const rows = (await tableRows(db, 'experiments')).map((r) => ({status: r.status}))
    expect(rows).toEqual([{status: 'running'}])
    expect(await tableCount(db, 'arms')).toBe(2)
  }, 60_000)
})
