import {readFileSync} from 'node:fs'
import {parse} from 'csv-parse/sync'
import {beforeEach, describe, expect, it} from 'vitest'

import {setFactor} from '../../src/localization/factors.js'
import {previewPrices} from '../../src/pricing/preview.js'
import {addProduct, runArgs, setRates, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Issue 16, "Real catalogs" and "What the gateway settled": one gateway_a product with a
 * monthly and a yearly price (two gateway_a_with_interval integrations), the statuses the
 * payments exports write, a connected account's layout, and the gateway's USD amount.
 */

function rejects(path: string): {line: string; reason: string}[] {
  return (parse(readFileSync(path, 'utf8'), {columns: true, relax_column_count: true}) as Record<string, string>[]).map(({line, reason}) => ({line, reason}))
}

async function charges(db: string): Promise<Record<string, any>[]> {
  return await withStore(db, (d) => d.prepare('SELECT c.*, p.api_id FROM charges c JOIN products p ON p.id = c.product_id ORDER BY c.origin_id').all() as Record<string, any>[])
}

/** Monthly and yearly Pro share the gateway_a product prod_pro; lifetime has its own. */
async function seedTwoPrices(db: string): Promise<void> {
  await withStore(db, async (d, store) => {
    setRates(d, '2020-01-01', {EUR: 0.8, JPY: 100, USD: 1})
    const month = addProduct(d, {api_id: 'pro_m', base_px: 10, integrations: [{interval: 'month', interval_count: 1, ref: 'prod_pro', type: 'gateway_a_with_interval'}], interval: 'month'})
    const year = addProduct(d, {
      api_id: 'pro_y',
      base_px: 100,
      integrations: [
        {interval: 'year', interval_count: 1, ref: 'prod_pro', type: 'gateway_a_with_interval'},
        {ref: 'pro-yearly-plan', type: 'gateway_c'},
      ],
      interval: 'year',
    })
    addProduct(d, {api_id: 'lifetime', base_px: 199, integrations: [{ref: 'prod_life', type: 'gateway_a'}], interval: 'one_time'})
    const cp = d.prepare('INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (?, ?, ?, ?, 0)')
    cp.run(month, 'DE', 'EUR', 900)
    cp.run(year, 'DE', 'EUR', 9000)
    // Japan is priced by the engine: base price -> JPY -> factor -> rounding.
    await setFactor(store, {country: 'JP', factor: 0.5, source: 'test', year: 2025})
  })
}

/** What the engine quotes in Japan for the two Pro products (the test does not work prices out by hand). */
async function japanPrices(db: string): Promise<{pro_m: string; pro_y: string}> {
  const rows = await withStore(db, async (_d, store) => await previewPrices(store, {countries: ['JP'], products: ['pro_m', 'pro_y']}))
  const of = (p: string) => rows.find((r) => r.product === p)!
  expect(of('pro_m').currency).toBe('JPY')
  return {pro_m: String(of('pro_m').price), pro_y: String(of('pro_y').price)}
}

const HEADER = ['id', 'Created date (UTC)', 'Amount', 'Amount Refunded', 'Currency', 'Captured', 'Converted Amount', 'Converted Amount Refunded', 'Converted Currency', 'Status', 'Customer ID', 'user_id (metadata)', 'product (metadata)', 'price_id (metadata)', 'country (metadata)']

/** Status cycle of the fixture: what the export writes -> the charge's status. */
const STATUSES: [string, string][] = [
  ['Paid', 'succeeded'],
  ['Canceled', 'failed'],
  ['Disputed', 'succeeded'],
  ['Partially refunded', 'succeeded'],
  ['Refunded', 'succeeded'],
  ['Failed', 'failed'],
  ['Paid', 'succeeded'],
  ['Uncaptured', 'pending'],
  ['Blocked', 'failed'],
]

type Expected = {apiId: string; id: string; refundedMinor: number; status: string}

/**
 * The issue's export: 1,047 rows, most of them naming prod_pro without an interval (a
 * payments export has none), in the statuses the gateway writes; EUR rows carry the
 * gateway's settled USD amount, 5 cents off the store's FX. The last two rows are bad.
 */
function issueExport(jp: {pro_m: string; pro_y: string}): {csv: string; eurRows: number; expected: Expected[]} {
  const lines = [HEADER.join(',')]
  const expected: Expected[] = []
  let eurRows = 0
  for (let i = 0; i < 1045; i++) {
    const id = `ch_${String(i).padStart(5, '0')}`
    let amount = '199.00'
    let currency = 'usd'
    let country = 'US'
    let product = 'prod_life'
    let priceId = ''
    let apiId = 'lifetime'
    if (i % 12 < 7) {
      product = 'prod_pro'
      // The monthly or yearly price, told apart by the amount (or by the price id where there is one).
      const variants: [string, string, string, string, string][] = [
        ['10.00', 'usd', 'US', '', 'pro_m'],
        ['100.00', 'usd', 'US', '', 'pro_y'],
        ['9.00', 'eur', 'DE', '', 'pro_m'],
        ['90.00', 'eur', 'DE', '', 'pro_y'],
        [jp.pro_m, 'jpy', 'JP', '', 'pro_m'],
        // A discounted yearly charge: its amount is no price, its price id says which.
        ['80.00', 'usd', 'US', 'pro_y', 'pro_y'],
        ['7.00', 'usd', 'US', 'month', 'pro_m'],
      ]
      ;[amount, currency, country, priceId, apiId] = variants[i % 7]
    }
    const [statusText, status] = STATUSES[i % STATUSES.length]
    const digits = currency === 'jpy' ? 0 : 2
    const minor = Math.round(Number(amount) * 10 ** digits)
    const refundedMinor = statusText === 'Refunded' ? minor : statusText === 'Partially refunded' ? Math.floor(minor / 2) : 0
    // The export writes 0 refunded for "Refunded" (full refund) in some rows: the status says it all.
    const refundedCell = statusText === 'Refunded' && i % 2 === 0 ? (0).toFixed(digits) : (refundedMinor / 10 ** digits).toFixed(digits)
    let converted = ''
    let convertedRefunded = ''
    let convertedCurrency = ''
    if (currency === 'usd') {
      converted = amount
      convertedRefunded = (refundedMinor / 100).toFixed(2)
      convertedCurrency = 'usd'
    } else if (currency === 'eur') {
      // FX says EUR 9.00 = USD 11.25; the gateway settled 5 cents more.
      const usd = Math.round((minor / 0.8) + 5)
      converted = (usd / 100).toFixed(2)
      convertedRefunded = refundedMinor === minor ? converted : refundedMinor === 0 ? '0.00' : (Math.floor(usd / 2) / 100).toFixed(2)
      convertedCurrency = 'usd'
      eurRows++
    }
    const created = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString().replace('T', ' ').slice(0, 19)
    lines.push([id, created, amount, refundedCell, currency, 'true', converted, convertedRefunded, convertedCurrency, statusText, `cus_${i % 50}`, `u${i % 50}`, product, priceId, country].join(','))
    expected.push({apiId, id, refundedMinor, status})
  }
  // A Pro charge at no price of either product, and a product no integration or api_id names.
  lines.push(['ch_bad01', '2026-02-01 00:00:00', '12.34', '0.00', 'usd', 'true', '12.34', '0.00', 'usd', 'Paid', 'cus_1', 'u1', 'prod_pro', '', 'US'].join(','))
  lines.push(['ch_bad02', '2026-02-01 00:00:00', '10.00', '0.00', 'usd', 'true', '10.00', '0.00', 'usd', 'Paid', 'cus_1', 'u1', 'prod_nope', '', 'US'].join(','))
  return {csv: lines.join('\n') + '\n', eurRows, expected}
}

describe('a gateway_a product with a monthly and a yearly price (issue 16)', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await seedTwoPrices(db)
    process.env.PRICECTL_NOW = '1772323200'
  })

  it('payments rows are matched by price id, else by amount and currency against the engine\'s prices; statuses mapped; rejects counted per reason', async () => {
    const {csv, eurRows, expected} = issueExport(await japanPrices(db))
    const file = writeTemp('payments.csv', csv)
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 1045, preset: 'gateway_a_payments', read: 1047, rejected: 2})
    expect(r.json.rejected_by_reason).toEqual({'no price of the product matches the amount': 1, 'unknown product': 1})

    const bad = rejects(r.json.rejects_file)
    expect(bad.map((b) => b.line)).toEqual(['1047', '1048'])
    // The real reason: which products the id names, the row's amount, and their prices.
    expect(bad[0].reason).toMatch(/^no price matches product "prod_pro" in product \(metadata\): it is the gateway_a\/gateway_a_with_interval product of pro_m \(month\) and pro_y \(year\)/)
    expect(bad[0].reason).toContain('12.34 USD is no price of theirs')
    expect(bad[0].reason).toContain('10.00 USD')
    // "Add the integration" only where no integration names the product.
    expect(bad[1].reason).toMatch(/^unknown product "prod_nope".*add the integration/)
    expect(bad[0].reason).not.toContain('add the integration')

    const got = new Map((await charges(db)).map((c) => [c.origin_id, c]))
    for (const e of expected) {
      const c = got.get(e.id)
      expect(c, e.id).toBeDefined()
      expect([e.id, c!.api_id, c!.status, c!.amount_refunded_minor]).toEqual([e.id, e.apiId, e.status, e.refundedMinor])
    }
    const count = (api: string) => expected.filter((e) => e.apiId === api).length
    expect([count('pro_m'), count('pro_y'), count('lifetime')]).toEqual([...got.values()].reduce((n, c) => {
      n[['pro_m', 'pro_y', 'lifetime'].indexOf(c.api_id)]++
      return n
    }, [0, 0, 0]))

    // What the gateway settled in USD is the USD amount; the summary totals its difference to the store's FX.
    expect(got.get('ch_00002')).toMatchObject({amount_minor: 900, amount_usd_minor: 1130, currency: 'EUR'})
    const usdRows = expected.filter((e) => got.get(e.id)!.currency !== 'JPY').length
    expect(r.json.settled_usd).toEqual({difference_usd: (eurRows * 5) / 100, difference_usd_minor: eurRows * 5, rows: usdRows})

    // Human output: the reasons and the settled figures.
    const human = await runArgs(db, ['charges', 'import', file, '--rejects', `${file}.2.csv`])
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/no price of the product matches the amount\s*│?\s*1/)
    expect(human.stdout).toMatch(/unknown product\s*│?\s*1/)
    expect(human.stdout).toContain(`${usdRows} rows, +${((eurRows * 5) / 100).toFixed(2)} USD against the store's FX`)
  })

  it('two products the amount cannot tell apart: rejected as ambiguous, naming both', async () => {
    await withStore(db, (d) => d.prepare("UPDATE country_prices SET amount_minor = 900 WHERE country = 'DE'").run())
    const file = writeTemp('payments.csv', [HEADER.join(','), ['ch_1', '2026-01-02 00:00:00', '9.00', '0.00', 'eur', 'true', '', '', '', 'Paid', 'cus_1', 'u1', 'prod_pro', '', 'DE'].join(',')].join('\n') + '\n')
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.json).toMatchObject({inserted: 0, rejected: 1, rejected_by_reason: {'ambiguous product (a price of several products)': 1}})
    expect(rejects(r.json.rejects_file)[0].reason).toMatch(/^ambiguous product "prod_pro" in .*9\.00 EUR is a price of pro_m and pro_y alike/)
  })
})

