import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {createCoupon, deleteCoupon, updateCoupon, upsertCoupons} from '../../src/catalog/coupon-writes.js'
import {couponResponse, getCoupon, isCouponActive, listCoupons} from '../../src/catalog/coupons.js'
import {minorDigits} from '../../src/currency.js'
import {ConflictError, InvalidInputError, OperationalError} from '../../src/errors.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {dump} from '../helpers/dump.js'
import {tempStore} from '../helpers/run.js'

let store: Store
let path: string
const saved = process.env.PRICECTL_NOW
beforeEach(() => {
  process.env.PRICECTL_NOW = '2026-04-01T12:00:00Z'
  path = tempStore()
  store = openStore(path)
})
afterEach(async () => {
  await store.close()
  if (saved === undefined) delete process.env.PRICECTL_NOW
  else process.env.PRICECTL_NOW = saved
})

const fixed = {
  active_from: '2026-03-01',
  active_till: '2026-05-31',
  api_id: 'SAVE5',
  coupon_external_coupons: [
    {external_coupon: {id: 'promo_123', source: 'GATEWAY_A'}},
    {external_coupon: {id: 'SAVE5', source: 'GATEWAY_D'}},
  ],
  coupon_type: {coupon_type: 'fixed_amount'},
  currency: 'EUR',
  name: 'Spring 5 EUR off',
  status: 'ACTIVE',
  value: 5.5,
}

async function invalid(fn: () => unknown, ...parts: string[]): Promise<void> {
  let err: unknown
  try {
    await fn()
  } catch (error) {
    err = error
  }
  expect(err).toBeInstanceOf(InvalidInputError)
  for (const p of parts) expect((err as Error).message).toContain(p)
}

