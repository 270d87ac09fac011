import {beforeAll, describe, expect, it} from 'vitest'

import {batchPricer} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice, priceInChunk, priceRequest} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import {copyOf, experimentStore, written} from '../helpers/pricing-store.js'
import {recordedStore} from '../helpers/recorded-store.js'
import {at} from '../helpers/segments-fixtures.js'

/**
 * Exposures (which visitor got which arm) are written at the flush of their chunk, with its
 * locks, once per user; a chunk that fails before its flush writes none (docs/pricing.md "Storage").
 */
const NOW = '2026-03-01T00:00:00Z'
let fixture: string

beforeAll(async () => {
  fixture = await experimentStore({arms: [{multiplier: 0.8}, {multiplier: 1.2}], name: 'exposures', products: ['basic'], seed: 5})
}, 60_000)

describe('exposures are written at the flush', () => {
  it('one write per chunk, one exposure per user, on the arm of their lock (an override that moves the arm moves it)', async () => {
    const path = copyOf(fixture)
    const real = openStore(path)
    const {calls, phases, store} = recordedStore(real)
    const sizes: number[] = []
    const record = store.experiments.recordExposures.bind(store.experiments)
    // Count the exposures each write carries (through the recording proxy: calls show the phase).
    ;(real.experiments as {recordExposures: typeof record}).recordExposures = async (x) => {
      sizes.push(x.length)
      return await record(x)
    }
    try {
      const ctx = await PricingContext.open(store)
      phases(ctx)
      await at(NOW, async () => {
        const pricer = batchPricer(ctx, {batchSize: 100, chunkSize: 25}, {failure: (line, message) => expect.fail(`line ${line}: ${message}`), result: () => undefined})
        for (let i = 0; i < 50; i++) await pricer.handle(i + 1, {country: 'US', products: ['basic'], user_id: `u-${i}`})
        // Each user again with an override: a new draw, the exposure stays one row per user.
        for (let i = 0; i < 50; i++) await pricer.handle(51 + i, {country: 'DE', override: true, products: ['basic'], user_id: `u-${i}`})
        await pricer.finish()
      })
    } finally {
      await real.close()
    }
    expect(calls.filter((c) => c.method.endsWith('recordExposure') || c.method.endsWith('recordExposures')).every((c) => c.phase === 'flush')).toBe(true)
    expect(sizes).toEqual([25, 25, 25, 25])
    const {exposures, locks} = written(path)
    expect(exposures).toHaveLength(50)
    expect(exposures.map((x) => `${x.user_id} ${x.arm_id}`).sort()).toEqual(locks.map((l) => `${l.lock_key} ${l.arm_id}`).sort())
  })

  it('a chunk that fails before its flush writes no exposure (nor lock)', async () => {
    const path = copyOf(fixture)
    const store = openStore(path)
    try {
      const ctx = await PricingContext.open(store)
      await at(NOW, async () => {
        // A single price outside any transaction: the failure comes after the quote was made.
        const boom = () => {
          throw new Error('boom')
        }
        await expect(async () => await priceRequest(ctx, {country: 'US', products: ['basic'], user_id: 'single'}, {onQuote: boom})).rejects.toThrow('boom')
        await expect(calculatePrice(ctx, {country: 'US', products: ['basic'], user_id: 'in-tx'}, {onQuote: boom})).rejects.toThrow('boom')
        // A chunk priced and closed without its flush.
        const reqs = [0, 1, 2].map((i) => ({country: 'US', products: ['basic'], user_id: `c-${i}`}))
        await ctx.chunk.begin(reqs)
        try {
          for (const r of reqs) priceInChunk(ctx, r)
        } finally {
          ctx.chunk.close()
        }
      })
      // The experiment was there to assign: the same request, flushed, writes its exposure.
      await at(NOW, () => calculatePrice(ctx, {country: 'US', products: ['basic'], user_id: 'written'}))
    } finally {
      await store.close()
    }
    const {exposures, locks} = written(path)
    expect(locks.map((l) => l.lock_key)).toEqual(['written'])
    expect(exposures.map((x) => x.user_id)).toEqual(['written'])
  })
})
