import {spawn, spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eSeeded, tableCount, tableRows} from '../helpers/e2e.js'
import {paymentsCsv, seedCatalog, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {ROOT, run, withEnv} from '../helpers/run.js'

const ROWS = 30_000
const BATCH = 500

async function count(db: string): Promise<number> {
  return await tableCount(db, 'charges')
}

/** The charges, without their ids, in key order (through the port: either adapter). */
async function charges(db: string): Promise<unknown[]> {
  const key = (r: Record<string, unknown>) => JSON.stringify([r.user_id, r.origin, r.origin_id])
  return (await tableRows(db, 'charges'))
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .map(({id: _id, ...rest}) => rest)
}

/** The revenue fixtures' catalog in a new store, made once and copied (test/helpers/e2e.ts e2eSeeded: on PostgreSQL by `db copy`). */
const seeded = () => e2eSeeded('revenue catalog', async (file) => await withStore(file, seedCatalog))

/** Start an import of bin/run.js and SIGKILL it as soon as it reports its first committed batch. */
function killAfterFirstBatch(db: string, file: string): Promise<{signal: NodeJS.Signals | null; stderr: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'charges', 'import', file], {
      cwd: ROOT,
      env: {...process.env, NODE_ENV: undefined, PRICECTL_DB: db, PRICECTL_IMPORT_BATCH: String(BATCH), PRICECTL_PROGRESS_INTERVAL_MS: '0'} as NodeJS.ProcessEnv,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      // A progress line is printed after the rows of a read batch were written; with
      // reads of BATCH rows, the first line means the first transaction committed.
      if (/rows read/.test(stderr) && child.exitCode === null && !child.killed) child.kill('SIGKILL')
    })
    child.on('error', reject)
    child.on('exit', (_code, signal) => resolve({signal, stderr}))
  })
}

/**
 * What is about the process runs bin/run.js: the import it kills, and the progress bar on a
 * terminal. Seeding, checks and the imports compared with the killed one run in-process
 * (test/helpers/run.ts): what they test is the store.
 */
describe('charges import end to end (bin/run.js)', () => {
  it('killed after its first batch: whole batches only, db check passes, a re-run ends like an uninterrupted run', async () => {
    const file = writeTemp('payments.csv', paymentsCsv(ROWS))
    const killed = await seeded()
    const r = await killAfterFirstBatch(killed, file)
    expect(r.signal).toBe('SIGKILL')
    const committed = await count(killed)
    expect(committed).toBeGreaterThan(0)
    expect(committed).toBeLessThan(ROWS)
    expect(committed % BATCH).toBe(0)
    const check = await run(killed, ['db', 'check', '--json'])
    expect(check.code).toBe(0)
    expect(check.json).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true})

    const resumed = await withEnv({PRICECTL_IMPORT_BATCH: String(BATCH)}, () => run(killed, ['charges', 'import', file, '--json']))
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0)
    expect(resumed.json).toMatchObject({inserted: ROWS - committed, read: ROWS, rejected: 0, stale: 0, unchanged: committed, updated: 0})

    const clean = await seeded()
    const whole = await run(clean, ['charges', 'import', file, '--json'])
    expect(whole.json).toMatchObject({inserted: ROWS, read: ROWS, rejected: 0})
    expect(await count(killed)).toBe(ROWS)
    expect(await charges(killed)).toEqual(await charges(clean))
    const again = await run(clean, ['charges', 'import', file, '--json'])
    expect(again.json).toMatchObject({inserted: 0, unchanged: ROWS, updated: 0})
  })

  it('shows a progress bar with rows and rows/s on a terminal', async () => {
    const db = await seeded()
    const file = writeTemp('p.csv', paymentsCsv(2000))
    // `script` gives the command a pseudo-terminal, as a person at a terminal has.
    const cmd = `${process.execPath} ${join(ROOT, 'bin', 'run.js')} charges import ${file} --db ${db}`
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {encoding: 'utf8', env: {...process.env, CI: '', NODE_ENV: undefined} as NodeJS.ProcessEnv})
    if (r.error) return // no `script` on this machine
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/charges import \[[█░]+\] 100% \| 2000 rows \| \d+ rows\/s/)
    expect(r.stdout).toContain('2000 inserted')
  })

  it('prints nothing but the JSON summary under --json', async () => {
    const db = await seeded()
    const file = writeTemp('p.csv', paymentsCsv(100))
    const r = await withEnv({PRICECTL_PROGRESS_INTERVAL_MS: '0'}, () => run(db, ['charges', 'import', file, '--json']))
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.json).toMatchObject({inserted: 100, success: true})
  })
})