describe('coupons engine', () => {
  it('stores every field and returns the spec coupon with the same values', async () => {
    const c = await createCoupon(store, fixed)
    expect(c.amount_minor).toBe(550)
    expect(c.percent).toBeNull()
    expect(await couponResponse(store, c)).toEqual({
      ...fixed,
      created_at: '2026-04-01T12:00:00+00:00',
      org: 1,
      updated_at: '2026-04-01T12:00:00+00:00',
    })
    // The price command's view: window as UNIX seconds (a bare till date lasts the whole day, UTC).
    expect(c.active_from_s).toBe(Date.parse('2026-03-01T00:00:00Z') / 1000)
    expect(c.active_till_s).toBe(Date.parse('2026-05-31T23:59:59Z') / 1000)
    expect(c.external.map((e) => [e.source, e.external_id])).toEqual([['GATEWAY_A', 'promo_123'], ['GATEWAY_D', 'SAVE5']])
    expect(typeof c.external[0].id).toBe('number')
  })

  it('is active only when ACTIVE and inside its window', async () => {
    const c = await createCoupon(store, fixed)
    expect(isCouponActive(c, Date.parse('2026-02-28T23:59:59Z') / 1000)).toBe(false)
    expect(isCouponActive(c, Date.parse('2026-03-01T00:00:00Z') / 1000)).toBe(true)
    expect(isCouponActive(c, Date.parse('2026-05-31T23:59:59Z') / 1000)).toBe(true)
    expect(isCouponActive(c, Date.parse('2026-06-01T00:00:00Z') / 1000)).toBe(false)
    const off = (await updateCoupon(store, 'SAVE5', {status: 'NOT_ACTIVE'})).coupon
    expect(isCouponActive(off, Date.parse('2026-04-01T00:00:00Z') / 1000)).toBe(false)
    const open = await createCoupon(store, {api_id: 'ALWAYS', coupon_type: 'percentage', name: 'Always', value: 10})
    expect(isCouponActive(open, 0)).toBe(true)
  })

  it('validates type, value, currency, window, status and sources, naming field and value', async () => {
    await invalid(async () => await createCoupon(store, {...fixed, value: 0}), 'value', 'above 0')
    await invalid(async () => await createCoupon(store, {...fixed, value: 5.555}), 'value', '5.555', 'EUR')
    await invalid(async () => await createCoupon(store, {...fixed, currency: undefined}), 'currency: is required for a fixed_amount coupon')
    await invalid(async () => await createCoupon(store, {...fixed, currency: 'EUX'}), 'currency', '"EUX"')
    await invalid(async () => await createCoupon(store, {...fixed, coupon_type: {coupon_type: 'percent'}}), 'coupon_type', '"percent"')
    await invalid(async () => await createCoupon(store, {...fixed, coupon_type: 'percentage', currency: null, value: 101}), 'value', '101')
    await invalid(async () => await createCoupon(store, {...fixed, coupon_type: 'percentage', value: 10}), 'currency', 'percentage coupon takes no currency')
    await invalid(async () => await createCoupon(store, {...fixed, active_from: '2026-06-01'}), 'active_till', '2026-05-31', 'before')
    await invalid(async () => await createCoupon(store, {...fixed, active_till: '31/05/2026'}), 'active_till', '31/05/2026')
    await invalid(async () => await createCoupon(store, {...fixed, status: 'active'}), 'status', '"active"')
    await invalid(async () => await createCoupon(store, {...fixed, coupon_external_coupons: [{external_coupon: {id: 'x', source: 'GATEWAY_B'}}]}), 'source', '"GATEWAY_B"')
    await invalid(async () => await createCoupon(store, {...fixed, coupon_external_coupons: [{external_coupon: {source: 'GATEWAY_A'}}]}), 'external_coupon.id: is required')
    expect(dump(path).tables.coupons).toEqual([])
    await createCoupon(store, fixed)
    // An existing api_id is a conflict (exit 1), not invalid input (exit 2).
    await expect(async () => await createCoupon(store, {...fixed, name: 'other'})).rejects.toThrow(ConflictError)
    await expect(async () => await createCoupon(store, {...fixed, name: 'other'})).rejects.toThrow(/api_id: coupon "SAVE5" already exists/)
  })

  it('fixed amounts are exact in the currency minor unit (property)', async () => {
    let n = 0
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('EUR', 'JPY', 'KWD', 'USD', 'BRL'), fc.integer({max: 10_000_000, min: 1}), async (currency, units) => {
        // KWD amounts a coupon may carry move in steps of 0.010 (Stripe and Chargebee; issue 29 item 5).
        const step = currency === 'KWD' ? 10 : 1
        const minor = units * step
        const value = minor / 10 ** minorDigits(currency)
        const c = await createCoupon(store, {api_id: `C${n++}`, coupon_type: 'fixed_amount', currency, name: 'c', value})
        expect(c.amount_minor).toBe(minor)
        expect((await couponResponse(store, c)).value).toBe(value)
        if (step > 1) await expect(async () => await createCoupon(store, {api_id: `C${n++}`, coupon_type: 'fixed_amount', currency, name: 'c', value: (minor + 1) / 10 ** minorDigits(currency)})).rejects.toThrow(InvalidInputError)
      }),
      {numRuns: 50},
    )
  })

  it('update merges, replaces external coupons, re-checks the currency, and leaves an unchanged coupon alone', async () => {
    await createCoupon(store, fixed)
    process.env.PRICECTL_NOW = '2026-04-02T00:00:00Z'
    const before = dump(path)
    expect((await updateCoupon(store, 'SAVE5', {...await couponResponse(store, (await getCoupon(store, 'SAVE5'))!)})).changed).toBe(false)
    expect(dump(path)).toEqual(before)
    await invalid(async () => await updateCoupon(store, 'SAVE5', {currency: 'JPY'}), 'value', '5.5', 'JPY')
    const {coupon} = await updateCoupon(store, 'SAVE5', {coupon_external_coupons: [], value: 7})
    expect(coupon.external).toEqual([])
    expect(coupon.amount_minor).toBe(700)
    expect(coupon.updated_at).toBe('2026-04-02T00:00:00+00:00')
    expect(coupon.created_at).toBe('2026-04-01T12:00:00+00:00')
    // Switching to a percentage drops the currency.
    const pct = (await updateCoupon(store, 'SAVE5', {coupon_type: {coupon_type: 'percentage'}, value: 12.5})).coupon
    expect([pct.coupon_type, pct.percent, pct.currency, pct.amount_minor]).toEqual(['percentage', 12.5, null, null])
    await invalid(async () => await updateCoupon(store, 'SAVE5', {api_id: 'OTHER'}), 'api_id is immutable')
  })

  it('lists by case-insensitive substring of the name', async () => {
    await upsertCoupons(store, [
      {label: '1', value: {api_id: 'A', coupon_type: 'percentage', name: 'Spring Sale', value: 10}},
      {label: '2', value: {api_id: 'B', coupon_type: 'percentage', name: 'Black Friday', status: 'NOT_ACTIVE', value: 30}},
      {label: '3', value: {api_id: 'C', coupon_type: 'percentage', name: 'Ünïcode SPRING', value: 5}},
    ])
    expect((await listCoupons(store, {name: 'spring'})).map((c) => c.api_id)).toEqual(['A', 'C'])
    expect((await listCoupons(store, {name: 'ÜNÏ'})).map((c) => c.api_id)).toEqual(['C'])
    expect(await listCoupons(store, {name: 'friday', status: 'ACTIVE'})).toEqual([])
    expect((await listCoupons(store)).length).toBe(3)
  })

  it('delete refuses a coupon campaigns use, unless forced', async () => {
    const c = await createCoupon(store, fixed)
    store.db.prepare("INSERT INTO campaigns (api_id, name, coupon_id, created_at, updated_at) VALUES ('spring', 'Spring', ?, 'x', 'x')").run(c.id)
    const before = dump(path)
    await expect(async () => await deleteCoupon(store, 'SAVE5')).rejects.toThrow(OperationalError)
    expect(dump(path)).toEqual(before)
    await deleteCoupon(store, 'SAVE5', {force: true})
    expect(await getCoupon(store, 'SAVE5')).toBeUndefined()
    expect(dump(path).tables.coupon_external_coupons).toEqual([])
  })
})