const CONNECTED = 'id,Created date (UTC),Amount,Amount Refunded,Currency,Captured,Converted Amount,Converted Amount Refunded,Converted Currency,Fee,Is Link,Mode,Payment Source Type,Status,Taxes On Fee,Application Fee,Application ID'

function connectedExport(): string {
  return [
    CONNECTED,
    'py_1,2026-01-05 10:00:00,199.00,0.00,usd,true,199.00,0.00,usd,6.07,false,Live,card,Paid,0.00,1.99,ca_app1',
    'py_2,2026-01-06 10:00:00,199.00,199.00,usd,true,199.00,199.00,usd,6.07,false,Live,card,Refunded,0.00,1.99,ca_app1',
    'py_3,2026-01-07 10:00:00,199.00,0.00,usd,false,199.00,0.00,usd,0.00,false,Live,card,Canceled,0.00,0.00,ca_app2',
  ].join('\n') + '\n'
}

describe('layout variants of the payments export (issue 16)', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await seedTwoPrices(db)
  })

  it('a connected account\'s export (no customer column) is recognised; the refusal names the missing columns and how to supply them', async () => {
    const file = writeTemp('connected.csv', connectedExport())
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).not.toMatch(/unrecognised header|not a known charges export/)
    expect(r.json.message).toMatch(/the file has no column for user_id \(user_id \(metadata\) or Customer ID\), product \(.*\) \(gateway_a_payments\)/)
    expect(r.json.message).toMatch(/for user_id, pass --user-id-column COLUMN .* or --user-id VALUE/)
    expect(r.json.message).toMatch(/for product, pass --product API_ID/)
    expect(r.json.message).toContain('--mapping FILE')
    expect(await charges(db)).toEqual([])

    const constant = await runArgs(db, ['charges', 'import', file, '--user-id', 'acct_9', '--product', 'lifetime', '--json'])
    expect(constant.json).toMatchObject({inserted: 3, preset: 'gateway_a_payments', rejected: 0, settled_usd: {difference_usd_minor: 0, rows: 3}})
    expect((await charges(db)).map((c) => [c.origin_id, c.user_id, c.status, c.amount_refunded_minor])).toEqual([
      ['py_1', 'acct_9', 'succeeded', 0],
      ['py_2', 'acct_9', 'succeeded', 19_900],
      ['py_3', 'acct_9', 'failed', 0],
    ])
  })

  it('--user-id-column reads user ids from a column of the file; a column it lacks is refused with the columns it has', async () => {
    const file = writeTemp('connected.csv', connectedExport())
    const r = await runArgs(db, ['charges', 'import', file, '--user-id-column', 'application id', '--product', 'lifetime', '--json'])
    expect(r.json).toMatchObject({inserted: 3, rejected: 0})
    expect((await charges(db)).map((c) => c.user_id)).toEqual(['ca_app1', 'ca_app1', 'ca_app2'])

    const missing = await runArgs(db, ['charges', 'import', file, '--user-id-column', 'Nope', '--product', 'lifetime', '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toMatch(/^--user-id-column: the file has no column "Nope" \(its columns: "id", "Created date \(UTC\)",.*\); or pass --user-id VALUE/)
  })

  it('a layout close to a known one says which columns it lacks', async () => {
    const header = CONNECTED.replace(',Amount Refunded', '')
    const file = writeTemp('nearly.csv', `${header}\npy_1,2026-01-05 10:00:00,199.00,usd,true,199.00,0.00,usd,6.07,false,Live,card,Paid,0.00,1.99,ca_app1\n`)
    const r = await runArgs(db, ['charges', 'import', file, '--user-id', 'a', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toMatch(/^this file looks like a gateway_a_payments export but has no "Amount Refunded" column: add it to the export, or describe the layout with --mapping FILE/)
  })

  it('a --mapping file may give a constant for a field the file has no column for', async () => {
    const mapping = writeTemp(
      'layout.json',
      JSON.stringify({columns: {amount: 'Amount', created: 'Created date (UTC)', currency: 'Currency', origin_id: 'id', status: 'Status'}, constants: {product: 'lifetime', user_id: 'acct_7'}, kind: 'charges', origin: 'gateway_a', statuses: {canceled: 'failed', paid: 'succeeded', refunded: 'succeeded'}}),
    )
    const file = writeTemp('connected.csv', connectedExport())
    const r = await runArgs(db, ['charges', 'import', file, '--mapping', mapping, '--json'])
    expect(r.json).toMatchObject({inserted: 3, rejected: 0})
    expect(new Set((await charges(db)).map((c) => `${c.user_id} ${c.api_id}`))).toEqual(new Set(['acct_7 lifetime']))
    const bad = writeTemp('bad.json', JSON.stringify({columns: {}, constants: {plan: 'x'}, origin: 'gateway_a'}))
    const refused = await runArgs(db, ['charges', 'import', file, '--mapping', bad, '--json'])
    expect(refused.code).toBe(2)
    expect(refused.json.message).toMatch(/--mapping: constants: unknown field plan/)
  })
})
