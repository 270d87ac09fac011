import {Writable} from 'node:stream'
import {beforeAll, describe, expect, it} from 'vitest'

import {batchPricer, priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice, type LockConflict, NEEDS_WRITE, priceInChunk, priceRequest, type Trace} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import type {PriceResult} from '../../src/schemas/price.js'
import {batchInput, copyOf, experimentStore, written} from '../helpers/pricing-store.js'
import {readsWhilePricing, recordedStore} from '../helpers/recorded-store.js'
import {at} from '../helpers/segments-fixtures.js'

/**
 * The price calculation reads the store only when a chunk of requests begins and writes only
 * at the chunk's flush (docs/pricing.md "Storage"): a real SQLite store's repositories record
 * every call with the phase it was made in and throw on one made while a chunk is priced:
 * batches (with a running experiment, new, repeated, adopting and locked users), a single
 * price, dry runs, `price explain`, and a chunk whose requests name a user or an IP twice
 * (answered from what the chunk read and wrote, as pricing them one by one answers).
 */
const NOW = '2026-03-01T00:00:00Z'
let fixture: string

beforeAll(async () => {
  // Thompson (the default): assignment reads posteriors; a USD arm converts (an "fx" step in explain).
  fixture = await experimentStore({arms: [{multiplier: 0.8}, {usd_price: 12}], name: 'chunks', products: ['basic'], seed: 3})
}, 60_000)

async function open(path: string) {
  const real = openStore(path)
  const rec = recordedStore(real)
  const ctx = await PricingContext.open(rec.store)
  rec.phases(ctx)
  return {...rec, close: async () => await real.close(), ctx}
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
          await expect(async () => await priceRequest(ctx, r, {readOnly: true, requestIp: '10.1.1.2'})).rejects.toThrow(NEEDS_WRITE)
          await priceRequest(ctx, r, {requestIp: '10.1.1.2'})
        }
      })
    } finally {
      await close()
    }
    const seen = readsWhilePricing(calls)
    expect(seen.duringCalculation).toEqual([])
    // A locked user's answer writes nothing: its chunk is not flushed.
    expect(seen.flushesPerBegin).toEqual([1, 0, 1, 1, 0, 1, 0, 1])
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

type Step = {at?: string; request: Record<string, unknown>}

/** Rows pricing wrote, each as text, sorted (a chunk deletes before it saves: rowids differ). */
function rows(path: string): Record<string, string[]> {
  const {exposures, locks, users} = written(path)
  const text = (rs: Record<string, unknown>[]) => rs.map((r) => JSON.stringify(r)).sort()
  return {exposures: text(exposures), locks: text(locks), users: text(users)}
}

/**
 * Price `steps` (each at its moment) on a copy of the fixture: in one chunk the caller begins
 * with all of them, or one by one (a chunk each). Each step's result or error and the lock
 * conflicts it reported (they name the lock's created_at), and the rows written.
 */
async function priceSteps(steps: Step[], how: 'one by one' | 'one chunk', posteriorTtlMs?: number) {
  const path = copyOf(fixture)
  const {calls, close, ctx} = await open(path)
  if (posteriorTtlMs !== undefined) ctx.experiments.posteriorTtlMs = posteriorTtlMs
  const out: unknown[] = []
  const before = process.env.PRICECTL_NOW
  const one = async (s: Step, inChunk = false): Promise<void> => {
    process.env.PRICECTL_NOW = s.at ?? NOW
    const conflicts: LockConflict[] = []
    const options = {onLockWins: (c: LockConflict) => conflicts.push(c)}
    try {
      out.push({conflicts, result: inChunk ? priceInChunk(ctx, s.request, options) : await priceRequest(ctx, s.request, options)})
    } catch (error) {
      out.push({error: (error as Error).message})
    }
  }
  try {
    for (const s of steps) await ctx.ready(s.request)
    if (how === 'one by one') for (const s of steps) await one(s)
    else {
      await ctx.chunk.begin(steps.map((s) => s.request))
      try {
        for (const s of steps) await one(s, true)
        await ctx.chunk.flush()
      } finally {
        ctx.chunk.close()
      }
    }
  } finally {
    if (before === undefined) delete process.env.PRICECTL_NOW
    else process.env.PRICECTL_NOW = before
    await close()
  }
  return {calls, out, rows: rows(path)}
}

const LATER = '2026-03-02T00:00:00Z'

