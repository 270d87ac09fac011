import {describe, expect, it} from 'vitest'

import type {PgDatabase} from '../helpers/postgres.js'
import {run} from '../helpers/run.js'
import {PAYMENTS_HEADER} from './generate.js'
import {fixtureExpected, startBin, tempDir, write} from './helpers.js'
import {pgRevenueDump, pgStoreWithProducts} from './pg-helpers.js'

/**
 * Issue 18, item 3: event order holds under concurrent writers on PostgreSQL. Two
 * `charges import` runs of exports of the same charges start at once (small batches, so
 * they interleave), each newer for half of the charges, while single `charges create`
 * writes with later events land in between: every charge ends as its newest event says,
 * exactly as the same writes one after the other (those run in-process: the reference is
 * not what is tested).
 */

const NOW = fixtureExpected().now
const N = 4000

/** An export of the N charges: `newerWhen(i)` rows dated Jan 2 (a later event), the others Jan 1. */
function exportOf(amount: string, newerWhen: (i: number) => boolean): string {
  const lines = [PAYMENTS_HEADER]
  for (let i = 0; i < N; i++) {
    const day = newerWhen(i) ? '2026-01-02' : '2026-01-01'
    lines.push(`ch_${String(i).padStart(6, '0')},${day} 10:00:00,${amount},0.00,usd,Paid,cus_${i},Pro plan,u_${i},prod_pro`)
  }
  return lines.join('\n') + '\n'
}

/**
 * Single writes with a later event than any export row (creates: they land whether an
 * import wrote the charge yet or not): they must survive both imports.
 */
const WRITES = [7, 1999, 3998].map((i) => [
  'charges', 'create', '--user-id', `u_${i}`, '--origin', 'gateway_a', '--origin-id', `ch_${String(i).padStart(6, '0')}`, '--product', 'prod_pro',
  '--amount', '30.00', '--currency', 'USD', '--status', 'failed', '--created', '2026-01-01', '--event-timestamp', '2026-02-01T00:00:00Z', '--event-id', `evt_late_${i}`,
])

describe('PostgreSQL: event order under concurrent writers', () => {
  it('two imports of the same charges at once, with single writes in between, end as the newest event of each', async () => {
    const dir = tempDir('pricectl-pgconc-')
    const a = write(dir, 'a.csv', exportOf('10.00', (i) => i % 2 === 1))
    const b = write(dir, 'b.csv', exportOf('20.00', (i) => i % 2 === 0))
    const env = (db: PgDatabase) => ({PRICECTL_DB: db.url, PRICECTL_NOW: NOW})
    const importArgs = (db: PgDatabase, file: string) => ['charges', 'import', file, '--batch-size', '300', '--rejects', `${file}.${db.name}.rejects.csv`]
    const importOf = (db: PgDatabase, file: string) => startBin(importArgs(db, file), {env: env(db)}).done
    const dbs: PgDatabase[] = []
    try {
      // One after the other: the reference.
      const serial = await pgStoreWithProducts()
      dbs.push(serial)
      process.env.PRICECTL_NOW = NOW
      for (const args of [importArgs(serial, a), importArgs(serial, b), ...WRITES]) {
        const r = await run(serial.url, args)
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
      }
      const expected = await pgRevenueDump(serial.url)
      expect(expected.counts.charges).toBe(N)
      const amounts = new Map(expected.charges.map((c) => [c.origin_id, c.amount_minor]))
      expect(amounts.get('ch_000000')).toBe(2000) // b's row is the newer one for even i
      expect(amounts.get('ch_000001')).toBe(1000)
      expect(expected.charges.filter((c) => c.status === 'failed').map((c) => c.origin_id)).toEqual(['ch_001999', 'ch_003998', 'ch_000007'])

      // All at once: both imports started together, the single writes while they run.
      const together = await pgStoreWithProducts()
      dbs.push(together)
      const imports = [importOf(together, a), importOf(together, b)]
      await new Promise((r) => setTimeout(r, 1500))
      const updates = WRITES.map((u) => startBin(u, {env: env(together)}).done)
      const results = await Promise.all([...imports, ...updates])
      for (const [i, r] of results.entries()) expect(r.code, `${i < 2 ? `import ${i + 1}` : WRITES[i - 2].join(' ')}: ${r.stderr}`).toBe(0)
      const got = await pgRevenueDump(together.url)
      expect(got.counts).toEqual(expected.counts)
      expect(got.charges).toEqual(expected.charges)
    } finally {
      for (const db of dbs) await db.drop()
    }
  }, 240_000)
})
