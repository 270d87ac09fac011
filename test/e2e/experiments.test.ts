import {describe, expect, it} from 'vitest'

import {experimentStore} from '../helpers/experiment-fixtures.js'
import {e2eSeeded, itWithoutStore} from '../helpers/e2e.js'
import {run, runBin, withEnv} from '../helpers/run.js'

/** The experiments' catalog, written once and copied (test/helpers/e2e.ts e2eSeeded). */
const storeWithCatalog = () => e2eSeeded('experiments', (db) => experimentStore(db))

/**
 * Experiments end to end on either adapter: arms hold in the store (and a separate process
 * reads them), results and simulate. In-process (test/helpers/run.ts) but for that one
 * process: each command opens the store, reads and closes it, so a later in-process call
 * reads what the store holds.
 */
describe('experiments end to end', () => {
  it('arms are sticky across processes, reproducible from the seed, and feed the results', async () => {
    const a = await storeWithCatalog()
    const b = await storeWithCatalog()
    for (const db of [a, b]) {
      const r = await run(db, ['experiments', 'create', '--name', 'e2e', '-p', 'pro_monthly', '--arm', 'x0.8', '--arm', 'x1.3', '--seed', '99', '--start', '--json'])
      expect(r.code, r.stderr).toBe(0)
    }
    const users = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay']
    const arms: unknown[] = []
    for (const u of users) arms.push((await run(a, ['price', '-u', u, '-p', 'pro_monthly', '--country', 'US', '--json'])).json.variants.arm_id)
    for (const arm of arms) expect(['baseline', 1, 2]).toContain(arm)
    // Each later call returns the same arm and price.
    for (const [i, u] of users.entries()) {
      const again = await run(a, ['price', '-u', u, '-p', 'pro_monthly', '--json'])
      expect(again.json.variants.arm_id).toBe(arms[i])
    }
    // And in a new process (bin/run.js): the arm is the store's, not this process's.
    const other = runBin(a, ['price', '-u', 'ann', '-p', 'pro_monthly', '--json'])
    expect(other.code, other.stderr).toBe(0)
    expect(other.json.variants.arm_id).toBe(arms[0])
    // Another store with the same seed and the same visitors in the same order: the same arms.
    const replay: unknown[] = []
    for (const u of users) replay.push((await run(b, ['price', '-u', u, '-p', 'pro_monthly', '--country', 'US', '--json'])).json.variants.arm_id)
    expect(replay).toEqual(arms)

    // ann converts: a subscription created after her exposure (a second later, as the fixture did).
    const sub = await run(a, ['subscriptions', 'create', '--user-id', 'ann', '--product', 'pro_monthly', '--amount', '10', '--currency', 'USD', '--status', 'active', '--origin', 'gateway_a', '--origin-id', 'sub_1', '--created', String(Math.floor(Date.now() / 1000) + 1)])
    expect(sub.code, sub.stderr).toBe(0)
    const results = await run(a, ['experiments', 'results', '1', '--json'])
    expect(results.code).toBe(0)
    expect(results.json.visitors).toBe(6)
    expect(results.json.conversions).toBe(1)
    const sum = results.json.arms.reduce((s: number, x: {probability_best: number}) => s + x.probability_best, 0)
    expect(Math.abs(sum - 1)).toBeLessThan(0.01)
    const annArm = results.json.arms.find((x: {arm_id: unknown}) => x.arm_id === arms[0])
    expect(annArm.conversions).toBe(1)
  })

  itWithoutStore('simulate runs in a fresh temporary store when no store is given', async () => {
    // No --db and PRICECTL_DB empty, as a shell without a store gives it.
    const noStore = {PRICECTL_DB: ''}
    const r = await withEnv(noStore, () => run(undefined, ['experiments', 'simulate', '--arm', 'x0.8', '--arm', 'x1.3', '--demand', '7.99=0.2,10=0.2,12.99=0.115', '--visitors', '1000', '--json']))
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({best_arm: 'baseline', product: 'sim_product', store: null, success: true, visitors: 1000})
    expect(r.json.policies.oracle.revenue_per_visitor).toBeGreaterThan(r.json.policies.uniform.revenue_per_visitor)
    const text = await withEnv(noStore, () => run(undefined, ['experiments', 'simulate', '--arm', 'x0.8', '--demand', '8=0.3,10=0.2', '--visitors', '300', '--keep']))
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('● thompson')
    expect(text.stderr).toMatch(/kept the simulation store: .*simulation\.db/)
  })
})