describe('a chunk answers from memory what its requests read and wrote', () => {
  it('the same user several times in one chunk: each request sees what the one before wrote (lock, created_at kept, country)', async () => {
    const steps: Step[] = [
      {request: {country: 'FR', products: ['basic'], user_id: 'twice'}},
      // Reuses the lock and adds a product (a second save of the key: created_at kept).
      {at: LATER, request: {country: 'JP', products: ['basic', 'yearly'], user_id: 'twice'}},
      // A new quote for DE replaces it (the stored created_at stays) and stores DE as the user's country.
      {at: LATER, request: {country: 'DE', override: true, products: ['basic'], user_id: 'twice'}},
      // An override without a country takes the country stored inside the chunk.
      {at: LATER, request: {override: true, products: ['basic', 'yearly'], user_id: 'twice'}},
      {at: LATER, request: {country: 'US', products: ['basic'], user_id: 'twice'}},
    ]
    const apart = await priceSteps(steps, 'one by one')
    const together = await priceSteps(steps, 'one chunk')
    expect(together.out).toEqual(apart.out)
    expect(together.rows).toEqual(apart.rows)
    expect(readsWhilePricing(together.calls).duringCalculation).toEqual([])
    // What the steps say: the lock of the first moment, the country of the third step.
    const conflicts = (together.out as {conflicts: LockConflict[]}[]).flatMap((o) => o.conflicts)
    expect(conflicts.map((c) => `${c.country} ${c.created_at}`)).toEqual(['FR 2026-03-01T00:00:00.000Z', 'DE 2026-03-01T00:00:00.000Z'])
  })

  it('an anonymous IP lock adopted in the same chunk, the IP priced anew and adopted again: as one by one, exposures included', async () => {
    const steps: Step[] = [
      {request: {ip: '10.9.9.9', products: ['basic']}},
      {request: {ip: '10.9.9.9', products: ['basic', 'yearly'], user_id: 'adopter'}},
      {request: {ip: '10.9.9.9', products: ['basic']}},
      {request: {ip: '10.9.9.9', products: ['basic'], user_id: 'second'}},
      {request: {ip: '10.9.9.9', products: ['basic'], user_id: 'adopter'}},
    ]
    const apart = await priceSteps(steps, 'one by one')
    const together = await priceSteps(steps, 'one chunk')
    expect(together.out).toEqual(apart.out)
    expect(together.rows).toEqual(apart.rows)
    expect(readsWhilePricing(together.calls).duringCalculation).toEqual([])
    expect(together.rows.locks.map((l) => JSON.parse(l).lock_key).sort()).toEqual(['adopter', 'second'])
    expect(together.rows.exposures.length).toBe(2)
  })

  it('an anonymous IP lock adopted in a later chunk of a batch', async () => {
    const path = copyOf(fixture)
    const {calls, close, ctx} = await open(path)
    const results: PriceResult[] = []
    try {
      await at(NOW, async () => {
        const pricer = batchPricer(ctx, {batchSize: 10, chunkSize: 10}, {failure: (line, message) => expect.fail(`line ${line}: ${message}`), result: (_line, r) => results.push(r)})
        const reqs = [{ip: '10.8.8.8', products: ['basic']}, {country: 'FR', products: ['basic'], user_id: 'x'}, {ip: '10.8.8.8', products: ['basic'], user_id: 'later'}]
        for (const [i, r] of reqs.entries()) await pricer.handle(i + 1, r)
        await pricer.finish()
      })
    } finally {
      await close()
    }
    const seen = readsWhilePricing(calls)
    expect(seen.duringCalculation).toEqual([])
    // The adopter's request began the second chunk, after the first one's flush.
    expect(seen.flushesPerBegin).toEqual([1, 1])
    expect(results[2]).toMatchObject({country: results[0].country, products: results[0].products, user_id: 'later'})
    expect(written(path).locks.map((l) => l.lock_key).sort()).toEqual(['later', 'x'])
  })

  it('stale posteriors (posteriorTtlMs 0) are read again when each chunk begins, never while it is priced', async () => {
    const steps: Step[] = Array.from({length: 12}, (_, i) => ({request: {country: ['FR', 'DE', 'US'][i % 3], products: ['basic'], user_id: `stale-${i}`}}))
    const apart = await priceSteps(steps, 'one by one', 0)
    const together = await priceSteps(steps, 'one chunk', 0)
    for (const {calls} of [apart, together]) expect(readsWhilePricing(calls).duringCalculation).toEqual([])
    // Read again at chunk begins older than 0 ms (most of the one by one's), only then.
    const counts = (calls: typeof apart.calls) => calls.filter((c) => c.method === 'experiments.armCounts').map((c) => c.phase)
    expect(counts(apart.calls).length).toBeGreaterThan(1)
    expect(new Set(counts(apart.calls))).toEqual(new Set(['begin']))
    expect(counts(together.calls)).toEqual(['begin'])
    expect(together.out).toEqual(apart.out)
    expect(together.rows).toEqual(apart.rows)
  })

  it('dry runs, with and without explain, read nothing while priced and write nothing', async () => {
    const path = copyOf(fixture)
    const {calls, close, ctx} = await open(path)
    try {
      await at(NOW, async () => {
        await calculatePrice(ctx, {country: 'FR', products: ['basic'], user_id: 'kept'})
        for (const r of [{products: ['basic', 'yearly'], user_id: 'kept'}, {country: 'DE', override: true, products: ['basic'], user_id: 'kept'}, {country: 'JP', products: ['basic'], user_id: 'dry'}, {ip: '10.7.7.7', products: ['basic'], user_id: 'dry-ip'}]) {
          await calculatePrice(ctx, r, {dryRun: true})
          await calculatePrice(ctx, r, {dryRun: true, trace: []})
        }
      })
    } finally {
      await close()
    }
    expect(readsWhilePricing(calls).duringCalculation).toEqual([])
    expect(calls.filter((c) => c.phase === 'flush' && c.method !== 'chunk.flush').map((c) => c.method)).toEqual(['pricing.saveQuotes', 'pricing.saveUserCountries', 'experiments.recordExposures'])
    expect(written(path).locks.map((l) => l.lock_key)).toEqual(['kept'])
  })

  it('a read that begin() did not prepare is an internal error naming it, not a store read', async () => {
    const path = copyOf(fixture)
    const {calls, close, ctx} = await open(path)
    try {
      await ctx.chunk.begin([{country: 'FR', products: ['basic'], user_id: 'one'}])
      try {
        expect(() => priceInChunk(ctx, {country: 'FR', products: ['basic'], user_id: 'other'})).toThrow(/internal error: .*the lock of "other"/)
        priceInChunk(ctx, {country: 'FR', products: ['basic'], user_id: 'one'})
        // Handed out once: a second read of a key named once is a bug too.
        expect(() => priceInChunk(ctx, {country: 'FR', products: ['basic'], user_id: 'one'})).toThrow(/internal error: .*the lock of "one"/)
      } finally {
        ctx.chunk.close()
      }
    } finally {
      await close()
    }
    expect(readsWhilePricing(calls).duringCalculation).toEqual([])
  })
})
