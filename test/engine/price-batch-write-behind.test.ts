import {beforeAll, describe, expect, it} from 'vitest'

import {batchPricer, priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {calculatePrice} from '../../src/pricing/price.js'
import {openStore} from '../../src/store/db.js'
import type {SqliteStore} from '../../src/store/sqlite/store.js'
import {batchInput, copyOf, written} from '../helpers/pricing-store.js'
import {tempStore} from '../helpers/run.js'
import {at, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * Write-behind (src/store/sqlite/write-behind.ts): from the first full group of new users on,
 * a batch's lock and user rows are written by a second thread while the next group is
 * priced. Results and the store must be those of the usual way (one write transaction per
 * group), whether write-behind runs to the end (users met again in a later group, users
 * without a country) or ends midway (an anonymous IP, a user twice in one group), and a
 * lock another connection writes between two groups must win as it does without it.
 */
const NOW = '2026-03-01T00:00:00Z'
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP']
const N = 12_000
const IP = '198.51.100.23'

let fixture: string

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
}, 60_000)



/**
 * New users, some without a country (a stored country is read), some met again in a later
 * group (locked, or overridden), none twice in one group: odd users are overridden, even
 * ones met again.
 */
function requests(extra: (i: number) => Record<string, unknown> | undefined = () => undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < N; i++) {
    const own = extra(i)
    if (own) out.push(own)
    else if (i >= 6000 && i % 97 === 0 && i % 2 === 1) out.push({country: 'JP', override: true, products: ['basic'], user_id: `u-${i - 5500}`})
    else if (i >= 6000 && i % 89 === 0 && i % 2 === 0) out.push({products: ['basic', 'yearly'], user_id: `u-${i - 6000}`})
    else if (i % 13 === 0) out.push({products: ['basic'], user_id: `u-${i}`})
    else out.push({country: COUNTRIES[i % COUNTRIES.length], products: ['basic', 'yearly'], user_id: `u-${i}`})
  }
  return out
}

/** priceBatch on a copy of the fixture; how often write-behind started, and how many groups it committed. */
async function batch(reqs: Record<string, unknown>[], batchSize?: number): Promise<{behind: number; commits: number; lines: string[]; path: string}> {
  const {file, lines, out, path} = batchInput(fixture, reqs)
  const store = openStore(path) as SqliteStore
  let behind = 0
  let commits = 0
  const pricing = store.pricing
  const start = pricing.writeBehind.bind(pricing)
  pricing.writeBehind = (requests: number) => {
    const handle = start(requests)
    if (!handle) return handle
    behind++
    return {
      ...handle,
      commit() {
        commits++
        return handle.commit()
      },
    }
  }
  try {
    await at(NOW, () => priceBatch(new PricingContext(store), file, out, {batchSize, output: 'jsonl'}))
  } finally {
    store.close()
  }
  return {behind, commits, lines: lines(), path}
}

describe('batch pricing with write-behind', () => {
  it('gives the results and the store of the usual way, write-behind running to the end or ending midway', async () => {
    // Groups of 4,999: write-behind does not start (its groups are 5,000 and more).
    // [case, requests, groups write-behind commits before it ends]: the first group is
    // priced the usual way while the writer starts.
    const cases: [string, Record<string, unknown>[], number][] = [
      ['new users, some met again in later groups', requests(), 2],
      // Read as lock fingerprints (price.ts priceLine) while their group may be uncommitted.
      ['users of the second group met again in the third', requests((i) => (i === 10_100 ? {country: 'DE', products: ['basic'], user_id: 'u-5100'} : i === 10_200 ? {products: ['basic', 'yearly'], user_id: 'u-5201'} : undefined)), 2],
      ['an anonymous visitor (a lock by IP)', requests((i) => (i === 7000 ? {country: 'GB', ip: IP, products: ['basic']} : undefined)), 2],
      ['a user arriving from that IP in the second group', requests((i) => (i === 700 ? {country: 'GB', ip: IP, products: ['basic']} : i === 7000 ? {ip: IP, products: ['basic'], user_id: 'u-7000'} : undefined)), 0],
      ['a new user twice in the third group', requests((i) => (i === 10_500 ? {country: 'FR', products: ['basic'], user_id: 'u-10400'} : undefined)), 1],
    ]
    for (const [name, reqs, commits] of cases) {
      const usual = await batch(reqs, 4999)
      expect(usual.behind, name).toBe(0)
      expect(usual.lines, name).toHaveLength(N)
      const behind = await batch(reqs)
      expect(behind.behind, name).toBe(1)
      expect(behind.commits, name).toBe(commits)
      expect(behind.lines, name).toEqual(usual.lines)
      expect(written(behind.path), name).toEqual(written(usual.path))
    }
  }, 240_000)

  it('a lock another connection writes between two groups wins, as without write-behind', async () => {
    const path = copyOf(fixture)
    const reqs = requests()
    const store = openStore(path)
    const lines: string[] = []
    const other = openStore(path)
    try {
      const ctx = new PricingContext(store)
      let groups = 0
      await at(NOW, async () => {
        const pricer = batchPricer(ctx, {batchSize: 5000, chunkSize: 512}, {
          async drain() {
            // After the second group (the first written behind): another connection quotes a user of the third.
            if (++groups === 2) await calculatePrice(new PricingContext(other), {country: 'JP', products: ['basic'], user_id: 'u-10001'})
          },
          failure: (line, message) => lines.push(`${line} ${message}`),
          result: (_line, result) => lines.push(JSON.stringify(result)),
        })
        for (const [i, r] of reqs.entries()) await pricer.handle(i + 1, r)
        await pricer.finish()
        expect(pricer.summary).toEqual({failed: 0, priced: N, read: N})
      })
    } finally {
      other.close()
      store.close()
    }
    expect(lines).toHaveLength(N)
    // The request asked for BR; the lock the other connection wrote first (JP) is reused.
    expect(reqs[10_001]).toMatchObject({country: 'BR', user_id: 'u-10001'})
    expect(JSON.parse(lines[10_001])).toMatchObject({country: 'JP', user_id: 'u-10001'})
    const locks = written(path).locks.filter((l) => l.lock_key === 'u-10001')
    expect(locks).toHaveLength(1)
    expect(locks[0]).toMatchObject({country: 'JP'})
  }, 120_000)
})
