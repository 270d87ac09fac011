import {Writable} from 'node:stream'
import {beforeAll, describe, expect, it} from 'vitest'

import {batchPricer, priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice, calculatePriceSync, NEEDS_WRITE, type Trace} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import type {PriceResult} from '../../src/schemas/price.js'
import {batchInput, copyOf, experimentStore, written} from '../helpers/pricing-store.js'
import {readsWhilePricing, recordedStore} from '../helpers/recorded-store.js'
import {at} from '../helpers/segments-fixtures.js'

/**
 * The price calculation reads the store only when a chunk of requests begins and writes only
 * at the chunk's flush (docs/pricing.md "Storage"): a real SQLite store's repositories record
 * every call with the phase it was made in, and no call is made while a chunk is priced:
 * batches (with a running experiment, new, repeated, adopting and locked users), a single
 * price, and `price explain`.
 */
const NOW = '2026-03-01T00:00:00Z'
let fixture: string

beforeAll(async () => {
  // Thompson (the default): assignment reads posteriors; a USD arm converts (an "fx" step in explain).
  fixture = await experimentStore({arms: [{multiplier: 0.8}, {usd_price: 12}], name: 'chunks', products: ['basic'], seed: 3})
}, 60_000)

async /*A*/ function open(path: string) {
  const real = openStore(path)
  const rec = recordedStore(real)
  const ctx = await PricingContext.open(rec.store)
  rec.phases(ctx)
  return {...rec, close: async /*A*/ () => await real.close(), ctx}
}

/** New users, a user twice in a row (one chunk would read what it wrote), an anonymous IP and the user who adopts it, an override, users out of the experiment. */
function requests(n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < n; i++) {
    if (i % 10 === 3) out.push({country: 'FR', override: true, products: ['basic'], user_id: `u-${i - 1}`})
    else if (i % 10 === 5) out.push({ip: `10.0.0.${i % 250}`, products: ['basic']})
    else if (i % 10 === 6) out.push({ip: `10.0.0.${(i - 1) % 250}`, products: ['basic'], user_id: `a-${i}`})
    else if (i % 10 === 8) out.push({country: 'US', products: ['basic'], run_experiment: false, user_id: `u-${i}`})
    else out.push({country: ['FR', 'DE', 'US', 'JP'][i % 4], products: ['basic', 'yearly'], user_id: `u-${i}`})
  }
  return out
}

describe('pricing reads the store when a chunk begins and writes at its flush', () => {
  it('a batch with a running experiment: no repository call while a chunk is priced, one flush per chunk', async () => {
    const path = copyOf(fixture)
    const {calls, close, ctx} = await open(path)
    const results: PriceResult[] = []
    try {
      await at(NOW, async () => {
        const pricer = batchPricer(ctx, {batchSize: 100, chunkSize: 20}, {failure: (line, message) => expect.fail(`line ${line}: ${message}`), result: (_line, r) => results.push(r)})
        // The same requests twice: the second time every user is locked (the anonymous IPs were adopted: new again).
        const reqs = [...requests(60), ...requests(60)]
        for (const [i, r] of reqs.entries()) await pricer.handle(i + 1, r)
        await pricer.finish()
        expect(pricer.summary).toEqual({failed: 0, priced: 120, read: 120})
      })
    } finally {
      await close()
    }
    const seen = readsWhilePricing(calls)
    expect(seen.duringCalculation).toEqual([])
    expect(seen.flushesPerBegin.every((n) => n === 1)).toBe(true)
    // The recorder sees the reads and writes it should: locks, exposures and the arm counts.
    const methods = new Set(calls.map((c) => `${c.phase} ${c.method}`))
    for (const m of ['begin pricing.loadLocks', 'begin experiments.exposuresOf', 'begin experiments.armCounts', 'flush pricing.saveQuotes', 'flush experiments.recordExposures', 'flush experiments.adoptExposures']) expect(methods, m).toContain(m)
    // One exposure per exposed user, on the arm of the user's lock.
    const {exposures, locks} = written(path)
    const exposed = locks.filter((l) => Number(l.experiment_id) !== 0)
    expect(exposed.length).toBeGreaterThan(10)
    expect(exposures.map((x) => `${x.user_id} ${x.arm_id}`).sort()).toEqual(exposed.map((l) => `${l.lock_key} ${l.arm_id}`).sort())
  })

  it('JSONL batches of locked users (fingerprints and printed lines) read nothing while a chunk is priced', async () => {
    const reqs = requests(80).filter((r) => r.user_id !== undefined && r.ip === undefined && r.override === undefined)
    const {file, out, path} = batchInput(fixture, reqs)
    const discard = new Writable({write: (_c, _e, done) => done()})
    // New users first, then the same requests again (locked: read as fingerprints), and again with one product less (their lines differ).
    await at(NOW, async () => {
      const first = await open(path)
      try {
        await priceBatch(first.ctx, file, out, {chunkSize: 16, output: 'jsonl'})
      } finally {
        await first.close()
      }
      for (const variant of [reqs, reqs.map((r) => ({...r, products: ['basic']}))]) {
        const again = batchInput(fixture, variant)
        const {calls, close, ctx} = await open(path)
        try {
          const summary = await priceBatch(ctx, again.file, discard, {chunkSize: 16, output: 'jsonl'})
          expect(summary.failed).toBe(0)
        } finally {
          await close()
        }
        expect(readsWhilePricing(calls).duringCalculation).toEqual([])
        expect(calls.some((c) => c.phase === 'begin' && c.method === 'pricing.loadLockFingerprints')).toBe(true)
      }
    })
  })

  it('a single price, new and locked, and in an experiment: its reads before, its writes at the flush', async () => {
    const path = copyOf(fixture)
    const {calls, close, ctx} = await open(path)
    try {
      await at(NOW, async () => {
        for (const r of [{country: 'FR', products: ['basic'], user_id: 'single'}, {products: ['basic'], user_id: 'single'}, {ip: '10.1.1.1', products: ['basic']}, {ip: '10.1.1.2', products: ['basic']}]) {
          await calculatePrice(ctx, r)
        }
        // The server's first attempt answers from stored locks only: a new user and an adoption need the write one.
        for (const r of [{country: 'DE', products: ['basic'], user_id: 'served'}, {get_ip_from_request: true, products: ['basic'], user_id: 'adopter'}]) {
          await expect(async /*A*/ () => await calculatePriceSync(ctx, r, {readOnly: true, requestIp: '10.1.1.2'})).rejects.toThrow(NEEDS_WRITE)
          await calculatePriceSync(ctx, r, {requestIp: '10.1.1.2'})
        }
      })
    } finally {
      await close()
    }
    const seen = readsWhilePricing(calls)
    expect(seen.duringCalculation).toEqual([])
    expect(seen.flushesPerBegin).toEqual([1, 1, 1, 1, 0, 1, 0, 1])
  })

  it('price explain: the rate notes are read before the chunk, none while it is priced', async () => {
    const path = copyOf(fixture)
    const {calls, close, ctx} = await open(path)
    const trace: Trace = []
    try {
      await at(NOW, () => calculatePrice(ctx, {country: 'FR', products: ['basic', 'yearly'], user_id: 'explained'}, {trace}))
    } finally {
      await close()
    }
    expect(readsWhilePricing(calls).duringCalculation).toEqual([])
    // The note names the operator's rate and what it outranks, as read from the store.
    const fx = trace!.find((s) => s.step === 'fx EUR')
    expect(fx?.detail).toMatch(/outranks the bundled snapshot/)
    expect(calls.some((c) => c.phase === 'outside' && c.method === 'config.nextOperatorRate')).toBe(true)
  })
})
