import fc from 'fast-check'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {productByApiId, type ProductRow} from '../../src/catalog/lookup.js'
import type {ImportKind, Preset} from '../../src/import/presets.js'
import {RowMapper} from '../../src/import/rows.js'
import type {ChargeValues, SubscriptionValues} from '../../src/revenue/store.js'
import {openSqliteStore, type SqliteStore} from '../../src/store/db.js'
import {addProduct, setRates} from '../helpers/revenue-fixtures.js'

/**
 * RowMapper skips the zod schema (ImportedCharge, ImportedSubscription) for rows that surely
 * pass it (src/import/rows.ts, "surely passes"). The schema is the reference: for any row,
 * the mapper with the shortcut must give what it gives with every row through the schema
 * (schemaEveryRow): the same accepted values, or the same reason. The rows are generated near
 * the edges the shortcut decides on: signs, decimals and digits of amounts, currencies of 0 to
 * 4 decimals, countries, statuses, ids with control, blank, surrogate and non-ASCII
 * characters or about 255 long, metadata about 4,096 and 16,384 characters as JSON, dates.
 */

let store: SqliteStore
let fallback: ProductRow

beforeAll(async () => {
  store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rows-shortcut-')), 'store.db'))
  addProduct(store.db, {api_id: 'pro_monthly', base_px: 10, interval: 'month'})
  addProduct(store.db, {api_id: 'pro_yearly', base_px: 100, interval: 'year'})
  addProduct(store.db, {api_id: 'lifetime', base_px: 199, interval: 'one_time'})
  setRates(store.db, '2020-01-01', {BHD: 0.376, CLF: 0.025, EUR: 0.9, HUF: 360, ISK: 140, JPY: 150, KWD: 0.31, USD: 1})
  fallback = (await productByApiId(store, 'pro_monthly'))!
})

afterAll(async () => await store?.close())

const CHARGE_HEADER = ['id', 'user', 'created', 'refunded_at', 'amount', 'refunded', 'currency', 'status', 'country', 'product', 'converted_amount', 'converted_currency', 'a (metadata)', 'b (metadata)']
const SUBSCRIPTION_HEADER = ['id', 'user', 'created', 'amount', 'currency', 'status', 'country', 'product', 'interval', 'interval_count', 'quantity', 'cancel_at', 'canceled_at', 'trial_start', 'trial_end']

function layout(kind: ImportKind, name: string, extra: Partial<Preset>): Preset {
  const columns: Record<string, string> =
    kind === 'charges'
      ? {amount: 'amount', amount_refunded: 'refunded', converted_amount: 'converted_amount', converted_currency: 'converted_currency', country: 'country', created: 'created', currency: 'currency', origin_id: 'id', product: 'product', status: 'status', user_id: 'user'}
      : {amount: 'amount', cancel_at: 'cancel_at', canceled_at: 'canceled_at', country: 'country', created: 'created', currency: 'currency', interval: 'interval', interval_count: 'interval_count', origin_id: 'id', product: 'product', quantity: 'quantity', status: 'status', trial_end: 'trial_end', trial_start: 'trial_start', user_id: 'user'}
  return {
    amount_unit: 'major',
    columns,
    decimal_separator: '.',
    detect: [],
    event_timestamp: kind === 'charges' ? ['created', 'refunded_at'] : undefined,
    kind,
    metadata_suffix: kind === 'charges' ? ' (metadata)' : undefined,
    name,
    origin: 'gateway_a',
    thousands_separator: null,
    ...extra,
  }
}

/** Layouts: plain numbers with mapped statuses (one mapped to a status no schema knows), grouped numbers with statuses as written, the gateway's minor units; one in a zone, one with a constant user id. */
function layouts(kind: ImportKind): Preset[] {
  const statuses: Record<string, string> =
    kind === 'charges'
      ? {failed: 'failed', odd: 'refunded', paid: 'succeeded', pending: 'pending', refunded: 'succeeded', succeeded: 'succeeded'}
      : {active: 'active', canceled: 'canceled', in_trial: 'trialing', odd: 'paused', past_due: 'active', trialing: 'trialing'}
  return [
    layout(kind, 'plain', {refunded_statuses: ['refunded'], statuses}),
    layout(kind, 'grouped', {decimal_separator: ',', thousands_separator: '.', time_zone: 'Europe/Berlin'}),
    layout(kind, 'minor units', {amount_unit: 'minor', constants: {user_id: 'acct_1'}, statuses, thousands_separator: ','}),
  ]
}

type Pair = {forced: RowMapper<ChargeValues | SubscriptionValues>; label: string; shortcut: RowMapper<ChargeValues | SubscriptionValues>}

function pairs(kind: ImportKind): Pair[] {
  const header = kind === 'charges' ? CHARGE_HEADER : SUBSCRIPTION_HEADER
  return layouts(kind).flatMap((l) =>
    [undefined, fallback].map((product) => {
      const forced = new RowMapper<ChargeValues | SubscriptionValues>(store, kind, l, header, product)
      forced.schemaEveryRow = true
      return {forced, label: `${l.name}${product ? ', --product' : ''}`, shortcut: new RowMapper<ChargeValues | SubscriptionValues>(store, kind, l, header, product)}
    }),
  )
}

