import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {productByApiId, type ProductRow} from '../../src/catalog/lookup.js'
import type {ImportKind, Preset} from '../../src/import/presets.js'
import {loadPricingEngine} from '../../src/import/products.js'
import {parseDate, RowMapper} from '../../src/import/rows.js'
import type {ChargeValues, SubscriptionValues} from '../../src/revenue/store.js'
import {openSqliteStore, type SqliteStore} from '../../src/store/db.js'
import {addProduct, setRates} from '../helpers/revenue-fixtures.js'

/**
 * What one export row becomes (src/import/rows.ts, RowMapper; docs/revenue.md, "Imports"):
 * the charge or subscription it is (amounts in minor units, USD figures, interval, status,
 * dates, its event), or the reason a bad row is rejected, as the rejects file shows it.
 */

let store: SqliteStore
let monthly: ProductRow

beforeAll(async () => {
  // Telling products apart by amount prices them (the importer loads it for layouts that read products).
  await loadPricingEngine()
  store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'rows-mapping-')), 'store.db'))
  addProduct(store.db, {api_id: 'pro_monthly', base_px: 10, integrations: [{ref: 'prod_pro', type: 'gateway_a'}], interval: 'month'})
  addProduct(store.db, {api_id: 'pro_yearly', base_px: 100, interval: 'year'})
  // One gateway product, two of ours: told apart by the row's price id or amount.
  addProduct(store.db, {api_id: 'team_yearly', base_px: 100, integrations: [{interval: 'year', interval_count: 1, ref: 'prod_team', type: 'gateway_a_with_interval'}], interval: 'year'})
  addProduct(store.db, {api_id: 'team_quarterly', base_px: 25, integrations: [{interval: 'month', interval_count: 3, ref: 'prod_team', type: 'gateway_a_with_interval'}], interval: 'month', interval_count: 3})
  setRates(store.db, '2020-01-01', {EUR: 0.8, ISK: 140, JPY: 100, KWD: 0.3, USD: 1})
  monthly = (await productByApiId(store, 'pro_monthly'))!
})

afterAll(async () => await store?.close())

const JAN15 = 1_768_435_200 // 2026-01-15T00:00:00Z
const DAY = 86_400

function layout(kind: ImportKind, columns: Record<string, string | string[]>, extra: Partial<Preset> = {}): Preset {
  return {amount_unit: 'major', columns, decimal_separator: '.', detect: [], kind, name: 'test layout', origin: 'gateway_a', thousands_separator: null, ...extra}
}

const CHARGE_HEADER = ['id', 'user', 'customer', 'created', 'refunded_at', 'amount', 'refunded', 'currency', 'status', 'country', 'product', 'tax', 'conv', 'conv_cur', 'conv_ref', 'a (metadata)']
const CHARGE_COLUMNS = {
  amount: 'amount',
  amount_refunded: 'refunded',
  converted_amount: 'conv',
  converted_amount_refunded: 'conv_ref',
  converted_currency: 'conv_cur',
  country: 'country',
  created: 'created',
  currency: 'currency',
  origin_id: 'id',
  product: 'product',
  status: 'status',
  tax: 'tax',
  user_id: ['user', 'customer'],
}
const CHARGE = {amount: '9.99', created: '2026-01-15', currency: 'usd', id: 'ch_1', product: 'pro_monthly', status: 'succeeded', user: 'u1'}

type Cells = Record<string, string>

function charges(extra: Partial<Preset> = {}, header = CHARGE_HEADER, columns: Record<string, string | string[]> = CHARGE_COLUMNS, product?: ProductRow) {
  const m = new RowMapper<ChargeValues>(store, 'charges', layout('charges', columns, {event_timestamp: ['created', 'refunded_at'], metadata_suffix: ' (metadata)', ...extra}), header, product)
  return {m, row: async (cells: Cells = {}) => await m.mapLoading(header.map((h) => ({...CHARGE, ...cells})[h] ?? ''))}
}

const SUB_HEADER = ['id', 'user', 'created', 'amount', 'currency', 'status', 'product', 'interval', 'interval_count', 'quantity', 'cancel_at', 'canceled_at', 'trial_start', 'trial_end', 'tax', 'country']
const SUB_COLUMNS = {
  amount: 'amount',
  cancel_at: 'cancel_at',
  canceled_at: 'canceled_at',
  country: 'country',
  created: 'created',
  currency: 'currency',
  interval: 'interval',
  interval_count: 'interval_count',
  origin_id: 'id',
  product: 'product',
  quantity: 'quantity',
  status: 'status',
  tax: 'tax',
  trial_end: 'trial_end',
  trial_start: 'trial_start',
  user_id: 'user',
}
const SUB = {amount: '10.00', created: '2026-01-15', currency: 'usd', id: 'sub_1', product: 'pro_monthly', status: 'active', user: 'u1'}

