import fc from 'fast-check'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {productByApiId, type ProductRow} from '../../src/catalog/lookup.js'
import {minorDigits, minorToDecimalString} from '../../src/currency.js'
import type {Preset} from '../../src/import/presets.js'
import {RowMapper} from '../../src/import/rows.js'
import {createCharge, updateCharge} from '../../src/revenue/charges.js'
import {usdMinor} from '../../src/revenue/money.js'
import type {ChargeValues, SubscriptionValues} from '../../src/revenue/store.js'
import {chargeTaxUsd, netMonthly, taxProblem, taxShare} from '../../src/revenue/tax.js'
import {openSqliteStore, type SqliteStore} from '../../src/store/db.js'
import {addProduct, setRates} from '../helpers/revenue-fixtures.js'

/**
 * Revenue net of tax (docs/revenue.md, "Tax"): a charge keeps what the customer paid
 * (gross), the tax part of it, and so its net, in exact minor units of its currency; its USD
 * figures split the same way, the tax's share rounded half up once, so net + tax = gross to
 * the cent. Imports read a tax column like the amount, in every exponent a currency or a
 * gateway has.
 */

let store: SqliteStore
let fallback: ProductRow

/** Units per USD: hand-computable rates. */
const RATES = {BHD: 0.376, EUR: 0.9, HUF: 360, INR: 90, ISK: 140, JPY: 150, KWD: 0.31, USD: 1}

beforeAll(async () => {
  store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'revenue-tax-')), 'store.db'))
  addProduct(store.db, {api_id: 'pro_monthly', base_px: 10, interval: 'month'})
  addProduct(store.db, {api_id: 'pro_yearly', base_px: 100, interval: 'year'})
  setRates(store.db, '2020-01-01', RATES)
  fallback = (await productByApiId(store, 'pro_monthly'))!
})

afterAll(async () => await store?.close())

const CHARGE_HEADER = ['id', 'user', 'created', 'amount', 'refunded', 'tax', 'currency', 'status', 'country']
const SUBSCRIPTION_HEADER = ['id', 'user', 'created', 'amount', 'tax', 'currency', 'status', 'interval', 'quantity']

function layout(kind: 'charges' | 'subscriptions', extra: Partial<Preset> = {}): Preset {
  const columns: Record<string, string> =
    kind === 'charges'
      ? {amount: 'amount', amount_refunded: 'refunded', country: 'country', created: 'created', currency: 'currency', origin_id: 'id', status: 'status', tax: 'tax', user_id: 'user'}
      : {amount: 'amount', created: 'created', currency: 'currency', interval: 'interval', origin_id: 'id', quantity: 'quantity', status: 'status', tax: 'tax', user_id: 'user'}
  return {amount_unit: 'major', columns, decimal_separator: '.', detect: [], kind, name: 'test', origin: 'gateway_a', thousands_separator: null, ...extra}
}

function chargeMapper(extra: Partial<Preset> = {}): RowMapper<ChargeValues> {
  return new RowMapper<ChargeValues>(store, 'charges', layout('charges', extra), CHARGE_HEADER, fallback)
}

/** A charge row: amount, refunded and tax cells as written, in a currency. */
function chargeRow(amount: string, tax: string, currency: string, refunded = '0'): string[] {
  return ['ch_1', 'u1', '2026-01-15', amount, refunded, tax, currency, 'succeeded', 'DE']
}

/** The tax's share of a USD amount, from the definition: usd x tax / gross, half up, in BigInt. */
function share(usd: number, tax: number, gross: number): number {
  if (tax === 0 || gross === 0) return 0
  const n = BigInt(usd) * BigInt(tax)
  const d = BigInt(gross)
  return Number((2n * n + d) / (2n * d))
}