/** Mostly `good` (so rows get past the reading and reach the shortcut), sometimes `edge`. */
const edgy = <T>(good: fc.Arbitrary<T>, edge: fc.Arbitrary<T>, goodWeight = 3) => fc.oneof({arbitrary: good, weight: goodWeight}, {arbitrary: edge, weight: 1})
const padded = (text: fc.Arbitrary<string>) => fc.tuple(fc.constantFrom('', '', ' ', '\t'), text, fc.constantFrom('', '', ' ')).map(([a, t, b]) => a + t + b)
const digits = (maxLength: number) => fc.string({maxLength, unit: fc.constantFrom('0', '1', '5', '9')})

const amount = edgy(
  fc.oneof(fc.nat(1_000_000).map(String), fc.tuple(fc.nat(100_000), fc.nat(99)).map(([a, b]) => `${a}.${String(b).padStart(2, '0')}`)),
  padded(
    fc.oneof(
      {
        arbitrary: fc
          .tuple(fc.constantFrom('', '', '-', '+', '\u2212'), digits(20), fc.option(fc.tuple(fc.constantFrom('.', ','), digits(6))), fc.constantFrom('', '', '', 'e2', 'E-1', 'e'))
          .map(([sign, whole, frac, exp]) => `${sign}${whole}${frac ? frac[0] + frac[1] : ''}${exp}`),
        weight: 4,
      },
      {arbitrary: fc.stringMatching(/^-?[1-9]\d{0,2}([,. ]\d{3}){0,5}([.,]\d{0,4})?$/), weight: 2},
      {
        arbitrary: fc.constantFrom('0', '-0', '0.00', '-0.00', '9.99', '-9.99', '-1', '-1500', '1,234.56', '1.234,56', '1 234,56', '999999999999999', '9007199254740991', '9007199254740993', '90071992547409.91', '1e3', 'NaN', 'Infinity', '', '0x10', '\u0661\u0662'),
        weight: 2,
      },
    ),
  ),
  2,
)

const currency = edgy(fc.constantFrom('USD', 'usd', 'EUR', 'JPY', 'KWD'), fc.constantFrom(' eur', 'BHD', 'ISK', 'HUF', 'CLF', 'XXX', 'ABC', 'US', ''), 6)
const country = edgy(fc.constantFrom('', 'US', 'us', 'DE', ' fr '), fc.constantFrom('XX', 'ZZ', 'EU', 'UK', 'GB', 'USA', 'u', '\u00df', '\u0131t', 'U S', 'Us'))
const chargeStatus = edgy(fc.constantFrom('succeeded', 'pending', 'failed'), fc.constantFrom('paid', 'Paid', ' PAID ', 'Succeeded', 'refunded', 'odd', 'active', ''), 6)
const subscriptionStatus = edgy(fc.constantFrom('active', 'trialing', 'canceled'), fc.constantFrom('Active', 'in_trial', 'past_due', 'pending', 'paused', 'odd', 'succeeded', ''), 6)
const GOOD_DATES = ['2026-01-15', '2026-01-15 10:00', '2026-01-15T10:00:00+02:00', '1767225600']
const EDGE_DATES = [' 2026-03-01 ', '1767225600000', '2026-02-30', '2019-06-01', '999999999', '2286-11-21', 'soon', '']
const date = edgy(fc.constantFrom(...GOOD_DATES), fc.constantFrom(...EDGE_DATES), 8)
const optionalDate = edgy(fc.constantFrom('', '', ...GOOD_DATES), fc.constantFrom(...EDGE_DATES), 8)

const odd = fc.constantFrom('a', 'Z', '0', '-', '_', ' ', '\t', '\u00a0', '\u0000', '\u001f', '\u007f', '\u0085', '\u009f', '\ud800', '\udfff', '\ud83d\ude00', '\u00e9', '\u2028', '\ufeff', '\u3000', '"', ',')
const id = edgy(
  fc.stringMatching(/^[a-z0-9_]{1,12}$/),
  fc.oneof(
    {arbitrary: fc.string({maxLength: 8, unit: odd}), weight: 3},
    {arbitrary: fc.tuple(fc.integer({max: 260, min: 250}), fc.constantFrom('x', '\u00e9', '\ud83d\ude00', ' ', '\u0001')).map(([n, c]) => `i${c.repeat(n)}`), weight: 1},
  ),
  4,
)
const product = edgy(fc.constantFrom('pro_monthly', 'pro_yearly', 'lifetime', ''), fc.oneof(fc.constant('unknown'), id), 6)