function subscriptions(extra: Partial<Preset> = {}) {
  const m = new RowMapper<SubscriptionValues>(store, 'subscriptions', layout('subscriptions', SUB_COLUMNS, extra), SUB_HEADER, undefined)
  return {m, row: async (cells: Cells = {}) => await m.mapLoading(SUB_HEADER.map((h) => ({...SUB, ...cells})[h] ?? ''))}
}

const dateHint = 'expected YYYY-MM-DD[ HH:MM[:SS]], an ISO date-time, or UNIX seconds; without an offset in UTC'

describe('a charge row', () => {
  it('becomes the charge: minor units, USD at the store rate, no refund, its event at its creation', async () => {
    expect(await charges().row()).toEqual({
      amount_minor: 999,
      amount_refunded_minor: 0,
      amount_refunded_usd_minor: 0,
      amount_usd_minor: 999,
      country: null,
      created: JAN15,
      currency: 'USD',
      // The event id of this row in every store that imported it: a re-run finds it unchanged.
      latest_event_id: 'import:1768435200:1:190dd789',
      latest_event_timestamp: JAN15,
      metadata_json: null,
      origin: 'gateway_a',
      origin_id: 'ch_1',
      product_id: monthly.id,
      status: 'succeeded',
      tax_minor: 0,
      tax_refunded_usd_minor: 0,
      tax_usd_minor: 0,
      user_id: 'u1',
    })
  })

  it('with metadata, a country and a tax: each kept, and in the event id', async () => {
    expect(await charges().row({'a (metadata)': 'x', country: 'de', tax: '1.00'})).toMatchObject({
      country: 'DE',
      latest_event_id: 'import:1768435200:1:b8af2bfc',
      metadata_json: '{"a":"x"}',
      tax_minor: 100,
      tax_usd_minor: 100,
    })
  })

  it('a later refund date is the event; the status moves it after the paid row of the same moment', async () => {
    const {row} = charges()
    expect(await row({refunded: '1.00', refunded_at: '2026-01-20'})).toMatchObject({amount_refunded_minor: 100, latest_event_timestamp: JAN15 + 5 * DAY})
    expect(await row({refunded_at: '2026-01-10'})).toMatchObject({latest_event_timestamp: JAN15})
    expect(await row({refunded_at: ' '})).toMatchObject({latest_event_timestamp: JAN15})
    const ids = [await row(), await row({refunded: '1.00'}), await row({refunded: '9.99'})].map((c) => (c as ChargeValues).latest_event_id.split(':')[2])
    expect(ids).toEqual(['1', '2', '3'])
  })

  it('user ids from the first non-empty of their columns, trimmed; a cell of spaces is empty', async () => {
    const {row} = charges()
    expect(await row({customer: 'c1', user: '  '})).toMatchObject({user_id: 'c1'})
    expect(await row({customer: 'c1', user: ' u2 '})).toMatchObject({user_id: 'u2'})
    expect(await row({customer: ' ', user: ''})).toBe('missing user id: user / customer are empty')
    const one = charges({}, CHARGE_HEADER, {...CHARGE_COLUMNS, user_id: 'user'})
    expect(await one.row({user: ''})).toBe('missing user id: user is empty')
  })

  it('a header read with its byte-order mark and spaces; metadata named by the suffix, trimmed, or by the layout', async () => {
    const header = ['\uFEFFid ', ' user', 'created', 'amount', 'currency', 'status', 'product', 'plan  (metadata)', ' (metadata)', 'seats']
    const m = new RowMapper<ChargeValues>(store, 'charges', layout('charges', {amount: 'amount', created: 'created', currency: 'currency', origin_id: 'id', product: 'product', status: 'status', user_id: 'user'}, {metadata: ['seats', 'absent'], metadata_suffix: ' (metadata)'}), header, undefined)
    expect(m.header[0]).toBe('id')
    expect(await m.mapLoading(['ch_9', 'u9', '2026-01-15', '5.00', 'usd', 'succeeded', 'pro_monthly', 'gold', 'nameless', '3'])).toMatchObject({metadata_json: '{"plan":"gold","seats":"3"}', origin_id: 'ch_9', user_id: 'u9'})
  })

  it('constants fill a field without a column (trimmed); a field of the layout missing from the header is named with how to supply it', async () => {
    const header = ['id', 'created', 'amount', 'currency', 'status']
    const columns = {amount: 'amount', created: 'created', currency: 'currency', origin_id: 'id', product: 'product', status: 'status', user_id: 'Customer'}
    const m = new RowMapper<ChargeValues>(store, 'charges', layout('charges', columns, {constants: {user_id: ' acct_1 '}}), header, monthly)
    expect(await m.mapLoading(['ch_2', '2026-01-15', '5.00', 'usd', 'succeeded'])).toMatchObject({product_id: monthly.id, user_id: 'acct_1'})
    expect(() => new RowMapper(store, 'charges', layout('charges', columns), header, undefined)).toThrow(
      'the file has no column for user_id (Customer), product (product) (test layout); for user_id, pass --user-id-column COLUMN (a column of the file that holds it, such as Customer ID or a metadata column) or --user-id VALUE (one user id on every row, such as the connected account\'s id); for product, pass --product API_ID for one product on every row; or pass --mapping FILE naming the columns of this layout (or a value in its constants; see docs/revenue.md)',
    )
    expect(() => new RowMapper(store, 'charges', layout('charges', {...columns, user_id: 'id'}, {columns: {created: 'created', origin_id: 'id', product: 'product', user_id: 'id'}}), header, monthly)).toThrow(
      'the file has no column for amount, currency, status (test layout); pass --mapping FILE naming the columns of this layout (or a value in its constants; see docs/revenue.md)',
    )
    expect(() => new RowMapper(store, 'charges', layout('charges', {...columns, user_id: ['Customer', 'Customer ID']}), header, monthly)).toThrow(/^the file has no column for user_id \(Customer or Customer ID\) \(test layout\); for user_id, /)
    expect(() => new RowMapper(store, 'charges', layout('charges', columns), ['id', 'ID', 'created'], undefined)).toThrow('the header names a column twice: column "id" appears 2 times (columns 1 and 2); rename or remove one so every cell is read from the column meant')
  })

  it('statuses through the layout\'s mapping (keys trimmed, any case); "refunded" statuses refund the whole charge', async () => {
    const {row} = charges({refunded_statuses: [' Refunded '], statuses: {' Paid ': 'succeeded', Failed: 'failed', Refunded: 'succeeded'}})
    expect(await row({status: 'PAID'})).toMatchObject({amount_refunded_minor: 0, status: 'succeeded'})
    expect(await row({status: 'refunded'})).toMatchObject({amount_refunded_minor: 999, amount_refunded_usd_minor: 999, status: 'succeeded'})
    expect(await row({refunded: '2.00', status: 'Refunded'})).toMatchObject({amount_refunded_minor: 200})
    expect(await row({status: 'odd'})).toBe('unknown status "odd" in status (expected one of  Paid , Failed, Refunded)')
    expect(await row({status: ''})).toBe('missing status: status is empty')
    // Without a mapping the cell is the status, checked by the schema.
    expect(await charges().row({status: 'paid'})).toMatch(/^status: /)
  })

  it('the layout\'s zone reads dates without an offset; milliseconds are read; a bad zone is refused naming --tz', async () => {
    expect(await charges({time_zone: 'Europe/Berlin'}).row({created: '2026-01-15 10:00'})).toMatchObject({created: JAN15 + 9 * 3600})
    expect(await charges({time_zone: 'Europe/Berlin'}).row({created: 'x'})).toBe('bad date "x" in created (not a date or time in an accepted form; expected YYYY-MM-DD[ HH:MM[:SS]], an ISO date-time, or UNIX seconds; without an offset in Europe/Berlin)')
    expect(await charges().row({created: '1768435200000'})).toMatchObject({created: JAN15})
    expect(() => charges({time_zone: 'Nowhere/City'})).toThrow(/--tz/)
  })

  it.each([
    [{id: ''}, 'missing id: id is empty'],
    [{created: ''}, 'missing date: created is empty'],
    [{created: '2026-02-30'}, `bad date "2026-02-30" in created (February 2026 has 28 days; ${dateHint})`],
    [{refunded_at: 'soon'}, `bad date "soon" in refunded_at (not a date or time in an accepted form; ${dateHint})`],
    [{currency: 'xyz'}, 'currency: unknown currency "xyz" in currency (expected an ISO 4217 code such as USD)'],
    [{amount: '9.999'}, 'bad amount "9.999" in amount: has 3 decimals, more than USD has (2, ISO 4217); amounts are kept as charged, never rounded'],
    [{currency: 'krw'}, 'bad amount "9.99" in amount: has 2 decimals, more than KRW has (0, ISO 4217); amounts are kept as charged, never rounded'],
    [{refunded: 'x'}, 'bad amount "x" in refunded: is not a number (expected "." before decimals and no thousands separator, such as 1234.56)'],
    [{refunded: '10.00'}, 'amount_refunded: 10.00 is more than the amount 9.99'],
    [{product: ''}, 'missing product: product is empty (pass --product API_ID for rows without one)'],
    [{product: 'nope'}, 'unknown product "nope" in product (no api_id matches; add the integration to the product with "pricectl products update")'],
    [{tax: '-1'}, 'bad amount "-1" in tax: is negative (a tax is part of what the customer paid)'],
    [{tax: '10.00'}, 'tax: 10.00 in tax is more than the amount 9.99 (the amount is what the customer paid, tax included)'],
    [{tax: 'x'}, 'bad amount "x" in tax: is not a number (expected "." before decimals and no thousands separator, such as 1234.56)'],
    [{country: 'XX'}, 'country: unknown country "XX" (expected a two-letter ISO 3166 code such as US)'],
    [{currency: 'chf'}, 'no FX rate for CHF (add one with "pricectl fx set CHF RATE")'],
    // The first bad cell in the order the row is read is the reason.
    [{created: 'soon', currency: 'xyz', status: ''}, `bad date "soon" in created (not a date or time in an accepted form; ${dateHint})`],
  ])('%j is rejected: %s', async (cells, reason) => {
    expect(await charges().row(cells)).toBe(reason)
  })

  it('ids: at most 255 characters, printable; the product cell is checked as an id too', async () => {
    const {row} = charges()
    expect(await row({id: 'c'.repeat(255)})).toMatchObject({origin_id: 'c'.repeat(255)})
    expect(await row({id: 'c'.repeat(256)})).toBe('origin_id: must be at most 255 characters')
    expect(await row({user: 'u'.repeat(256)})).toBe('user_id: must be at most 255 characters')
    expect(await row({id: 'c'.repeat(256), product: 'p'.repeat(256), user: 'u'.repeat(256)})).toMatch(/^origin_id: must be at most 255 characters.*user_id: must be at most 255 characters/)
    expect(await row({product: 'a\u0007b'})).toBe('product: must not contain control characters or broken unicode, got "a\\u0007b"')
    expect(await subscriptions().row({product: 'a\u0007b'})).toBe('product: must not contain control characters or broken unicode, got "a\\u0007b"')
  })

  it('--product stands for an empty product cell, not for a product the cell names', async () => {
    const {row} = charges({}, CHARGE_HEADER, CHARGE_COLUMNS, monthly)
    expect(await row({product: ''})).toMatchObject({product_id: monthly.id})
    expect(await row({product: 'pro_yearly'})).toMatchObject({product_id: (await productByApiId(store, 'pro_yearly'))!.id})
    expect(await row({product: 'nope'})).toMatch(/^unknown product "nope"/)
  })

  it('a status without a mapping is the cell; an empty one is missing; a constant status is named by its field', async () => {
    expect(await charges().row({status: ''})).toBe('missing status: status is empty')
    expect(await charges().row({status: 'pending'})).toMatchObject({latest_event_id: expect.stringMatching(/^import:1768435200:0:/), status: 'pending'})
    const header = CHARGE_HEADER.filter((h) => h !== 'status')
    const {status: _s, ...columns} = CHARGE_COLUMNS
    const m = new RowMapper<ChargeValues>(store, 'charges', layout('charges', {...columns, status: 'Status'}, {constants: {status: 'odd'}, statuses: {paid: 'succeeded'}}), header, undefined)
    expect(await m.mapLoading(header.map((h) => ({...CHARGE} as Cells)[h] ?? ''))).toBe('unknown status "odd" in status (expected one of paid)')
  })

  it('a layout that declares no separators reads "." before decimals and no thousands separator', async () => {
    const {row} = charges({decimal_separator: undefined, thousands_separator: undefined})
    expect(await row({amount: '1234.56'})).toMatchObject({amount_minor: 123_456})
    expect(await row({amount: '1,234.56'})).toMatch(/^bad amount "1,234\.56" in amount: has ",", which is not a separator of this layout/)
  })

  it('a layout with other separators reads its amounts and words its reasons with them', async () => {
    const {row} = charges({decimal_separator: ',', thousands_separator: '.'})
    expect(await row({amount: '1.234,56', currency: 'eur', tax: '234,56'})).toMatchObject({amount_minor: 123_456, tax_minor: 23_456})
    expect(await row({amount: '1,234.56', currency: 'eur'})).toBe('bad amount "1,234.56" in amount: is not a number (expected "," before decimals and "." between thousands, such as 1234,56 or 1.234,56)')
  })

  it('a gateway product naming several of ours: the price id tells, else the amount, else the net of tax; the reason when nothing does', async () => {
    const {row} = charges({product_types: ['gateway_a', 'gateway_a_with_interval']}, [...CHARGE_HEADER, 'price'], {...CHARGE_COLUMNS, price: 'price'})
    const yearly = (await productByApiId(store, 'team_yearly'))!.id
    const quarterly = (await productByApiId(store, 'team_quarterly'))!.id
    expect(await row({amount: '25.00', price: 'year', product: 'prod_team'})).toMatchObject({product_id: yearly})
    expect(await row({amount: '25.00', product: 'prod_team'})).toMatchObject({product_id: quarterly})
    expect(await row({amount: '100.00', product: 'prod_team'})).toMatchObject({product_id: yearly})
    expect(await row({amount: '30.00', product: 'prod_team', tax: '5.00'})).toMatchObject({product_id: quarterly, tax_minor: 500})
    expect(await row({amount: '30.00', product: 'prod_team'})).toMatch(/^no price matches product "prod_team" in product: it is the gateway_a\/gateway_a_with_interval product of team_yearly \(year\) and team_quarterly \(3 month\); 30\.00 USD is no price of theirs/)
    const sub = new RowMapper<SubscriptionValues>(store, 'subscriptions', layout('subscriptions', SUB_COLUMNS, {product_types: ['gateway_a_with_interval']}), SUB_HEADER, undefined)
    const subRow = async (cells: Cells) => await sub.mapLoading(SUB_HEADER.map((h) => ({...SUB, ...cells})[h] ?? ''))
    expect(await subRow({amount: '30.00', product: 'prod_team', tax: '5.00'})).toMatchObject({interval: 'month', interval_count: 3, product_id: quarterly})
    expect(await subRow({amount: '30.00', interval: 'year', product: 'prod_team'})).toMatchObject({interval: 'year', product_id: yearly})
    // The tax column is the whole subscription's: with a quantity, no unit's net is known.
    expect(await subRow({amount: '30.00', product: 'prod_team', quantity: '2', tax: '5.00'})).toMatch(/^no price matches product "prod_team" in product: it is the gateway_a_with_interval product of team_yearly \(year\) and team_quarterly \(3 month\); 30\.00 USD is no price of theirs/)
    // A layout without a price column names no price id in the reason.
    const noPrice = charges({product_types: ['gateway_a_with_interval']})
    expect(await noPrice.row({amount: '30.00', product: 'prod_team'})).toMatch(/^no price matches product "prod_team" in product: it is the gateway_a_with_interval product of team_yearly \(year\) and team_quarterly \(3 month\); 30\.00 USD is no price of theirs/)
    expect(await noPrice.row({amount: '25.00', product: 'prod_team'})).toMatchObject({product_id: quarterly})
  })

  it('an amount whose USD figure is beyond exact integers is rejected with the reason, not thrown', async () => {
    expect(await charges().row({amount: '90071992547409.91', currency: 'eur'})).toMatch(/ EUR in USD is out of range: 11258999068426239 minor units is more than pricectl computes exactly \(9007199254740991\)$/)
  })

  it('an unknown product names the integrations the layout matches', async () => {
    expect(await charges({product_types: ['gateway_a', 'gateway_a_with_interval']}).row({product: 'nope'})).toBe(
      'unknown product "nope" in product (no gateway_a/gateway_a_with_interval integration or api_id matches; add the integration to the product with "pricectl products update")',
    )
    expect(await charges({product_types: ['gateway_a']}).row({product: 'prod_pro'})).toMatchObject({product_id: monthly.id})
  })
})