describe('the tax arithmetic (src/revenue/tax.ts)', () => {
  it('DE 19% included in 9.99 EUR: tax 1.60, net 8.39; 11.10 USD gross splits into 1.78 tax and 9.32 net', () => {
    // 9.99 / 1.19 = 8.3949..., so the VAT in 9.99 is 1.60 (what the gateway reports); 9.99 EUR at 0.9 EUR per USD = 11.10 USD.
    const gross = 999
    const tax = 160
    const usd = usdMinor(gross, 'EUR', RATES.EUR)
    expect(usd).toBe(1110)
    expect(chargeTaxUsd(gross, tax, usd, 0)).toEqual({tax_refunded_usd_minor: 0, tax_usd_minor: 178}) // 1110 x 160 / 999 = 177.78
    expect(usd - 178).toBe(932)
  })

  it('HU 27%, JP 10%, IN 18%: each in its own exponent, net + tax = gross in the currency and in USD', () => {
    const cases: [string, number, number][] = [
      ['HUF', 635_000, 135_000], // 6350.00 Ft incl. 27% = 1350.00 Ft VAT (5000 net)
      ['JPY', 1100, 100], // 1100 yen incl. 10% consumption tax
      ['INR', 118_000, 18_000], // 1180.00 rupees incl. 18% GST
      ['KWD', 19_990, 0], // no VAT in Kuwait: the net is the amount
    ]
    for (const [currency, gross, tax] of cases) {
      const usd = usdMinor(gross, currency, RATES[currency as keyof typeof RATES])
      const split = chargeTaxUsd(gross, tax, usd, 0)
      expect(split.tax_usd_minor, currency).toBe(share(usd, tax, gross))
      expect(usd - split.tax_usd_minor + split.tax_usd_minor, currency).toBe(usd)
      expect(split.tax_usd_minor, currency).toBeLessThanOrEqual(usd)
    }
    // JPY: 1100 yen at 150 per USD = 7.33 USD; its tax 100/1100 of that = 0.67 USD; net 6.66.
    expect(chargeTaxUsd(1100, 100, 733, 0)).toEqual({tax_refunded_usd_minor: 0, tax_usd_minor: 67})
  })

  it('a refund returns tax in proportion: all of it when the whole charge is refunded', () => {
    expect(chargeTaxUsd(999, 160, 1110, 1110)).toEqual({tax_refunded_usd_minor: 178, tax_usd_minor: 178})
    // Half refunded (555 cents of 1110): 555 x 160 / 999 = 88.89 -> 89.
    expect(chargeTaxUsd(999, 160, 1110, 555)).toEqual({tax_refunded_usd_minor: 89, tax_usd_minor: 178})
    expect(chargeTaxUsd(999, 0, 1110, 555)).toEqual({tax_refunded_usd_minor: 0, tax_usd_minor: 0})
  })

  it('a charge without an amount or a USD figure has no USD tax; a tax of the whole amount is all of its USD', () => {
    expect(chargeTaxUsd(null, 100, 500, 0)).toEqual({tax_refunded_usd_minor: 0, tax_usd_minor: 0})
    expect(chargeTaxUsd(1000, 100, null, 0)).toEqual({tax_refunded_usd_minor: 0, tax_usd_minor: 0})
    expect(taxShare(777, 1000, 1000)).toBe(777)
    expect(taxShare(777, 0, 1000)).toBe(0)
    expect(taxShare(777, 10, 0)).toBe(0)
  })

  it('MRR takes the tax share off the monthly figure; one-time products have none', () => {
    // A yearly 119.00 EUR subscription incl. 19.00 VAT: 132.22 USD a year, 11.02 a month, of which 100/119 is net: 9.26.
    expect(netMonthly(1102, 1900, 11_900)).toBe(1102 - share(1102, 1900, 11_900))
    expect(netMonthly(1102, 1900, 11_900)).toBe(926)
    expect(netMonthly(1102, 0, 11_900)).toBe(1102)
    expect(netMonthly(null, 1900, 11_900)).toBeNull()
    expect(netMonthly(1102, 1900, null)).toBe(1102)
  })

  it('a tax is never negative nor more than the amount it is part of', () => {
    expect(taxProblem(0, 0)).toBeUndefined()
    expect(taxProblem(999, 999)).toBeUndefined()
    expect(taxProblem(1000, 999)).toBe('is more than the amount it is part of')
    expect(taxProblem(-1, 999)).toBe('is negative')
    expect(taxProblem(5, null)).toBeUndefined()
  })
})

