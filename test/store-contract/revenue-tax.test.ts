import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {figures, stretches} from '../../src/revenue/timeline.js'
import type {StorePort} from '../../src/store/port.js'
import {eventOfRecord, type SubscriptionValues} from '../../src/store/port/revenue.js'
import {ADAPTERS} from '../helpers/adapters.js'
import {addProduct, charge, chargeRow, keyOf, subscription, subscriptionRow, withoutId} from '../helpers/contract-fixtures.js'

/**
 * Tax in the revenue part of the storage port (schema version 6; docs/revenue.md, "Tax"): a
 * charge keeps its gross amount, its tax and the tax's USD shares; a subscription and each
 * event of its history keep its tax; the report's charge figures are net of tax, with the tax
 * collected beside them. The same on every adapter.
 */

const jan = Date.UTC(2026, 0, 1) / 1000
const feb = Date.UTC(2026, 1, 1) / 1000
const mar = Date.UTC(2026, 2, 1) / 1000

describe.each(ADAPTERS)('revenue tax contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  let product: number
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
    product = await addProduct(store, 'pro_monthly')
  })
  afterEach(() => cleanup())

  it('a charge keeps gross, tax and the tax USD shares; a subscription keeps its tax; saved, read back and listed as written', async () => {
    // 9.99 EUR incl. 1.60 VAT, 11.10 USD of which 1.78 is tax; half of it refunded.
    const c = charge({amount_minor: 999, amount_refunded_minor: 499, amount_refunded_usd_minor: 554, amount_usd_minor: 1110, currency: 'EUR', product_id: product, tax_minor: 160, tax_refunded_usd_minor: 89, tax_usd_minor: 178})
    const s = subscription({amount_minor: 11_900, amount_usd_minor: 13_222, amount_usd_monthly_minor: 1102, currency: 'EUR', interval: 'year', product_id: product, tax_minor: 1900})
    await store.revenue.save('charges', [c])
    await store.revenue.save('subscriptions', [s])
    expect(withoutId((await store.revenue.rows('charges', [keyOf(c)]))[0])).toEqual(c)
    expect(withoutId((await store.revenue.rows('subscriptions', [keyOf(s)]))[0])).toEqual(s)
    expect(withoutId((await store.revenue.list('charges', {})).rows[0])).toEqual(c)
    expect(withoutId((await store.revenue.list('subscriptions', {})).rows[0])).toEqual(s)
    // Saving again without tax replaces it (a create replaces every field).
    const untaxed = {...c, latest_event_id: 'evt_2', latest_event_timestamp: 200, tax_minor: 0, tax_refunded_usd_minor: 0, tax_usd_minor: 0}
    await store.revenue.save('charges', [untaxed])
    expect(withoutId((await store.revenue.rows('charges', [keyOf(c)]))[0])).toEqual(untaxed)
  })

  it('charge revenue per period and group: net of tax and refunds, and the tax collected; netRevenue is its net', async () => {
    await store.revenue.save('charges', [
      // DE, January: 11.10 USD gross with 1.78 tax, half refunded (5.54 with 0.89 tax): net 4.67, tax 0.89.
      charge({amount_refunded_usd_minor: 554, amount_usd_minor: 1110, country: 'DE', created: jan + 10, origin_id: 'c1', product_id: product, tax_minor: 160, tax_refunded_usd_minor: 89, tax_usd_minor: 178}),
      // DE, February: 10.70 USD with 1.70 tax.
      charge({amount_usd_minor: 1070, country: 'DE', created: feb + 10, origin_id: 'c2', product_id: product, tax_minor: 170, tax_usd_minor: 170}),
      // US, February: no tax.
      charge({amount_usd_minor: 500, country: 'US', created: feb + 20, origin_id: 'c3', product_id: product}),
      // Failed and pending charges count for nothing, their tax neither.
      charge({amount_usd_minor: 9999, country: 'DE', created: feb + 30, origin_id: 'c4', product_id: product, status: 'failed', tax_minor: 1000, tax_usd_minor: 1000}),
      charge({amount_usd_minor: 9999, country: 'DE', created: feb + 40, origin_id: 'c5', product_id: product, status: 'pending', tax_minor: 1000, tax_usd_minor: 1000}),
    ])
    const periods = [
      {end: feb, start: jan},
      {end: mar, start: feb},
    ]
    const [j, f] = await store.revenue.chargeRevenue('month', periods)
    expect(j.get('all')).toEqual({net: 1110 - 178 - (554 - 89), tax: 178 - 89})
    expect(f.get('all')).toEqual({net: 1070 - 170 + 500, tax: 170})
    expect((await store.revenue.netRevenue('month', periods)).map((m) => m.get('all'))).toEqual([j.get('all')!.net, f.get('all')!.net])
    expect((await store.revenue.chargeRevenue('country', [{end: mar, start: jan}]))[0]).toEqual(
      new Map([
        ['DE', {net: 467 + 900, tax: 89 + 170}],
        ['US', {net: 500, tax: 0}],
      ]),
    )
    expect((await store.revenue.chargeRevenue('product', [{end: mar, start: jan}]))[0].get('pro_monthly')).toEqual({net: 1867, tax: 259})
    // Net and tax together are the gross USD amount net of refunds, to the cent.
    const [whole] = await store.revenue.chargeRevenue('month', [{end: mar, start: jan}])
    expect(whole.get('all')!.net + whole.get('all')!.tax).toBe(1110 - 554 + 1070 + 500)
    expect(await store.revenue.chargeRevenue('month', [])).toEqual([])
  })

  it("a subscription's history keeps each event's tax; MRR is net of it", async () => {
    // 11.00 USD a month incl. 1.00 tax until February, then 22.00 incl. 2.20.
    const s = subscription({amount_minor: 1100, amount_usd_minor: 1100, amount_usd_monthly_minor: 1100, created: jan, latest_event_id: 'e1', latest_event_timestamp: jan, product_id: product, tax_minor: 100})
    const later: SubscriptionValues = {...s, amount_minor: 2200, amount_usd_minor: 2200, amount_usd_monthly_minor: 2200, latest_event_id: 'e2', latest_event_timestamp: feb, tax_minor: 220}
    await store.revenue.save('subscriptions', [later])
    await store.revenue.saveSubscriptionEvents([eventOfRecord(s), eventOfRecord(later)])
    const history = await store.revenue.history('month')
    expect(history.map((e) => [e.event_id, e.tax_minor]).sort()).toEqual([
      ['e1', 100],
      ['e2', 220],
    ])
    const [a, b] = figures(stretches(history), [
      {end: feb, start: jan},
      {end: mar, start: feb},
    ])
    expect(a.get('all')!.mrr).toBe(1000)
    expect(b.get('all')!.mrr).toBe(1980)
  })

  it('a record read as its own history event (no stored event) carries its tax', async () => {
    await store.revenue.save('subscriptions', [subscription({amount_minor: 1190, amount_usd_monthly_minor: 1190, created: jan, product_id: product, tax_minor: 190})])
    const [e] = await store.revenue.history('month')
    expect(e).toMatchObject({record: true, tax_minor: 190})
    expect(figures(stretches([e]), [{end: feb, start: jan}])[0].get('all')!.mrr).toBe(1000)
  })

  it('import rows carry the tax columns into the records, and subscription rows into the history', async () => {
    const c = charge({amount_minor: 1100, amount_usd_minor: 733, currency: 'JPY', latest_event_id: 'import:100', product_id: product, tax_minor: 100, tax_usd_minor: 67})
    const cw = store.imports.writer('charges')
    await cw.writeChunk([chargeRow(c)])
    expect(await cw.commit()).toBe(true)
    await cw.close()
    expect(withoutId((await store.revenue.rows('charges', [keyOf(c)]))[0])).toEqual(c)
    const s = subscription({amount_minor: 1190, amount_usd_monthly_minor: 1190, latest_event_id: 'import:100', product_id: product, tax_minor: 190})
    const sw = store.imports.writer('subscriptions')
    await sw.writeChunk([subscriptionRow(s)])
    expect(await sw.commit()).toBe(true)
    await sw.close()
    expect(withoutId((await store.revenue.rows('subscriptions', [keyOf(s)]))[0])).toEqual(s)
    expect((await store.revenue.history('month')).map((e) => [e.event_id, e.record, e.tax_minor])).toEqual([['import:100', false, 190]])
    // A newer row with another tax updates the record and adds its event.
    const newer = {...s, latest_event_id: 'import:200', latest_event_timestamp: 200, tax_minor: 0}
    const again = store.imports.writer('subscriptions')
    await again.writeChunk([subscriptionRow(newer)])
    await again.commit()
    await again.close()
    expect(again.counts.updated).toBe(1)
    expect((await store.revenue.rows('subscriptions', [keyOf(s)]))[0]!.tax_minor).toBe(0)
    expect((await store.revenue.history('month')).map((e) => [e.event_id, e.tax_minor]).sort()).toEqual([
      ['import:100', 190],
      ['import:200', 0],
    ])
  })
})