describe('what the gateway settled in USD', () => {
  it('its converted amount is the USD amount when the converted currency is USD (any case); a refund in proportion or its converted refund', async () => {
    const {m, row} = charges()
    expect(await row({conv: '10.50', conv_cur: 'Usd', conv_ref: '1.05', refunded: '1.00'})).toMatchObject({amount_refunded_minor: 100, amount_refunded_usd_minor: 105, amount_usd_minor: 1050})
    expect(await row({conv: '10.50', conv_cur: 'usd', refunded: '9.99'})).toMatchObject({amount_refunded_usd_minor: 1050, amount_usd_minor: 1050})
    expect(await row({conv: '10.50', conv_cur: 'USD'})).toMatchObject({amount_refunded_usd_minor: 0, amount_usd_minor: 1050})
    expect(await row({conv: '10.50', conv_cur: 'usd', currency: 'eur'})).toMatchObject({amount_usd_minor: 1050, latest_event_id: 'import:1768435200:1:070b30e2'})
    // EUR 1.00 refunded at 0.8 per USD, without a converted refund (or one above the settled amount): 1.25 USD.
    expect(await row({conv: '10.50', conv_cur: 'usd', currency: 'eur', refunded: '1.00'})).toMatchObject({amount_refunded_usd_minor: 125, amount_usd_minor: 1050, latest_event_id: 'import:1768435200:2:60a88d7d'})
    expect(await row({conv: '10.50', conv_cur: 'usd', conv_ref: '11', currency: 'eur', refunded: '1.00'})).toMatchObject({amount_refunded_usd_minor: 125, amount_usd_minor: 1050})
    expect(await row({conv: '10.50', conv_cur: 'usd', conv_ref: '0', currency: 'eur', refunded: '1.00'})).toMatchObject({amount_refunded_usd_minor: 125})
    expect(await row({conv: '10.50', conv_cur: 'usd', conv_ref: '10.50', currency: 'eur', refunded: '1.00'})).toMatchObject({amount_refunded_usd_minor: 1050})
    expect(await row({conv: '0', conv_cur: 'usd'})).toMatchObject({amount_usd_minor: 0})
    // Rows settled in USD, and how far their USD is from the store's: 10.50 vs 9.99 USD three
    // times, 10.50 vs 12.49 (EUR 9.99) five times, 0 vs 9.99 once.
    expect(m.takeSettled()).toEqual({difference_minor: 3 * 51 - 5 * 199 - 999, rows: 9})
    expect(m.takeSettled()).toEqual({difference_minor: 0, rows: 0})
  })

  it('other converted currencies, an empty converted amount, a layout without the converted currency: the store rate', async () => {
    const {m, row} = charges()
    for (const cur of ['eur', 'US', 'usd2', '', 'uSd ']) expect(await row({conv: '10.50', conv_cur: cur}), cur).toMatchObject({amount_usd_minor: cur === 'uSd ' ? 1050 : 999})
    expect(await row({conv: '', conv_cur: 'usd'})).toMatchObject({amount_usd_minor: 999})
    expect(m.takeSettled().rows).toBe(1)
    const {converted_currency: _c, ...columns} = CHARGE_COLUMNS
    expect(await charges({}, CHARGE_HEADER, columns).row({conv: '10.50', conv_cur: 'usd'})).toMatchObject({amount_usd_minor: 999})
  })

  it('rejects a converted amount that is no amount or is negative, and a bad converted refund', async () => {
    const {row} = charges()
    expect(await row({conv: '-1', conv_cur: 'usd'})).toBe('bad amount "-1" in conv: is negative (what the gateway settled is never below zero)')
    expect(await row({conv: 'x', conv_cur: 'usd'})).toBe('bad amount "x" in conv: is not a number (expected "." before decimals and no thousands separator, such as 1234.56)')
    expect(await row({conv: '10.50', conv_cur: 'usd', conv_ref: 'x', refunded: '1.00'})).toBe('bad amount "x" in conv_ref: is not a number (expected "." before decimals and no thousands separator, such as 1234.56)')
    // Without a rate a partial refund has no USD figure.
    expect(await row({conv: '10.50', conv_cur: 'usd', currency: 'chf', refunded: '1.00'})).toBe('no FX rate for CHF (add one with "pricectl fx set CHF RATE")')
    expect(await row({conv: '10.50', conv_cur: 'usd', currency: 'chf'})).toMatchObject({amount_usd_minor: 1050, currency: 'CHF'})
  })
})