describe('import rows with a tax column', () => {
  it.each([
    ['JPY', '1100', '100', 1100, 100],
    ['USD', '10.70', '1.70', 1070, 170],
    ['EUR', '9.99', '1.60', 999, 160],
    ['KWD', '19.990', '2.990', 19_990, 2990],
    ['BHD', '5.500', '0.500', 5500, 500],
    ['HUF', '6350', '1350', 635_000, 135_000],
    ['ISK', '2480', '480', 2480, 480],
  ])('%s: amount %s with tax %s is stored exactly (%i and %i minor units)', async (currency, amount, tax, grossMinor, taxMinor) => {
    const v = await chargeMapper().mapLoading(chargeRow(amount, tax, currency))
    expect(typeof v, String(v)).toBe('object')
    const c = v as ChargeValues
    expect(c.amount_minor).toBe(grossMinor)
    expect(c.tax_minor).toBe(taxMinor)
    expect(c.amount_minor! - c.tax_minor).toBe(grossMinor - taxMinor)
    expect(c.tax_usd_minor).toBe(share(c.amount_usd_minor!, taxMinor, grossMinor))
  })

  it("minor units are the origin gateway's: gateway_a ISK 48000 is 480 krónur of tax (its two-decimal table), KWD 2990 is 2.990", async () => {
    const minor = chargeMapper({amount_unit: 'minor'})
    const isk = await minor.mapLoading(chargeRow('248000', '48000', 'ISK')) as ChargeValues
    expect([isk.amount_minor, isk.tax_minor]).toEqual([2480, 480])
    const kwd = await minor.mapLoading(chargeRow('19990', '2990', 'KWD')) as ChargeValues
    expect([kwd.amount_minor, kwd.tax_minor]).toEqual([19_990, 2990])
    // gateway_a ISK 48050 is 480.50 krónur: ISK has no decimals to hold it.
    expect(await minor.mapLoading(chargeRow('248000', '48050', 'ISK'))).toMatch(/^bad amount "48050" in tax: 48050 gateway_a units of ISK \(exponent 2\) is 480\.50 ISK, which ISK cannot hold exactly/)
  })

  it('a tax under the layout\'s separators: "1.234,56" in a German-locale layout', async () => {
    const de = chargeMapper({decimal_separator: ',', thousands_separator: '.'})
    const v = await de.mapLoading(chargeRow('7.733,50', '1.234,56', 'EUR')) as ChargeValues
    expect([v.amount_minor, v.tax_minor]).toEqual([773_350, 123_456])
  })

  it('an empty tax cell is no tax; a layout without a tax column has none', async () => {
    expect((await chargeMapper().mapLoading(chargeRow('9.99', '', 'EUR')) as ChargeValues).tax_minor).toBe(0)
    const none = new RowMapper<ChargeValues>(store, 'charges', {...layout('charges'), columns: {...layout('charges').columns, tax: 'no such column'}}, CHARGE_HEADER, fallback)
    const v = await none.mapLoading(chargeRow('9.99', '1.60', 'EUR')) as ChargeValues
    expect([v.tax_minor, v.tax_usd_minor, v.tax_refunded_usd_minor]).toEqual([0, 0, 0])
  })

  it('rejects a tax above the amount, a negative tax, more decimals than the currency has, a grouped cell the layout does not declare', async () => {
    const m = chargeMapper()
    expect(await m.mapLoading(chargeRow('9.99', '10.00', 'EUR'))).toBe('tax: 10.00 in tax is more than the amount 9.99 (the amount is what the customer paid, tax included)')
    expect(await m.mapLoading(chargeRow('9.99', '-1.60', 'EUR'))).toBe('bad amount "-1.60" in tax: is negative (a tax is part of what the customer paid)')
    expect(await m.mapLoading(chargeRow('1100', '99.5', 'JPY'))).toMatch(/^bad amount "99\.5" in tax: has 1 decimal/)
    expect(await m.mapLoading(chargeRow('1234.56', '1,234.56', 'USD'))).toMatch(/^bad amount "1,234\.56" in tax: /)
  })

  it('a refunded charge returns tax in proportion; fully refunded, all of it', async () => {
    const m = chargeMapper()
    const half = await m.mapLoading(chargeRow('10.70', '1.70', 'USD', '5.35')) as ChargeValues
    expect([half.tax_usd_minor, half.tax_refunded_usd_minor]).toEqual([170, 85])
    const whole = await m.mapLoading(chargeRow('10.70', '1.70', 'USD', '10.70')) as ChargeValues
    expect(whole.tax_refunded_usd_minor).toBe(whole.tax_usd_minor)
  })

  it('a row with tax is another event than the same row without it; a row without tax keeps the event id it always had', async () => {
    const m = chargeMapper()
    const withTax = await m.mapLoading(chargeRow('10.70', '1.70', 'USD')) as ChargeValues
    const without = await m.mapLoading(chargeRow('10.70', '', 'USD')) as ChargeValues
    expect(withTax.latest_event_id).not.toBe(without.latest_event_id)
    // The fingerprint of a row without tax hashes what it hashed before tax was read (test/commands/import.test.ts pins one).
    expect(without.latest_event_id).toMatch(/^import:\d+:1:[0-9a-f]{8}$/)
  })

  it('subscriptions: the tax of the whole row (quantity included); MRR is net of it', async () => {
    const m = new RowMapper<SubscriptionValues>(store, 'subscriptions', layout('subscriptions'), SUBSCRIPTION_HEADER, fallback)
    const v = await m.mapLoading(['sub_1', 'u1', '2026-01-15', '59.50', '19.00', 'EUR', 'active', 'month', '2']) as SubscriptionValues
    expect([v.amount_minor, v.tax_minor]).toEqual([11_900, 1900])
    // 119.00 EUR at 0.9 = 132.22 USD a month; 100/119 of it is net.
    expect(v.amount_usd_monthly_minor).toBe(13_222)
    expect(netMonthly(v.amount_usd_monthly_minor, v.tax_minor, v.amount_minor)).toBe(13_222 - share(13_222, 1900, 11_900))
    expect(await m.mapLoading(['sub_2', 'u1', '2026-01-15', '59.50', '119.01', 'EUR', 'active', 'month', '2'])).toBe('tax: 119.01 in tax is more than the amount 119.00 (the amount is what the customer paid, tax included)')
  })
})

