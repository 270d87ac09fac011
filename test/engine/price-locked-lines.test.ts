import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Writable} from 'node:stream'
import fc from 'fast-check'
import {beforeAll, describe, expect, it} from 'vitest'

import {batchPricer, CHUNK_SIZE, priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {type JsonSink, writePriceLine} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import {copyOf, written} from '../helpers/pricing-store.js'
import {run, tempStore} from '../helpers/run.js'
import {at, coupon, must, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * `price --input` prints a locked user's line again by the lock's fingerprint
 * (src/pricing/price.ts priceLine) instead of calculating it. Whatever the requests (coupons,
 * overrides, gateways, IPs, packages, experiment arms, invalid ones) and the clock (a locked
 * coupon expired since), its lines and what it writes must be exactly those of the
 * calculation itself (the batch pricer without the JSONL sink: priceRequest, then
 * writePriceLine).
 */
const NOW = '2026-03-01T00:00:00Z'
/** Past the OLD coupon's end. */
const LATER = '2026-06-01T00:00:00Z'
const IP = '198.51.100.23'

let fixture: string

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
  await must(fixture, ['coupons', 'create'], coupon('TEN', {coupon_type: 'percentage', value: 10}))
  await must(fixture, ['coupons', 'create'], coupon('OLD', {active_till: '2026-04-01', coupon_type: 'percentage', value: 20}))
  await must(fixture, ['audiences', 'create'], {api_id: 'dach', name: 'DACH', priority: 2, rules: ['country in AT,CH']})
  await must(fixture, ['campaigns', 'create'], {api_id: 'dach_sale', audience: 'dach', coupon: 'TEN', name: 'Sale'})
  await must(fixture, ['packages', 'create'], {api_id: 'starter', countries: ['FR', 'US'], name: 'Starter', products: ['basic', 'yearly']})
  for (const args of [
    ['experiments', 'create', '--name', 'fr test', '-p', 'basic', '--arm', 'x0.8', '--arm', 'x1.2', '--country', 'FR', '--json'],
    ['experiments', 'start', '1', '--json'],
  ]) {
    const r = await run(fixture, args)
    if (r.code !== 0) throw new Error(`${args.join(' ')} failed: ${r.stdout} ${r.stderr}`)
  }
}, 120_000)



/** The requests through the batch pricer: with the JSONL sink (fast lines) or without (each result calculated, then written). */
async function price(path: string, requests: unknown[], fast: boolean, chunkSize: number, then?: string): Promise<string> {
  const parts: string[] = []
  const sink: JsonSink = {bytes: (b) => parts.push(b.toString('utf8')), text: (s) => parts.push(s)}
  const store = openStore(path)
  try {
    const ctx = await PricingContext.open(store)
    const pricer = batchPricer(ctx, {batchSize: 7, chunkSize}, {
      // The clock moves between groups of requests (a long batch), maybe past OLD's end.
      drain() {
        if (then !== undefined) process.env.PRICECTL_NOW = then
        return undefined
      },
      failure: (line, message) => parts.push(JSON.stringify({line, message, success: false}) + '\n'),
      jsonl: fast ? {sink, written: () => {}} : undefined,
      result: (_line, result) => writePriceLine(result, sink),
    })
    for (const [i, r] of requests.entries()) {
      const waiting = pricer.handle(i + 1, r)
      if (waiting) await waiting
    }
    await pricer.finish()
  } finally {
    await store.close()
  }
  return parts.join('')
}

const option = <T>(a: fc.Arbitrary<T>) => fc.option(a, {nil: undefined})

const request = fc
  .record(
    {
      country: option(fc.constantFrom('DE', 'FR', 'JP', 'US', 'AT', 'nope')),
      coupons: option(fc.constantFrom({basic: 'TEN'}, {basic: 'OLD'}, {yearly: 'OLD'}, {basic: 'NONE'})),
      currency: option(fc.constantFrom('EUR', 'JPY', 'USD')),
      features: option(fc.constant({plan: 'x'})),
      integrations: option(fc.subarray(['gateway_a', 'gateway_b', 'gateway_d'])),
      ip: option(fc.constantFrom(IP, '203.0.113.7')),
      override: option(fc.boolean()),
      override_currency: option(fc.boolean()),
      package_id: option(fc.constantFrom('starter', 'missing')),
      products: option(fc.oneof(fc.subarray(['basic', 'yearly', 'lifetime']), fc.constant(['basic', 'no_such']), fc.constant(['yearly', 'basic']))),
      run_experiment: option(fc.boolean()),
      user_id: option(fc.constantFrom('u0', 'u1', 'u2', 'u3', 'u4', 'u5')),
    },
    {requiredKeys: []},
  )
  .map((r) => {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v
    return out
  })

