import {mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {book, rng, shuffle, writeBook} from '../helpers/revenue-book.js'
import {runArgs, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * "A book imported in any order of files and rows gives identical reports" (issue 29): a
 * synthetic book (test/helpers/revenue-book.ts: trials converted or not, plan changes in
 * place, scheduled and done cancellations, unpaid subscriptions, refunds and lost disputes
 * re-exported with the same dates) exported month after month in three layouts, imported
 * file by file in export order, then in shuffled orders of its files and of the rows within
 * them (all files in one command), gives the same records and the same reports.
 */

const WINDOW = ['--since', '2025-11-01', '--until', '2026-07-31']

async function importAll(db: string, kind: 'charges' | 'subscriptions', paths: string[], together: boolean): Promise<void> {
  const batches = together ? [paths] : paths.map((p) => [p])
  for (const files of batches) {
    const r = await runArgs(db, [kind, 'import', ...files, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rejected, JSON.stringify(r.json.rejected_by_reason)).toBe(0)
  }
}

/** Everything a reader of the store sees: records and every report. */
async function outputs(db: string): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, args] of Object.entries({
    charges: ['charges', 'list', '--limit', '0', '--json'],
    cohorts: ['revenue', 'cohorts', ...WINDOW, '--json'],
    country: ['revenue', 'report', ...WINDOW, '--by', 'country', '--json'],
    month: ['revenue', 'report', ...WINDOW, '--json'],
    product: ['revenue', 'report', ...WINDOW, '--by', 'product', '--json'],
    subscriptions: ['subscriptions', 'list', '--limit', '0', '--json'],
    week: ['revenue', 'report', '--since', '2026-02-01', '--until', '2026-03-31', '--by', 'week', '--json'],
  })) {
    const r = await runArgs(db, args)
    expect(r.code, r.stderr).toBe(0)
    out[name] = r.json
  }
  return out
}

describe('a book imported in any order gives identical reports', () => {
  it('files and rows in export order, then shuffled two ways', async () => {
    process.env.PRICECTL_NOW = '2026-07-15'
    const runs: unknown[] = []
    for (const seed of [0, 11, 23]) {
      const dir = join(tempDir(), `order-${seed}`)
      mkdirSync(dir)
      const next = seed === 0 ? undefined : rng(seed)
      const b = book(7, 36, next)
      const order = <T>(files: T[]) => (next ? shuffle(files, next) : files)
      const db = tempStore()
      await withStore(db, seedCatalog)
      // Seed 0: file by file in export order (one file a command); the others: shuffled files in one command.
      const together = seed !== 0
      await importAll(db, 'subscriptions', writeBook(dir, order(b.subscriptions)), together)
      await importAll(db, 'charges', writeBook(dir, order(b.charges)), together)
      runs.push(await outputs(db))
    }
    const [first, ...rest] = runs as {month: {rows: {mrr: number}[]; totals: Record<string, number>}}[]
    // The book has something to compare: MRR, churn, trials that never paid, refunds.
    expect(first.month.totals.mrr).toBeGreaterThan(0)
    expect(first.month.totals.churned_subscriptions).toBeGreaterThan(0)
    expect(first.month.totals.expansion_mrr + first.month.totals.contraction_mrr).toBeGreaterThan(0)
    for (const r of rest) expect(r).toEqual(first)
  }, 300_000)
})