/** Currencies of every exponent the store knows: 0 (JPY, ISK), 2 (USD, EUR, HUF, INR), 3 (KWD, BHD). */
const CURRENCIES = ['JPY', 'USD', 'EUR', 'HUF', 'ISK', 'INR', 'KWD', 'BHD'] as const

describe('property: net + tax = gross, to the minor unit, in every currency', () => {
  it('an import row keeps gross and tax exactly, and its USD net and tax add up to its USD amount', async () => {
    const m = chargeMapper()
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...CURRENCIES),
        fc.integer({max: 10 ** 12, min: 0}),
        fc.double({max: 1, min: 0, noNaN: true}),
        fc.double({max: 1, min: 0, noNaN: true}),
        async (currency, gross, taxPart, refundPart) => {
          const tax = Math.floor(gross * taxPart)
          const refunded = refundPart > 0.9 ? gross : Math.floor(gross * refundPart)
          const d = minorDigits(currency)
          const v = await m.mapLoading(chargeRow(minorToDecimalString(gross, d), minorToDecimalString(tax, d), currency, minorToDecimalString(refunded, d)))
          expect(typeof v, String(v)).toBe('object')
          const c = v as ChargeValues
          // Exact in the currency: what was written is what is kept.
          expect(c.amount_minor).toBe(gross)
          expect(c.tax_minor).toBe(tax)
          const net = c.amount_minor! - c.tax_minor
          expect(minorToDecimalString(net, d)).toBe(decimalDifference(minorToDecimalString(gross, d), minorToDecimalString(tax, d)))
          // In USD: the tax's share, rounded once; the net is the rest; a refund returns tax in proportion.
          const usd = c.amount_usd_minor!
          expect(c.tax_usd_minor).toBe(share(usd, tax, gross))
          expect(c.tax_usd_minor).toBeGreaterThanOrEqual(0)
          expect(c.tax_usd_minor).toBeLessThanOrEqual(usd)
          expect(usd - c.tax_usd_minor + c.tax_usd_minor).toBe(usd)
          expect(c.tax_refunded_usd_minor).toBeLessThanOrEqual(c.tax_usd_minor)
          expect(c.tax_refunded_usd_minor).toBeLessThanOrEqual(c.amount_refunded_usd_minor)
          if (refunded === gross) expect(c.tax_refunded_usd_minor).toBe(c.tax_usd_minor)
          // What the report counts of it: never negative, and with the tax it is the gross net of refunds.
          const netRevenue = usd - c.tax_usd_minor - (c.amount_refunded_usd_minor - c.tax_refunded_usd_minor)
          const taxCollected = c.tax_usd_minor - c.tax_refunded_usd_minor
          expect(netRevenue).toBeGreaterThanOrEqual(0)
          expect(taxCollected).toBeGreaterThanOrEqual(0)
          expect(netRevenue + taxCollected).toBe(usd - c.amount_refunded_usd_minor)
        },
      ),
      {numRuns: 2000},
    )
  })

  it("the gateway's minor units: gateway_a amounts of every currency read into storage units, net + tax = gross", async () => {
    const m = chargeMapper({amount_unit: 'minor'})
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('JPY', 'USD', 'EUR', 'KWD', 'BHD', 'INR'), fc.integer({max: 10 ** 10, min: 0}), fc.double({max: 1, min: 0, noNaN: true}), async (currency, units, taxPart) => {
        // gateway_a KWD and BHD amounts must end in 0 (a step of 10 fils); these currencies share storage's exponent otherwise.
        const step = currency === 'KWD' || currency === 'BHD' ? 10 : 1
        const gross = units - (units % step)
        const tax = Math.floor((gross * taxPart) / step) * step
        const c = await m.mapLoading(chargeRow(String(gross), String(tax), currency)) as ChargeValues
        expect(typeof c, String(c)).toBe('object')
        expect(c.amount_minor! - c.tax_minor + c.tax_minor).toBe(c.amount_minor)
        expect(c.amount_minor).toBe(gross)
        expect(c.tax_minor).toBe(tax)
      }),
      {numRuns: 500},
    )
  })
})

