import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {getProduct, createProduct, deleteProduct, productResponse, updateProduct, loadProducts} from '../../src/catalog/products.js'
import {productByApiId, productByIntegration} from '../../src/catalog/lookup.js'
import {minorDigits} from '../../src/currency.js'
import {ConflictError, InvalidInputError, NotFoundError, OperationalError} from '../../src/errors.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {dump} from '../helpers/dump.js'
import {tempStore} from '../helpers/run.js'

const full = {
  api_id: 'pro_monthly',
  base_px: 9.99,
  baseline: null,
  country_prices: [
    {amount: 8.99, country: 'DE', currency: 'EUR'},
    {amount: 1200, country: 'JP', currency: 'JPY'},
    {amount: 2.5, country: 'KW', currency: 'KWD'},
  ],
  features: [
    {api_id: 'seats', description: 'Team seats', feature_group: {api_id: 'limits', description: 'Usage limits', name: 'Limits'}, name: 'Seats', status: 'active', type: 'numeric', unit: 'seats', value: 5},
    {api_id: 'sso', description: '', feature_group: null, name: 'SSO', status: 'inactive', type: 'boolean', unit: null, value: 0},
  ],
  integrations: [
    {gateway_a_product_id: 'prod_1', type: 'gateway_a'},
    {gateway_a_product_id: 'prod_multi', interval: 'month', interval_count: 1, type: 'gateway_a_with_interval'},
    {gateway_c_plan_id: 'plan_c', type: 'gateway_c'},
    {currency: 'EUR', gateway_d_plan_id: 'plan_d', type: 'gateway_d'},
  ],
  interval: 'month',
  interval_count: 1,
  max_px: 14.99,
  min_px: 4.99,
  name: 'Pro Monthly',
  product_trials: [{interval: 'day', interval_count: 14}],
}

const minimal = (apiId: string, extra: Record<string, unknown> = {}) => ({api_id: apiId, base_px: 5, interval: 'month', interval_count: 1, name: `Product ${apiId}`, ...extra})

let store: Store
let path: string
beforeEach(() => {
  path = tempStore()
  store = openStore(path)
})
afterEach(async () => await store.close())

async function expectInvalid(fn: () => unknown, ...parts: string[]): Promise<void> {
  let err: unknown
  try {
    await fn()
  } catch (error) {
    err = error
  }
  expect(err, 'throws').toBeInstanceOf(InvalidInputError)
  for (const p of parts) expect((err as Error).message).toContain(p)
}

