import {beforeAll, describe, expect, it} from 'vitest'

import {batchPricer, priceBatch, WRITE_BEHIND_MIN} from '../../src/pricing/batch.js'
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
/**
 * Groups of 500 requests in chunks of 50, write-behind from groups of 500 on (the batch's
 * writeBehindMin): the default's shape (groups of 5,000, chunks of 512, WRITE_BEHIND_MIN
 * 5,000, pinned by the last test) at a tenth of its size.
 */
const GROUP = 500
const CHUNK = 50
const N = 1200
const IP = '198.51.100.23'

let fixture: string

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
}, 60_000)



/**
 * New users, some without a country (a stored country is read), some met again in a later
 * group (locked, or overridden), none twice in one group: odd users are overridden (550
 * requests later), even ones met again (600 requests later).
 */
function requests(extra: (i: number) => Record<string, unknown> | undefined = () => undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < N; i++) {
    const own = extra(i)
    if (own) out.push(own)
    else if (i >= 600 && i % 19 === 0 && i % 2 === 1) out.push({country: 'JP', override: true, products: ['basic'], user_id: `u-${i - 550}`})
    else if (i >= 600 && i % 17 === 0 && i % 2 === 0) out.push({products: ['basic', 'yearly'], user_id: `u-${i - 600}`})
    else if (i % 13 === 0) out.push({products: ['basic'], user_id: `u-${i}`})
    else out.push({country: COUNTRIES[i % COUNTRIES.length], products: ['basic', 'yearly'], user_id: `u-${i}`})
  }
  return out
}

/** priceBatch on a copy of the fixture; how often write-behind started, and how many groups it committed. */
async function batch(reqs: Record<string, unknown>[], batchSize = GROUP): Promise<{behind: number; commits: number; lines: string[]; path: string}> {
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
    await at(NOW, async () => priceBatch(await PricingContext.open(store), file, out, {batchSize, chunkSize: CHUNK, output: 'jsonl', writeBehindMin: GROUP}))
  } finally {
    await store.close()
  }
  return {behind, commits, lines: lines(), path}
}

describe('batch pricing with write-behind', () => {
  it('gives the results and the store of the usual way, write-behind running to the end or ending midway', async () => {
    // Groups of 499: write-behind does not start (its groups are 500 and more).
    // [case, requests, groups write-behind commits before it ends]: the first group is
    // priced the usual way while the writer starts.
    const cases: [string, Record<string, unknown>[], number][] = [
      ['new users, some met again in later groups', requests(), 2],
      // Read as lock fingerprints (price.ts priceLine) while their group may be uncommitted.
      ['users of the second group met again in the third', requests((i) => (i === 1010 ? {country: 'DE', products: ['basic'], user_id: 'u-510'} : i === 1020 ? {products: ['basic', 'yearly'], user_id: 'u-521'} : undefined)), 2],
      ['an anonymous visitor (a lock by IP)', requests((i) => (i === 700 ? {country: 'GB', ip: IP, products: ['basic']} : undefined)), 2],
      ['a user arriving from that IP in the second group', requests((i) => (i === 70 ? {country: 'GB', ip: IP, products: ['basic']} : i === 700 ? {ip: IP, products: ['basic'], user_id: 'u-700'} : undefined)), 0],
      ['a new user twice in the third group', requests((i) => (i === 1050 ? {country: 'FR', products: ['basic'], user_id: 'u-1040'} : undefined)), 1],
    ]
    for (const [name, reqs, commits] of cases) {
      const usual = await batch(reqs, GROUP - 1)
      expect(usual.behind, name).toBe(0)
      expect(usual.lines, name).toHaveLength(N)
      const behind = await batch(reqs)
      expect(behind.behind, name).toBe(1)
      expect(behind.commits, name).toBe(commits)
      expect(behind.lines, name).toEqual(usual.lines)
      expect(written(behind.path), name).toEqual(written(usual.path))
    }
  }, 60_000)

  it('a lock another connection writes between two groups wins, as without write-behind', async () => {
    const path = copyOf(fixture)
    const reqs = requests()
    const store = openStore(path)
    const lines: string[] = []
    const other = openStore(path)
    try {
      const ctx = await PricingContext.open(store)
      let groups = 0
      await at(NOW, async () => {
        const pricer = batchPricer(ctx, {batchSize: GROUP, chunkSize: CHUNK, writeBehindMin: GROUP}, {
          async drain() {
            // After the second group (the first written behind): another connection quotes a user of the third.
            if (++groups === 2) await calculatePrice(await PricingContext.open(other), {country: 'JP', products: ['basic'], user_id: 'u-1002'})
          },
          failure: (line, message) => lines.push(`${line} ${message}`),
          result: (_line, result) => lines.push(JSON.stringify(result)),
        })
        for (const [i, r] of reqs.entries()) await pricer.handle(i + 1, r)
        await pricer.finish()
        expect(pricer.summary).toEqual({failed: 0, priced: N, read: N})
      })
    } finally {
      await other.close()
      await store.close()
    }
    expect(lines).toHaveLength(N)
    // The request asked for DE; the lock the other connection wrote first (JP) is reused.
    expect(reqs[1002]).toMatchObject({country: 'DE', user_id: 'u-1002'})
    expect(JSON.parse(lines[1002])).toMatchObject({country: 'JP', user_id: 'u-1002'})
    const locks = written(path).locks.filter((l) => l.lock_key === 'u-1002')
    expect(locks).toHaveLength(1)
    expect(locks[0]).toMatchObject({country: 'JP'})
  }, 60_000)

  it('starts by default at groups of WRITE_BEHIND_MIN (5,000) requests, not at 4,999', async () => {
    expect(WRITE_BEHIND_MIN).toBe(5000)
    // Requests refused before pricing cost next to nothing: only whether the writer is asked for counts.
    const asked = async (requests: number): Promise<number> => {
      const store = openStore(copyOf(fixture)) as SqliteStore
      let calls = 0
      const start = store.pricing.writeBehind.bind(store.pricing)
      store.pricing.writeBehind = (n: number) => {
        calls++
        return start(n)
      }
      try {
        const pricer = batchPricer(await PricingContext.open(store), {batchSize: 5000, chunkSize: 512}, {failure() {}, result() {}})
        for (let i = 0; i < requests; i++) await pricer.handle(i + 1, new Error('refused'))
        await pricer.finish()
        expect(pricer.summary).toEqual({failed: requests, priced: 0, read: requests})
      } finally {
        await store.close()
      }
      return calls
    }
    expect(await asked(WRITE_BEHIND_MIN - 1)).toBe(0)
    expect(await asked(WRITE_BEHIND_MIN)).toBe(1)
  })
})