/** a - b of two non-negative decimal strings with the same decimals, in BigInt (independent of the code under test). */
function decimalDifference(a: string, b: string): string {
  const dot = a.indexOf('.')
  const decimals = dot === -1 ? 0 : a.length - dot - 1
  const n = BigInt(a.replace('.', '')) - BigInt(b.replace('.', ''))
  const s = n.toString().padStart(decimals + 1, '0')
  return decimals === 0 ? s : `${s.slice(0, -decimals)}.${s.slice(-decimals)}`
}

describe('a tax that meets an amount smaller than it (events in any order)', () => {
  const key = {origin: 'gateway_b', origin_id: 'ch_order', user_id: 'u_order'}
  const body = {amount: 3, created: 1_767_225_600, currency: 'USD', origin: 'gateway_b', origin_id: 'ch_order', product: 'pro_monthly', status: 'succeeded', user_id: 'u_order'}

  it('an update is refused when it arrives after the record (it is checked against it); kept before its create, the tax is bounded by the amount', async () => {
    const at = (id: string, timestamp: number) => ({id, timestamp})
    store.db.exec("DELETE FROM charges WHERE user_id = 'u_order'; DELETE FROM events; DELETE FROM pending_fields")
    // Kept first: the create meets it and the tax is the whole amount (net 0), never more.
    expect((await updateCharge(store, key, {tax: 5}, at('u', 1_767_312_000))).outcome).toBe('pending')
    const created = await createCharge(store, body, at('c', 1_767_300_000))
    expect(created.record).toMatchObject({amount: 3, net: 0, net_usd: 0, tax: 3, tax_usd: 3})
    // Delivered after the record exists, the same update is refused and nothing changes.
    store.db.exec("DELETE FROM charges WHERE user_id = 'u_order'; DELETE FROM events; DELETE FROM pending_fields")
    await createCharge(store, body, at('c', 1_767_300_000))
    await expect(async () => await updateCharge(store, key, {tax: 5}, at('u', 1_767_312_000))).rejects.toThrow('invalid charge update: tax: 5 is more than the amount 3')
    expect((await store.revenue.rows('charges', [key]))[0]).toMatchObject({tax_minor: 0})
  })
})