describe('products engine', () => {
  it('stores every field and returns the spec shape with the same values', async () => {
    await createProduct(store, full)
    const p = (await getProduct(store, 'pro_monthly'))!
    // Money in minor units of each currency: EUR 2 digits, JPY 0, KWD 3.
    expect(p.base_px_minor).toBe(999)
    expect(p.country_prices).toEqual([
      {amount_minor: 899, country: 'DE', currency: 'EUR'},
      {amount_minor: 1200, country: 'JP', currency: 'JPY'},
      {amount_minor: 2500, country: 'KW', currency: 'KWD'},
    ])
    const out = productResponse(p, 'x')
    expect(out).toMatchObject({
      api_id: full.api_id,
      base_px: 9.99,
      baseline_id: null,
      country_prices: full.country_prices.map((c) => ({country: c.country, currency: c.currency, local_price: c.amount})),
      integrations: full.integrations,
      interval: 'month',
      interval_count: 1,
      max_px: 14.99,
      min_px: 4.99,
      name: 'Pro Monthly',
      product_trials: full.product_trials,
      success: true,
    })
    const group = out.features[0].feature_group!
    expect(out.features[0]).toEqual({...full.features[0], feature_group: {...full.features[0].feature_group, id: group.id}, group_id: group.id})
    expect(out.features[1]).toEqual({...full.features[1], group_id: null})
  })

  it('keeps money exact: any amount with at most the currency\'s decimals round-trips, one more decimal is refused', async () => {
    const currencies = ['USD', 'EUR', 'JPY', 'KWD', 'INR', 'BRL', 'GBP', 'CLP', 'BHD']
    const countryOf: Record<string, string> = {BHD: 'BH', BRL: 'BR', CLP: 'CL', EUR: 'DE', GBP: 'GB', INR: 'IN', JPY: 'JP', KWD: 'KW', USD: 'US'}
    let n = 0
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...currencies), fc.integer({max: 99_999_999, min: 0}), fc.integer({max: 9, min: 1}), async (currency, minor, extra) => {
        const d = minorDigits(currency)
        const amount = minor / 10 ** d
        const apiId = `p${n++}`
        // Charged through gateway_d only, whose table takes every ISO minor unit: this checks storage, not a gateway's rules.
        const integrations = [{currency, gateway_d_plan_id: apiId, type: 'gateway_d'}]
        await createProduct(store, minimal(apiId, {base_px: Math.floor(minor / 100) / 100 + 0, country_prices: [{amount, country: countryOf[currency], currency}], integrations}))
        const p = (await getProduct(store, apiId))!
        expect(p.country_prices[0].amount_minor).toBe(minor)
        expect(productResponse(p, '').country_prices[0].local_price).toBe(amount)
        const tooPrecise = (minor * 10 + extra) / 10 ** (d + 1)
        await expectInvalid(async () => await createProduct(store, minimal(`${apiId}_bad`, {country_prices: [{amount: tooPrecise, country: countryOf[currency], currency}], integrations})), `has more decimals than ${currency} allows (${d})`)
      }),
      {numRuns: 60},
    )
  })

  it('rejects bad fields naming the field and the value', async () => {
    await expectInvalid(async () => await createProduct(store, minimal('a', {interval: 'monthly'})), 'interval', '"monthly"')
    await expectInvalid(async () => await createProduct(store, minimal('a', {country_prices: [{amount: 1, country: 'DEU', currency: 'EUR'}]})), 'country_prices[0].country', '"DEU"')
    await expectInvalid(async () => await createProduct(store, minimal('a', {country_prices: [{amount: 1, country: 'DE', currency: 'EUX'}]})), 'country_prices[0].currency', '"EUX"')
    await expectInvalid(async () => await createProduct(store, minimal('a', {base_px: -1})), 'base_px', '-1')
    await expectInvalid(async () => await createProduct(store, minimal('a', {base_px: 1.999})), 'base_px', '1.999')
    await expectInvalid(async () => await createProduct(store, minimal('a', {integrations: [{type: 'gateway_d', gateway_d_plan_id: 'x'}]})), 'integrations[0].currency')
    await expectInvalid(async () => await createProduct(store, minimal('a', {integrations: [{type: 'gateway_c'}]})), 'integrations[0].gateway_c_plan_id: is required')
    await expectInvalid(async () => await createProduct(store, minimal('a', {integrations: [{type: 'gateway_b', id: 'x'}]})), 'unknown integration type "gateway_b"')
    await expectInvalid(async () => await createProduct(store, minimal('a', {interval: 'one_time', interval_count: 12})), 'interval_count', '12')
    await expectInvalid(async () => await createProduct(store, minimal('a', {max_px: 3, min_px: 4})), 'min_px', '4', '3')
    await expectInvalid(async () => await createProduct(store, minimal('a', {base_price: 3})), 'unknown field "base_price"')
    await expectInvalid(async () => await createProduct(store, minimal('a', {features: [{api_id: 'f', name: 'F', type: 'boolean', value: 3}]})), 'features[0].value', '3')
    await expectInvalid(async () => await createProduct(store, minimal('a', {product_trials: [{interval: 'one_time', interval_count: 1}]})), 'product_trials[0].interval', '"one_time"')
    expect(await loadProducts(store)).toEqual([])
  })

  it('keeps names and api_ids unique, and a gateway id on one product', async () => {
    await createProduct(store, full)
    const before = dump(path)
    // An existing api_id is a conflict (exit 1), not invalid input (exit 2).
    await expect(async () => await createProduct(store, minimal('pro_monthly'))).rejects.toThrow(ConflictError)
    await expect(async () => await createProduct(store, minimal('pro_monthly'))).rejects.toThrow(/api_id: product "pro_monthly" already exists/)
    await expectInvalid(async () => await createProduct(store, minimal('other', {name: 'Pro Monthly'})), 'name', '"Pro Monthly"', 'pro_monthly')
    await expectInvalid(async () => await createProduct(store, minimal('other', {integrations: [{gateway_c_plan_id: 'plan_c', type: 'gateway_c'}]})), 'gateway_c:plan_c', 'pro_monthly')
    // The same gateway product with another interval is what gateway_a_with_interval is for.
    await createProduct(store, minimal('pro_yearly', {integrations: [{gateway_a_product_id: 'prod_multi', interval: 'year', interval_count: 1, type: 'gateway_a_with_interval'}], interval: 'year'}))
    expect((await productByIntegration(store, {gateway_a_product_id: 'prod_multi', interval: 'year', interval_count: 1, type: 'gateway_a_with_interval'}))?.api_id).toBe('pro_yearly')
    expect((await productByIntegration(store, {currency: 'EUR', gateway_d_plan_id: 'plan_d', type: 'gateway_d'}))?.api_id).toBe('pro_monthly')
    expect(dump(path).tables.products.length).toBe(before.tables.products.length + 1)
  })

  it('update replaces given fields only, overwrites lists, and keeps api_id', async () => {
    await createProduct(store, full)
    const before = (await getProduct(store, 'pro_monthly'))!
    const {changed, product} = await updateProduct(store, 'pro_monthly', {base_px: 10.99, country_prices: [{amount: 9.49, country: 'FR', currency: 'EUR'}], integrations: []})
    expect(changed).toBe(true)
    expect(product.base_px_minor).toBe(1099)
    expect(product.country_prices).toEqual([{amount_minor: 949, country: 'FR', currency: 'EUR'}])
    expect(product.integrations).toEqual([])
    expect(product.features).toEqual(before.features)
    expect(product.product_trials).toEqual(before.product_trials)
    expect(product.min_px_minor).toBe(499)
    await expectInvalid(async () => await updateProduct(store, 'pro_monthly', {api_id: 'renamed'}), 'api_id is immutable')
    await expectInvalid(async () => await updateProduct(store, 'pro_monthly', {min_px: 20}), 'min_px 20 is above max_px 14.99')
    // Clearing optional fields with null.
    expect((await updateProduct(store, 'pro_monthly', {max_px: null, min_px: null})).product).toMatchObject({max_px_minor: null, min_px_minor: null})
    await expect(async () => await updateProduct(store, 'nope', {name: 'x'})).rejects.toThrow(NotFoundError)
  })

  it('an update that changes nothing does not touch the store', async () => {
    await createProduct(store, full)
    const before = dump(path)
    const r = await updateProduct(store, 'pro_monthly', {...productResponse((await getProduct(store, 'pro_monthly'))!, 'fed back')})
    expect(r.changed).toBe(false)
    expect(dump(path)).toEqual(before)
  })

  it('baseline: by api_id in, numeric baseline_id out; must exist and not be itself; cleared when it is deleted', async () => {
    await createProduct(store, minimal('yearly', {interval: 'year'}))
    await createProduct(store, minimal('yearly_intro', {baseline: 'yearly', interval: 'year'}))
    const base = (await productByApiId(store, 'yearly'))!
    const intro = (await getProduct(store, 'yearly_intro'))!
    expect(intro.baseline_id).toBe(base.id)
    expect(intro.baseline_api_id).toBe('yearly')
    await expectInvalid(async () => await createProduct(store, minimal('x', {baseline: 'missing'})), 'baseline', '"missing"')
    await expectInvalid(async () => await updateProduct(store, 'yearly', {baseline: 'yearly'}), 'own baseline')
    // baseline_id as get prints it is accepted back.
    expect((await updateProduct(store, 'yearly_intro', {baseline_id: base.id})).changed).toBe(false)
    await expectInvalid(async () => await updateProduct(store, 'yearly_intro', {baseline_id: 9999}), 'baseline_id', '9999')
    expect((await deleteProduct(store, 'yearly')).baselineOf).toEqual(['yearly_intro'])
    expect((await getProduct(store, 'yearly_intro'))!.baseline_id).toBeNull()
  })

  it('feature groups are shared by api_id; a bare group_id links an existing group', async () => {
    await createProduct(store, full)
    const groupId = (await getProduct(store, 'pro_monthly'))!.features[0].group_id!
    await createProduct(store, minimal('team', {features: [{api_id: 'seats', group_id: groupId, name: 'Seats', type: 'numeric', unit: 'seats', value: 50}]}))
    expect((await getProduct(store, 'team'))!.features[0].feature_group).toEqual({api_id: 'limits', description: 'Usage limits', id: groupId, name: 'Limits'})
    await expectInvalid(async () => await createProduct(store, minimal('t2', {features: [{api_id: 'x', group_id: 777, name: 'X', type: 'boolean'}]})), 'group_id', '777')
  })

  it('delete refuses a product that revenue records use, unless forced', async () => {
    await createProduct(store, full)
    const id = (await productByApiId(store, 'pro_monthly'))!.id
    store.db
      .prepare("INSERT INTO subscriptions (user_id, origin, origin_id, product_id, status, latest_event_timestamp, latest_event_id) VALUES ('u1', 'gateway_a', 'sub_1', ?, 'active', 1, 'e1')")
      .run(id)
    const before = dump(path)
    await expect(async () => await deleteProduct(store, 'pro_monthly')).rejects.toThrow(OperationalError)
    await expect(async () => await deleteProduct(store, 'pro_monthly')).rejects.toThrow(/1 subscription.*--force/)
    expect(dump(path)).toEqual(before)
    await deleteProduct(store, 'pro_monthly', {force: true})
    expect(await getProduct(store, 'pro_monthly')).toBeUndefined()
    const t = dump(path).tables
    expect(t.country_prices).toEqual([])
    expect(t.product_integrations).toEqual([])
    expect(t.product_features).toEqual([])
    expect(t.subscriptions[0].product_id).toBeNull()
  })
})
