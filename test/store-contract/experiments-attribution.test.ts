import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import type {ArmCounts} from '../../src/store/port/experiments.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, charge, subscription} from '../helpers/contract-fixtures.js'

/**
 * Attribution (docs/experiments.md), a rule each adapter implements in SQL, on every adapter
 * against a reference model over random exposures and sales: an arm's visitors are its
 * exposures; its conversions the distinct signed-in users exposed to it with a sale of one
 * of the experiment's products made at or after the exposure (no date counts), a
 * subscription that is not pending or a succeeded charge; its revenue the subscriptions'
 * monthly USD amount (else their USD amount) and the charges' USD amount less refunds.
 */

const ARMS = ['baseline', '1', 'big']
const VISITORS = ['v1', 'v2', 'v3', 'v4', 'v5']

let run = 0

describe.each(ADAPTERS)('experiment attribution in SQL: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let products: Record<string, number>
  beforeAll(async () => {
    ;({cleanup, store} = await adapter.open())
    products = {other: await addProduct(store, 'other'), p1: await addProduct(store, 'p1'), p2: await addProduct(store, 'p2')}
  })
  afterAll(() => cleanup())

  it('visitors, conversions and revenue per arm follow the rule for any exposures and sales', async () => {
    const exposure = fc.record({anonymous: fc.boolean(), arm: fc.constantFrom(...ARMS), at: fc.constantFrom(100, 200), visitor: fc.constantFrom(...VISITORS)})
    const user = fc.constantFrom(...VISITORS, 'stranger')
    const product = fc.constantFrom('p1', 'p2', 'p2', 'other', null)
    // Often the exposure's own second (a sale at it counts).
    const created = fc.constantFrom(null, 50, 100, 100, 150, 200, 200, 250)
    const amount = fc.option(fc.integer({max: 5000, min: 0}), {freq: 4})
    const sub = fc.record({created, monthly: amount, product, status: fc.constantFrom('active', 'canceled', 'pending', 'trialing'), usd: amount, user})
    const sale = fc.record({created, product, refunded: fc.integer({max: 300, min: 0}), status: fc.constantFrom('succeeded', 'failed', 'pending'), usd: amount, user})
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(exposure, {maxLength: 5, selector: (x) => x.visitor}), fc.array(sub, {maxLength: 6}), fc.array(sale, {maxLength: 6}), async (exposures, subs, sales) => {
        const r = ++run
        const u = (name: string) => `${name}-${r}`
        const [id] = await store.experiments.insert(
          [
            {
              allocation: 'uniform',
              arms: ARMS.map((a) => ({id: a, multiplier: a === 'baseline' ? null : 1.1, products: null, usd_price_minor: null})),
              audience_id: null,
              countries: [],
              name: `attribution ${r}`,
              product_ids: [products.p2, products.p1],
              seed: r,
              type: 'price',
            },
          ],
          '2026-01-01T00:00:00.000Z',
        )
        await store.experiments.recordExposures(exposures.map((x) => ({anonymous: x.anonymous, armId: x.arm, at: x.at, experimentId: id, visitor: u(x.visitor)})))
        await store.revenue.save(
          'subscriptions',
          subs.map((s, i) =>
            subscription({amount_usd_minor: s.usd, amount_usd_monthly_minor: s.monthly, created: s.created, origin_id: `s${i}`, product_id: s.product ? products[s.product] : null, status: s.status, user_id: u(s.user)}),
          ),
        )
        await store.revenue.save(
          'charges',
          sales.map((c, i) =>
            charge({amount_refunded_usd_minor: c.refunded, amount_usd_minor: c.usd, created: c.created, origin_id: `c${i}`, product_id: c.product ? products[c.product] : null, status: c.status, user_id: u(c.user)}),
          ),
        )

        const expected = new Map<string, ArmCounts>()
        const inExperiment = (p: null | string) => p === 'p1' || p === 'p2'
        for (const x of exposures) {
          const counts = expected.get(x.arm) ?? {conversions: 0, revenue_minor: 0, visitors: 0}
          counts.visitors++
          if (!x.anonymous) {
            const after = (created: null | number) => created === null || created >= x.at
            const values = [
              ...subs.filter((s) => s.user === x.visitor && s.status !== 'pending' && inExperiment(s.product) && after(s.created)).map((s) => s.monthly ?? s.usd ?? 0),
              ...sales.filter((c) => c.user === x.visitor && c.status === 'succeeded' && inExperiment(c.product) && after(c.created)).map((c) => (c.usd ?? 0) - c.refunded),
            ]
            if (values.length > 0) counts.conversions++
            counts.revenue_minor += values.reduce((a, b) => a + b, 0)
          }
          expected.set(x.arm, counts)
        }
        const sorted = (m: Map<string, ArmCounts>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1))
        expect(sorted(await store.experiments.armCounts(id))).toEqual(sorted(expected))
      }),
      {numRuns: 80},
    )
  })
})
