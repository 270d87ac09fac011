import {spawn} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eSeeded, tableCount, tableRows} from '../helpers/e2e.js'
import {paymentsCsv, seedCatalog, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {ROOT, run, withEnv} from '../helpers/run.js'
import {onTerminal} from '../helpers/terminal.js'

/**
 * Ctrl-C (SIGINT) or SIGTERM during a `charges import` (issue 32, item 8): the import stops
 * between two batches, the terminal the progress bar changed is restored (cursor shown,
 * line wrap on), "interrupted: N rows committed; ..." names the rows the store holds, no
 * temporary file is left beside the rejects, and the same command again ends in the store
 * of an uninterrupted run. The moment is picked from the progress the command prints, not
 * from a pause.
 */

const ROWS = 20_000
const BATCH = 500
/** One row in this many has an amount that is not a number: rejected, so a rejects file is being written when the signal comes. */
const BAD_EVERY = 997

const HIDE_CURSOR = '\u001B[?25l'
const SHOW_CURSOR = '\u001B[?25h'
const WRAP_OFF = '\u001B[?7l'
const WRAP_ON = '\u001B[?7h'
const INTERRUPTED = /interrupted: (\d+) rows? committed; run the same command again to continue/

/** The payments export with a bad amount every BAD_EVERY rows. */
function exportWithRejects(): string {
  const lines = paymentsCsv(ROWS).split('\n')
  for (let i = BAD_EVERY; i < lines.length; i += BAD_EVERY) {
    const cells = lines[i].split(',')
    cells[2] = 'not-a-number'
    lines[i] = cells.join(',')
  }
  return writeTemp('payments.csv', lines.join('\n'))
}

const seeded = () => e2eSeeded('revenue catalog', async (file) => await withStore(file, seedCatalog))

async function charges(db: string): Promise<unknown[]> {
  const key = (r: Record<string, unknown>) => JSON.stringify([r.user_id, r.origin, r.origin_id])
  return (await tableRows(db, 'charges'))
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .map(({id: _id, ...rest}) => rest)
}

/** Temporary files (*.tmp, stage folders) left beside the export and its rejects. */
function leftovers(file: string): string[] {
  return readdirSync(dirname(file)).filter((f) => f.endsWith('.tmp') || f.includes('.tmp') || f.startsWith('pricectl-import-'))
}

/** The store after the same import, uninterrupted, into a new store. */
async function uninterrupted(file: string): Promise<unknown[]> {
  const clean = await seeded()
  await withEnv({PRICECTL_IMPORT_BATCH: String(BATCH)}, () => run(clean, ['charges', 'import', file, '--rejects', join(dirname(file), 'clean.rejects.csv')]))
  return await charges(clean)
}

/** Check the store, run the same import again, and compare with an uninterrupted run. */
async function resumesToTheSameStore(db: string, file: string, committed: number): Promise<void> {
  const check = await run(db, ['db', 'check', '--json'])
  expect(check.code).toBe(0)
  expect(check.json).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true})
  const bad = Math.floor(ROWS / BAD_EVERY)
  const again = await withEnv({PRICECTL_IMPORT_BATCH: String(BATCH)}, () => run(db, ['charges', 'import', file, '--json']))
  // The bad rows are rejected again (exit 1, after the summary); every other row is in.
  expect(again.code, again.stdout + again.stderr).toBe(1)
  expect(again.json).toMatchObject({inserted: ROWS - bad - committed, read: ROWS, rejected: bad, unchanged: committed, updated: 0})
  expect(await charges(db)).toEqual(await uninterrupted(file))
}

describe('an import interrupted by a signal (bin/run.js)', () => {
  it('Ctrl-C on a terminal: exit 130, terminal restored, "interrupted: N rows committed", no temporary file, the same command again completes', async () => {
    const file = exportWithRejects()
    const db = await seeded()
    // Ctrl-C as soon as the bar shows at least 2,000 rows read: a few batches are committed, most of the file is not.
    const r = await onTerminal(['charges', 'import', file, '--db', db], [{after: /\| [2-9]\d{3} rows/, keys: '\u0003'}], {
      env: {NODE_ENV: undefined, PRICECTL_DB: undefined, PRICECTL_IMPORT_BATCH: String(BATCH)},
    })
    expect(r.code, r.output).toBe(130)
    // The bar hid the cursor and turned wrap off; both are back on after the last time it did.
    expect(r.output).toContain(HIDE_CURSOR)
    expect(r.output.lastIndexOf(SHOW_CURSOR), r.output).toBeGreaterThan(r.output.lastIndexOf(HIDE_CURSOR))
    expect(r.output).toContain(WRAP_OFF)
    expect(r.output.lastIndexOf(WRAP_ON), r.output).toBeGreaterThan(r.output.lastIndexOf(WRAP_OFF))
    const said = INTERRUPTED.exec(r.output)
    expect(said, r.output).not.toBeNull()
    const committed = Number(said![1])
    expect(committed).toBe(await tableCount(db, 'charges'))
    expect(committed).toBeGreaterThan(0)
    expect(committed).toBeLessThan(ROWS - Math.floor(ROWS / BAD_EVERY))
    expect(leftovers(file)).toEqual([])
    // The rejects of the committed batches are in place (the rest come with the next run). The
    // first bad row is row BAD_EVERY: when the signal came before its batch committed (only the
    // first BATCH rows in), no row has been rejected yet and there is no rejects file either.
    if (committed >= BAD_EVERY - 1) expect(readFileSync(`${file}.rejects.csv`, 'utf8')).toMatch(/^line,reason,/)
    else expect(existsSync(`${file}.rejects.csv`)).toBe(false)
    await resumesToTheSameStore(db, file, committed)
  }, 180_000)

  it('SIGTERM without a terminal: exit 143, "interrupted: N rows committed", no temporary file, the same command again completes', async () => {
    const file = exportWithRejects()
    const db = await seeded()
    const r = await new Promise<{code: null | number; signal: NodeJS.Signals | null; stderr: string}>((resolve, reject) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'charges', 'import', file], {
        cwd: ROOT,
        env: {...process.env, NODE_ENV: undefined, PRICECTL_DB: db, PRICECTL_IMPORT_BATCH: String(BATCH), PRICECTL_PROGRESS_INTERVAL_MS: '0'} as NodeJS.ProcessEnv,
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      let stderr = ''
      let sent = false
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString()
        // "charges import: 2000 rows read (...)": a few batches are committed.
        if (!sent && /: [2-9]\d{3} rows read/.test(stderr)) {
          sent = true
          child.kill('SIGTERM')
        }
      })
      child.on('error', reject)
      child.on('exit', (code, signal) => resolve({code, signal, stderr}))
    })
    expect(r.signal, r.stderr).toBeNull()
    expect(r.code, r.stderr).toBe(143)
    const said = INTERRUPTED.exec(r.stderr)
    expect(said, r.stderr).not.toBeNull()
    const committed = Number(said![1])
    expect(committed).toBe(await tableCount(db, 'charges'))
    expect(committed).toBeGreaterThan(0)
    expect(leftovers(file)).toEqual([])
    await resumesToTheSameStore(db, file, committed)
  }, 180_000)
})