/** A metadata cell: empty, short, or long enough that two of them as JSON are near 4,096 or 16,384 characters (quotes and control characters grow when escaped). */
const metadata = fc.oneof(
  {arbitrary: fc.constant(''), weight: 3},
  {arbitrary: fc.string({maxLength: 20}), weight: 3},
  {
    arbitrary: fc
      .tuple(fc.constantFrom(1000, 2020, 2040, 4070, 4090, 8160, 8180, 16_350, 16_370), fc.integer({max: 40, min: -40}), fc.constantFrom('x', '"', '\u0001', '\u00e9', '\\'))
      .map(([n, d, c]) => c.repeat(Math.max(0, c === '"' || c === '\\' ? Math.floor((n + d) / 2) : c === '\u0001' ? Math.floor((n + d) / 6) : n + d))),
    weight: 2,
  },
)

const chargeRow = fc
  .record({
    a: metadata,
    amount,
    b: metadata,
    converted: fc.oneof({arbitrary: fc.constant(''), weight: 3}, {arbitrary: amount, weight: 1}),
    convertedCurrency: fc.constantFrom('', '', 'usd', 'USD', 'EUR'),
    country,
    created: date,
    currency,
    id,
    product,
    refunded: fc.oneof({arbitrary: fc.constant(''), weight: 3}, {arbitrary: fc.constant('0'), weight: 1}, {arbitrary: amount, weight: 1}),
    refundedAt: optionalDate,
    status: chargeStatus,
    user: id,
  })
  .map((r) => [r.id, r.user, r.created, r.refundedAt, r.amount, r.refunded, r.currency, r.status, r.country, r.product, r.converted, r.convertedCurrency, r.a, r.b])

const subscriptionRow = fc
  .record({
    amount,
    cancelAt: optionalDate,
    canceledAt: optionalDate,
    country,
    created: date,
    currency,
    id,
    interval: edgy(fc.constantFrom('', 'month', 'year'), fc.constantFrom('3 month', 'fortnight'), 6),
    intervalCount: edgy(fc.constantFrom('', '1'), fc.constantFrom('3', '0', 'x'), 6),
    product,
    quantity: edgy(fc.constantFrom('', '1', '2'), fc.constantFrom('0', '99999999999', 'x'), 6),
    status: subscriptionStatus,
    trialEnd: optionalDate,
    trialStart: optionalDate,
    user: id,
  })
  .map((r) => [r.id, r.user, r.created, r.amount, r.currency, r.status, r.country, r.product, r.interval, r.intervalCount, r.quantity, r.cancelAt, r.canceledAt, r.trialStart, r.trialEnd])

/**
 * Messages only the schemas give: the property must meet them, not only rows the reading
 * refuses first. (Id's "must not be blank" cannot be met: cells are trimmed as String.trim
 * does, so a blank id is an empty cell, "missing id".)
 */
const SCHEMA_MESSAGES = ['must not be negative', 'must be at most 255 characters', 'unknown country', 'must be at most 16384 characters', 'unknown status', 'must not contain control characters']

async function compare(kind: ImportKind, row: fc.Arbitrary<string[]>): Promise<void> {
  const mappers = pairs(kind)
  const seen = {accepted: 0, rejected: 0, schema: new Set<string>()}
  await fc.assert(
    fc.asyncProperty(row, fc.nat(mappers.length - 1), async (cells, m) => {
      const {forced, label, shortcut} = mappers[m]
      const expected = await forced.mapLoading(cells)
      expect({label, mapped: await shortcut.mapLoading(cells)}).toEqual({label, mapped: expected})
      expect(shortcut.takeSettled()).toEqual(forced.takeSettled())
      if (typeof expected === 'string') {
        seen.rejected++
        for (const s of SCHEMA_MESSAGES) if (expected.includes(s)) seen.schema.add(s)
      } else seen.accepted++
    }),
    {numRuns: 4000},
  )
  // The generator reaches both outcomes and the schema's own refusals.
  expect(seen.accepted).toBeGreaterThan(200)
  expect(seen.rejected).toBeGreaterThan(200)
  const expectedMessages = kind === 'charges' ? SCHEMA_MESSAGES : SCHEMA_MESSAGES.filter((s) => !s.includes('16384'))
  expect([...seen.schema].sort()).toEqual([...expectedMessages].sort())
}

describe('import rows: the "surely passes" shortcut', () => {
  it('maps charge rows as the schema path does (values or reason)', async () => {
    await compare('charges', chargeRow)
  })

  it('maps subscription rows as the schema path does (values or reason)', async () => {
    await compare('subscriptions', subscriptionRow)
  })

  it('forcing the schema path changes nothing for a plain row', async () => {
    const [{forced, shortcut}] = pairs('charges')
    const cells = ['ch_1', 'u_1', '2026-01-15', '', '9.99', '', 'USD', 'paid', 'US', 'pro_monthly', '', '', 'x', '']
    const mapped = await shortcut.mapLoading(cells)
    expect(mapped).toMatchObject({amount_minor: 999, country: 'US', currency: 'USD', metadata_json: '{"a":"x"}', origin_id: 'ch_1', status: 'succeeded', user_id: 'u_1'})
    expect(await forced.mapLoading(cells)).toEqual(mapped)
  })
})