describe("amounts in the gateway's minor units (amount_unit minor)", () => {
  it("read with the origin gateway's exponent into storage minor units; refused when storage cannot hold them or with a decimal separator", async () => {
    const {row} = charges({amount_unit: 'minor'})
    // gateway_a writes ISK with two decimals: 48000 is 480 kr (ISK has none).
    expect(await row({amount: '48000', currency: 'isk'})).toMatchObject({amount_minor: 480, amount_usd_minor: 343})
    expect(await row({amount: '2990', currency: 'kwd'})).toMatchObject({amount_minor: 2990})
    expect(await row({amount: '999', currency: 'usd'})).toMatchObject({amount_minor: 999})
    expect(await row({amount: '48050', currency: 'isk'})).toBe('bad amount "48050" in amount: 48050 gateway_a units of ISK (exponent 2) is 480.50 ISK, which ISK cannot hold exactly (0 decimals, ISO 4217)')
    expect(await row({amount: '-100', currency: 'usd'})).toMatch(/^amount: /)
    expect(await row({amount: '9.99', currency: 'usd'})).toBe('bad amount "9.99" in amount: has a decimal separator, but the layout\'s amounts are whole minor units (amount_unit "minor"; expected a whole number of minor units such as 123456, no separators)')
  })
})

describe("a store's gateway table overrides (pricectl gateways)", () => {
  it("are the origin gateway's exponent for the currency they name; an amount storage cannot hold is out of range", async () => {
    const at = '2026-01-01T00:00:00.000Z'
    await store.config.saveGatewayRuleOverride({currency: 'ISK', divisible_by: 1, exponent: 0, gateway: 'gateway_a', max_amount: null, min_amount: null}, at)
    await store.config.saveGatewayRuleOverride({currency: 'USD', divisible_by: 1, exponent: 0, gateway: 'gateway_a', max_amount: null, min_amount: null}, at)
    try {
      const {row} = charges({amount_unit: 'minor'})
      expect(await row({amount: '480', currency: 'isk'})).toMatchObject({amount_minor: 480})
      expect(await row({amount: '9', currency: 'usd'})).toMatchObject({amount_minor: 900})
      expect(await row({amount: '2990', currency: 'kwd'})).toMatchObject({amount_minor: 2990})
      expect(await row({amount: '9007199254740991', currency: 'usd'})).toBe('bad amount "9007199254740991" in amount: 9007199254740991 gateway_a units of USD (exponent 0) is 9007199254740991 USD, which is out of range')
    } finally {
      store.db.prepare('DELETE FROM gateway_currency_rules').run()
    }
  })
})

