import Database from 'better-sqlite3'
import {beforeAll, describe, expect, it} from 'vitest'

import {createExperiment} from '../../src/experiments/manage.js'
import {batchPricer, priceBatch} from '../../src/pricing/batch.js'
import {PricingContext} from '../../src/pricing/context.js'
import {openStore} from '../../src/store/db.js'
import type {SqliteStore} from '../../src/store/sqlite/store.js'
import type {PriceResult} from '../../src/schemas/price.js'
import {batchInput, copyOf, written} from '../helpers/pricing-store.js'
import {tempStore} from '../helpers/run.js'
import {at, segCatalog} from '../helpers/segments-fixtures.js'

/**
 * Write-behind with a running experiment (docs/performance.md "New users: write-behind"): a
 * group's exposures go to the writer with its locks and commit in the same transaction, so
 * an exposure is stored iff its quote is. Every result handed out has its lock and its exposure
 * stored; a user met again in a later group keeps the arm and the one exposure; an
 * overridden user's exposure moves as without write-behind; and outputs and store are those
 * of the usual way for the same requests and seed.
 */
const NOW = '2026-03-01T00:00:00Z'
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP']
/** Groups of 500 in chunks of 50, written behind from 500 on: the default's shape (5,000, 512) at a tenth. */
const GROUP = 500
const CHUNK = 50
const N = 1200

let fixture: string
let experimentId: number

beforeAll(async () => {
  fixture = tempStore()
  await segCatalog(fixture)
  const store = openStore(fixture)
  try {
    // Thompson (the default): each draw depends on the visitors counted so far.
    experimentId = (await createExperiment(store, {arms: [{multiplier: 0.8}, {multiplier: 1.2}], name: 'wb', products: ['basic', 'yearly'], seed: 7}, {start: true})).id
  } finally {
    await store.close()
  }
}, 60_000)

/**
 * New users in the experiment; from 600 on, users of the group before met again (odd
 * users, 500 requests later: locked, same arm) and users of earlier groups overridden
 * (even users, 600 requests later: a new draw, the exposure may move), none twice in one
 * group. Some requests do not take part (run_experiment false, a product outside it).
 */
function requests(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < N; i++) {
    if (i >= 600 && i % 7 === 0 && i % 2 === 0) out.push({country: COUNTRIES[i % 5], override: true, products: ['basic'], user_id: `u-${i - 600}`})
    else if (i >= 600 && i % 11 === 0 && i % 2 === 1) out.push({products: ['basic', 'yearly'], user_id: `u-${i - 500}`})
    else if (i % 17 === 0) out.push({country: 'US', products: ['basic'], run_experiment: false, user_id: `u-${i}`})
    else if (i % 19 === 0) out.push({country: 'DE', products: ['lifetime'], user_id: `u-${i}`})
    else out.push({country: COUNTRIES[i % COUNTRIES.length], products: ['basic', 'yearly'], user_id: `u-${i}`})
  }
  return out
}

/** Wrap the store's writeBehind to count the write-behind runs and the groups it sent. */
function counted(store: SqliteStore): {behind: number; commits: number} {
  const counts = {behind: 0, commits: 0}
  const pricing = store.pricing
  const start = pricing.writeBehind.bind(pricing)
  pricing.writeBehind = (n: number) => {
    const handle = start(n)
    if (!handle) return handle
    counts.behind++
    return {
      ...handle,
      commit() {
        counts.commits++
        return handle.commit()
      },
    }
  }
  return counts
}

/** priceBatch on a copy of the fixture (JSONL lines out). */
async function batch(reqs: Record<string, unknown>[], batchSize = GROUP, posteriorTtlMs?: number): Promise<{behind: number; commits: number; lines: string[]; path: string}> {
  const {file, lines, out, path} = batchInput(fixture, reqs)
  const store = openStore(path) as SqliteStore
  const counts = counted(store)
  try {
    const ctx = await PricingContext.open(store)
    if (posteriorTtlMs !== undefined) ctx.experiments.posteriorTtlMs = posteriorTtlMs
    await at(NOW, () => priceBatch(ctx, file, out, {batchSize, chunkSize: CHUNK, output: 'jsonl', writeBehindMin: GROUP}))
  } finally {
    await store.close()
  }
  return {...counts, lines: lines(), path}
}