/** Mostly the common shape of a locked user's request (what the fast lines are for), sometimes anything. */
const plain = fc.record({
  country: option(fc.constantFrom('DE', 'FR', 'JP', 'US', 'AT')),
  integrations: option(fc.subarray(['gateway_a', 'gateway_d'])),
  products: option(fc.constantFrom(['basic'], ['basic', 'yearly'], ['yearly', 'basic'], [] as string[])),
  user_id: fc.constantFrom('u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7'),
}).map((r) => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v
  return out
})

describe('locked lines printed by fingerprint', () => {
  it('equal the calculation: lines and writes, new and locked runs, any requests, chunk size and clock', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({arbitrary: plain, weight: 3}, {arbitrary: request, weight: 1}), {maxLength: 30, minLength: 1}),
        fc.array(fc.oneof({arbitrary: plain, weight: 3}, {arbitrary: request, weight: 1}), {maxLength: 30}),
        fc.constantFrom(1, 3, CHUNK_SIZE),
        fc.constantFrom(NOW, LATER),
        async (first, more, chunkSize, later) => {
          // The first run makes locks; the second repeats it (every user locked) with more requests, its later groups maybe after OLD ended.
          const second = [...first, ...more, ...first]
          const outs: string[][] = []
          const stores: unknown[] = []
          for (const fast of [false, true]) {
            const path = copyOf(fixture)
            const a = await at(NOW, () => price(path, first, fast, chunkSize))
            const b = await at(NOW, () => price(path, second, fast, chunkSize, later))
            outs.push([a, b])
            stores.push(written(path))
          }
          expect(outs[1]).toEqual(outs[0])
          expect(stores[1]).toEqual(stores[0])
        },
      ),
      {
        examples: [
          // A locked coupon shown in the first group of the locked run, expired by the next one.
          [[{coupons: {basic: 'OLD'}, country: 'US', products: ['basic'], user_id: 'u1'}], Array.from({length: 8}, () => ({country: 'US', products: ['basic'], user_id: 'u1'})), 3, LATER],
          // Two users of one quote, one then asking for a product its lock lacks, another for gateways.
          [
            [{country: 'DE', products: ['basic'], user_id: 'u1'}, {country: 'DE', products: ['basic'], user_id: 'u2'}],
            [{country: 'DE', products: ['basic', 'yearly'], user_id: 'u1'}, {integrations: ['gateway_d'], products: ['basic'], user_id: 'u2'}, {products: ['basic'], user_id: 'u1'}],
            CHUNK_SIZE,
            NOW,
          ],
        ],
        numRuns: 40,
      },
    )
  }, 300_000)

  it('price --input run twice on one store (the bench): the locked run prints what the calculation prints', async () => {
    const path = copyOf(fixture)
    const file = join(dirname(path), 'requests.jsonl')
    const countries = ['US', 'DE', 'FR', 'GB', 'JP', 'AT']
    const requests = Array.from({length: 300}, (_, i) => ({country: countries[i % countries.length], integrations: ['gateway_a'], products: ['basic', 'yearly'], user_id: `user-${i % 250}`}))
    writeFileSync(file, requests.map((r) => JSON.stringify(r)).join('\n') + '\n')
    const batch = async (): Promise<string> => {
      let text = ''
      const out = new Writable({
        write(chunk: Buffer, _encoding, done) {
          text += chunk.toString('utf8')
          done()
        },
      })
      const store = openStore(path)
      try {
        await at(NOW, async () => priceBatch(await PricingContext.open(store), file, out, {chunkSize: 64, output: 'jsonl'}))
      } finally {
        await store.close()
      }
      return text
    }
    const fresh = await batch()
    const locked = await batch()
    const reference = copyOf(fixture)
    expect(await at(NOW, () => price(reference, requests, false, 64))).toBe(fresh)
    expect(await at(NOW, () => price(reference, requests, false, 64))).toBe(locked)
    expect(locked).toBe(fresh)
  }, 60_000)
})