describe('a subscription row', () => {
  it('becomes the subscription: its product\'s interval, monthly USD, active, its event at its creation', async () => {
    expect(await subscriptions().row()).toEqual({
      amount_minor: 1000,
      amount_usd_minor: 1000,
      amount_usd_monthly_minor: 1000,
      cancel_at: null,
      canceled_at: null,
      country: null,
      created: JAN15,
      currency: 'USD',
      interval: 'month',
      interval_count: 1,
      latest_event_id: 'import:1768435200:2:edac3bb0',
      latest_event_timestamp: JAN15,
      origin: 'gateway_a',
      origin_id: 'sub_1',
      product_id: monthly.id,
      seen_trial_end: null,
      seen_trial_start: null,
      status: 'active',
      tax_minor: 0,
      trial_end: null,
      trial_start: null,
      user_id: 'u1',
    })
  })

  it('the interval and count of the row over the product\'s; quantity times the amount, tax of the whole', async () => {
    const {row} = subscriptions()
    expect(await row({interval: '3 months'})).toMatchObject({amount_usd_monthly_minor: 333, interval: 'month', interval_count: 3, latest_event_id: 'import:1768435200:2:122d7d5a'})
    expect(await row({interval_count: '2'})).toMatchObject({amount_usd_monthly_minor: 500, interval: 'month', interval_count: 2})
    expect(await row({interval: 'week', interval_count: '12'})).toMatchObject({interval: 'week', interval_count: 12})
    expect(await row({country: 'us', quantity: '12'})).toMatchObject({amount_minor: 12_000, country: 'US'})
    expect(await row({interval: 'year', interval_count: '2'})).toMatchObject({amount_usd_monthly_minor: 42, interval: 'year', interval_count: 2})
    expect(await row({product: 'pro_yearly'})).toMatchObject({amount_usd_monthly_minor: 83, interval: 'year', interval_count: 1})
    expect(await row({quantity: '3', tax: '5.00'})).toMatchObject({amount_minor: 3000, amount_usd_minor: 3000, latest_event_id: 'import:1768435200:2:53127abf', tax_minor: 500})
    expect(await row({amount: '100', product: 'pro_yearly', tax: '20'})).toMatchObject({amount_minor: 10_000, latest_event_id: 'import:1768435200:2:55327118', tax_minor: 2000})
  })

  it('dates kept with their status only (the trial dates it showed are kept apart); the latest event date is the event', async () => {
    const {row} = subscriptions()
    const dates = {cancel_at: '2026-03-01', canceled_at: '2026-02-01', trial_end: '2026-01-14', trial_start: '2026-01-01'}
    const seen = {seen_trial_end: JAN15 - DAY, seen_trial_start: JAN15 - 14 * DAY}
    expect(await row({...dates, status: 'canceled'})).toMatchObject({
      cancel_at: JAN15 + 45 * DAY,
      canceled_at: JAN15 + 17 * DAY,
      latest_event_id: 'import:1769904000:3:a8cfc2ed',
      latest_event_timestamp: JAN15 + 17 * DAY,
      trial_end: null,
      trial_start: null,
      ...seen,
    })
    expect(await row({...dates, status: 'active'})).toMatchObject({cancel_at: null, canceled_at: null, latest_event_id: 'import:1769904000:2:fafcccff', trial_end: null, trial_start: null, ...seen})
    expect(await row({cancel_at: '2026-03-01', status: 'trialing', trial_end: '2026-01-30', trial_start: '2026-01-16'})).toMatchObject({
      cancel_at: null,
      latest_event_id: 'import:1768521600:1:2d2769a8',
      latest_event_timestamp: JAN15 + DAY,
      trial_end: JAN15 + 15 * DAY,
      trial_start: JAN15 + DAY,
    })
  })

  it('a layout without cancel or trial columns: the creation is the event', async () => {
    const columns = {amount: 'amount', created: 'created', currency: 'currency', origin_id: 'id', product: 'product', status: 'status', user_id: 'user'}
    const m = new RowMapper<SubscriptionValues>(store, 'subscriptions', layout('subscriptions', columns), SUB_HEADER, undefined)
    expect(await m.mapLoading(SUB_HEADER.map((h) => ({...SUB, canceled_at: '2026-02-01', status: 'canceled'} as Cells)[h] ?? ''))).toMatchObject({canceled_at: null, latest_event_timestamp: JAN15, status: 'canceled'})
  })

  it('a scheduled end among the event columns is an event date of a canceled row only', async () => {
    const {row} = subscriptions({event_timestamp: ['created', 'canceled_at', 'cancel_at', 'trial_start']})
    const dates = {cancel_at: '2026-03-01', canceled_at: '2026-02-01'}
    expect(await row({...dates, status: 'canceled'})).toMatchObject({latest_event_id: 'import:1772323200:3:7061506a', latest_event_timestamp: JAN15 + 45 * DAY})
    expect(await row({...dates, status: 'active'})).toMatchObject({latest_event_timestamp: JAN15 + 17 * DAY})
    expect(await row({cancel_at: '2026-03-01', status: 'active'})).toMatchObject({latest_event_timestamp: JAN15})
    expect(await row({cancel_at: '2026-03-01', canceled_at: '2026-01-15', status: 'canceled'})).toMatchObject({latest_event_timestamp: JAN15 + 45 * DAY})
  })

  it.each([
    [{interval: 'fortnight'}, 'bad interval "fortnight" in interval (expected day, week, month or year, optionally with a count such as "3 month")'],
    [{interval_count: '0'}, 'bad interval count "0" in interval_count'],
    [{interval_count: 'x'}, 'bad interval count "x" in interval_count'],
    [{interval_count: '1.5'}, 'bad interval count "1.5" in interval_count'],
    [{interval_count: 'x2'}, 'bad interval count "x2" in interval_count'],
    [{interval_count: '2x'}, 'bad interval count "2x" in interval_count'],
    [{quantity: 'x'}, 'bad quantity "x" in quantity'],
    [{quantity: '1.5'}, 'bad quantity "1.5" in quantity'],
    [{product: ''}, 'missing product: product is empty (pass --product API_ID for rows without one)'],
    [{quantity: '-1'}, 'bad quantity "-1" in quantity'],
    [{quantity: '3', tax: '31.00'}, 'tax: 31.00 in tax is more than the amount 30.00 (the amount is what the customer paid, tax included)'],
    [{amount: '90071992547409.91', quantity: '2'}, 'amount 90071992547409.91 x quantity 2 is too large'],
    [{trial_end: 'bad'}, `bad date "bad" in trial_end (not a date or time in an accepted form; ${dateHint})`],
    [{cancel_at: '2026-13-01'}, `bad date "2026-13-01" in cancel_at (there is no month 13; ${dateHint})`],
    [{canceled_at: 'bad'}, `bad date "bad" in canceled_at (not a date or time in an accepted form; ${dateHint})`],
    [{status: 'trialing', trial_end: '2026-01-10', trial_start: '2026-01-20'}, 'trial ends before it starts: trial_end: 1768003200 (2026-01-10T00:00:00Z) is before trial_start 1768867200 (2026-01-20T00:00:00Z)'],
    [
      {cancel_at: '2026-01-01', canceled_at: '2026-01-10', status: 'canceled'},
      'cancel before created: cancel_at: 1767225600 (2026-01-01T00:00:00Z) is before created 1768435200 (2026-01-15T00:00:00Z); cancel before created: canceled_at: 1768003200 (2026-01-10T00:00:00Z) is before created 1768435200 (2026-01-15T00:00:00Z)',
    ],
    [{currency: 'chf'}, 'no FX rate for CHF (add one with "pricectl fx set CHF RATE")'],
    [{status: 'succeeded'}, expect.stringMatching(/^status: /)],
  ])('%j is rejected: %s', async (cells, reason) => {
    expect(await subscriptions().row(cells)).toEqual(reason)
  })
})

describe('export dates (parseDate)', () => {
  it('dates, date-times in a zone, UNIX seconds and milliseconds; undefined for no date', () => {
    expect(parseDate('2026-01-15')).toBe(JAN15)
    expect(parseDate('2026-01-15 10:00', 'Europe/Berlin')).toBe(JAN15 + 9 * 3600)
    expect(parseDate('2026-01-15 10:00')).toBe(JAN15 + 10 * 3600)
    expect(parseDate('1768435200')).toBe(JAN15)
    expect(parseDate('1768435200000')).toBe(JAN15)
    expect(parseDate('1768435200000', 'Europe/Berlin')).toBe(JAN15)
    expect(parseDate('2026-02-30')).toBeUndefined()
    expect(parseDate('soon', 'Europe/Berlin')).toBeUndefined()
  })
})