describe('batch pricing with write-behind and a running experiment', () => {
  it('every result handed out has its lock and its exposure stored (another connection sees them)', async () => {
    const path = copyOf(fixture)
    const store = openStore(path) as SqliteStore
    const counts = counted(store)
    const other = new Database(path, {readonly: true})
    const lockOf = other.prepare('SELECT country, experiment_id, arm_id FROM locks WHERE lock_key = ?')
    const exposureOf = other.prepare('SELECT arm_id FROM exposures WHERE experiment_id = ? AND user_id = ?').pluck()
    const reqs = requests()
    // A user's last request: what the store holds for it once that line is handed out (an
    // earlier line may be handed out after a later group overrode the user).
    const last = new Map(reqs.map((r, i) => [r.user_id, i + 1]))
    const handed: [number, PriceResult][] = []
    let checked = 0
    let exposed = 0
    // Results are handed out as their group commits; each drain (after a group) checks them.
    const check = () => {
      for (const [line, r] of handed) {
        const lock = lockOf.get(r.user_id) as undefined | {arm_id: string; country: string; experiment_id: number}
        const exposure = exposureOf.get(experimentId, r.user_id)
        expect(lock, r.user_id!).toBeDefined()
        if (r.variants.experiment_id !== 0) {
          expect(exposure, r.user_id!).toBeDefined()
          exposed++
        }
        if (last.get(r.user_id) === line) {
          expect(lock, r.user_id!).toEqual({arm_id: String(r.variants.arm_id), country: r.country, experiment_id: r.variants.experiment_id})
          if (r.variants.experiment_id !== 0) expect(exposure, r.user_id!).toBe(String(r.variants.arm_id))
        }
        checked++
      }
      handed.length = 0
    }
    try {
      const ctx = await PricingContext.open(store)
      await at(NOW, async () => {
        const pricer = batchPricer(ctx, {batchSize: GROUP, chunkSize: CHUNK, writeBehindMin: GROUP}, {
          drain() {
            check()
            return undefined
          },
          failure: (line, message) => expect.fail(`line ${line}: ${message}`),
          result: (line, result) => handed.push([line, result]),
        })
        for (const [i, r] of reqs.entries()) await pricer.handle(i + 1, r)
        await pricer.finish()
        check()
        expect(pricer.summary).toEqual({failed: 0, priced: N, read: N})
      })
    } finally {
      other.close()
      await store.close()
    }
    expect(counts).toEqual({behind: 1, commits: 2})
    expect(checked).toBe(N)
    expect(exposed).toBeGreaterThan(N / 2)
  }, 60_000)

  it('gives the results and the store of the usual way: same arms, one exposure per user met again, moved exposures moved', async () => {
    const reqs = requests()
    // Groups of 499: write-behind does not start (its groups are 500 and more).
    const usual = await batch(reqs, GROUP - 1)
    expect(usual.behind).toBe(0)
    const behind = await batch(reqs)
    expect(behind).toMatchObject({behind: 1, commits: 2})
    expect(behind.lines).toHaveLength(N)
    expect(behind.lines).toEqual(usual.lines)
    const stored = written(behind.path)
    expect(stored).toEqual(written(usual.path))

    // Users of the second group (written behind) met again in the third: same arm, one exposure, exposed when first met.
    const results = behind.lines.map((l) => JSON.parse(l) as PriceResult)
    const exposures = new Map((stored.exposures as {arm_id: string; exposed_at: number; user_id: string}[]).map((e) => [e.user_id, e]))
    expect(exposures.size).toBe(stored.exposures.length)
    let metAgain = 0
    let moved = 0
    for (let i = 600; i < N; i++) {
      const r = reqs[i]
      const first = results[Number(String(r.user_id).slice(2))]
      if (first.user_id !== r.user_id) continue
      if (r.override) {
        // An override draws again: a different arm moves the exposure, as the usual way does.
        if (results[i].variants.arm_id !== first.variants.arm_id) moved++
        expect(exposures.get(String(r.user_id))?.arm_id).toBe(String(results[i].variants.arm_id))
        continue
      }
      if (first.variants.experiment_id === 0 || i % 11 !== 0) continue
      metAgain++
      expect(results[i].variants).toEqual(first.variants)
      expect(exposures.get(String(r.user_id))?.arm_id).toBe(String(first.variants.arm_id))
    }
    expect(metAgain).toBeGreaterThan(30)
    expect(moved).toBeGreaterThan(0)

    // The visitor counts `experiments results` reads: one per exposed user, on its last arm.
    const store = openStore(behind.path)
    try {
      const counts = await store.experiments.armCounts(experimentId)
      const visitors = [...counts.values()].reduce((n, c) => n + c.visitors, 0)
      expect(visitors).toBe(new Set(results.filter((r) => r.variants.experiment_id !== 0).map((r) => r.user_id)).size)
    } finally {
      await store.close()
    }
  }, 60_000)

  it('posteriors read again mid-batch count the exposures of the group not yet committed', async () => {
    const reqs = requests()
    const usual = await batch(reqs, GROUP - 1)
    // Read again every 2 ms: the counts come from the store, with the group being priced added.
    const behind = await batch(reqs, undefined, 2)
    expect(behind).toMatchObject({behind: 1, commits: 2})
    expect(behind.lines).toEqual(usual.lines)
    expect(written(behind.path)).toEqual(written(usual.path))
  }, 60_000)
})
