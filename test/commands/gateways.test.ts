import Database from 'better-sqlite3'
import {existsSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {GatewaysListOutput, GatewaysSetOutput, GatewaysShowOutput} from '../../src/schemas/gateways.js'
import {createProducts} from '../helpers/catalog.js'
import {initStore, run, runBin, tempStore} from '../helpers/run.js'

function storedGateways(db: string): unknown[] {
  if (!existsSync(db)) return []
  const sqlite = new Database(db, {readonly: true})
  try {
    return sqlite.prepare('SELECT * FROM gateways ORDER BY gateway').all()
  } finally {
    sqlite.close()
  }
}

const DEFAULTS = [
  {accepted_currencies: ['listed'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_a', source: 'default'},
  {accepted_currencies: ['listed'], amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_b', source: 'default'},
  {accepted_currencies: ['listed'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_c', source: 'default'},
  {accepted_currencies: ['listed'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_d', source: 'default'},
]

describe('gateways list', () => {
  it('shows the defaults of all four gateways', async () => {
    const r = await run(await initStore(), ['gateways', 'list', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({gateways: DEFAULTS, message: '4 gateways (0 configured, 4 on defaults)', success: true})
  })

  it('prints a table and CSV', async () => {
    const db = await initStore()
    const t = await run(db, ['gateways', 'list'])
    expect(t.stdout).toMatch(/gateway\s*│\s*accepted currencies\s*│\s*fallback\s*│\s*amount format\s*│\s*source/)
    expect(t.stdout).toMatch(/gateway_b\s*│\s*listed\s*│\s*USD\s*│\s*decimal\s*│\s*default/)
    const c = await run(db, ['gateways', 'list', '--output', 'csv'])
    expect(c.stdout).toBe(
      'gateway,accepted currencies,fallback,amount format,source\ngateway_a,listed,USD,minor,default\ngateway_b,listed,USD,decimal,default\ngateway_c,listed,USD,minor,default\ngateway_d,listed,USD,minor,default\n',
    )
  })
})

describe('gateways set', () => {
  it('stores accepted currencies, fallback and amount format; unset fields keep their value', async () => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'set', 'gateway_b', '--accept', 'eur,USD,GBP', '--amount-format', 'minor', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      gateway: {accepted_currencies: ['EUR', 'USD', 'GBP'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_b', source: 'store'},
      dry_run: false,
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: 'gateway_b: accepts EUR,USD,GBP, falls back to USD, minor amounts',
      success: true,
    })
    const fallback = await run(db, ['gateways', 'set', 'gateway_b', '--fallback', 'EUR', '--json'])
    expect(fallback.json.gateway).toMatchObject({accepted_currencies: ['EUR', 'USD', 'GBP'], amount_format: 'minor', fallback_currency: 'EUR'})
    const list = await run(db, ['gateways', 'list', '--json'])
    expect(list.json.gateways[1]).toEqual({accepted_currencies: ['EUR', 'USD', 'GBP'], amount_format: 'minor', fallback_currency: 'EUR', gateway: 'gateway_b', source: 'store'})
    expect(list.json.message).toBe('4 gateways (1 configured, 3 on defaults)')
  })

  it("accepts '*' for any currency", async () => {
    const db = tempStore()
    await run(db, ['gateways', 'set', 'gateway_c', '--accept', 'EUR,USD'])
    const r = await run(db, ['gateways', 'set', 'gateway_c', '--accept', '*', '--json'])
    expect(r.json.gateway.accepted_currencies).toEqual(['*'])
    expect(storedGateways(db)).toEqual([{accepted_currencies: '*', amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_c'}])
  })

  it('drops back to the defaults with --default', async () => {
    const db = tempStore()
    await run(db, ['gateways', 'set', 'gateway_a', '--amount-format', 'decimal'])
    const r = await run(db, ['gateways', 'set', 'gateway_a', '--default', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.gateway).toEqual(DEFAULTS[0])
    expect(storedGateways(db)).toEqual([])
  })

  it('reads the settings from --body', async () => {
    const db = tempStore()
    const body = join(dirname(db), 'gateway.json')
    writeFileSync(body, JSON.stringify({accepted_currencies: ['JPY', 'USD'], amount_format: 'minor', fallback_currency: 'USD'}))
    const r = await run(db, ['gateways', 'set', 'gateway_d', '--body', body, '--fallback', 'JPY', '--json'])
    expect(r.json.gateway).toEqual({accepted_currencies: ['JPY', 'USD'], amount_format: 'minor', fallback_currency: 'JPY', gateway: 'gateway_d', source: 'store'})
  })

  it.each([
    [['gateway_x', '--accept', 'EUR'], 'unknown gateway "gateway_x" (expected one of gateway_a, gateway_b, gateway_c, gateway_d)'],
    [['gateway_a', '--accept', 'EUR'], 'fallback_currency: USD is not among the accepted currencies EUR: add it to --accept or pick another --fallback'],
    [['gateway_a', '--accept', 'EUR,EURO'], 'accepted_currencies[1]: unknown currency "EURO"'],
    [['gateway_a', '--fallback', 'ZZZ'], 'fallback_currency: unknown currency "ZZZ"'],
    [['gateway_a', '--amount-format', 'cents'], 'amount_format: unknown amount format "cents" (expected minor or decimal)'],
    [['gateway_a'], 'nothing to set for gateway_a: pass --accept, --fallback or --amount-format (or --default)'],
    [['gateway_a', '--default', '--accept', 'EUR'], '--default drops every setting of gateway_a; do not combine it with accepted_currencies'],
  ])('refuses %j with exit 2 and writes nothing', async (args, message) => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'set', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain(message)
    expect(storedGateways(db)).toEqual([])
  })
})

describe('gateways --json matches the declared output schemas', () => {
  it('list and set print exactly their outputSchema fields', async () => {
    const db = tempStore()
    const set = await run(db, ['gateways', 'set', 'gateway_a', '--accept', 'USD', '--json'])
    const list = await run(db, ['gateways', 'list', '--json'])
    // parse() drops unknown fields: equality means nothing undeclared was printed.
    expect(GatewaysSetOutput.parse(set.json)).toEqual(set.json)
    expect(GatewaysListOutput.parse(list.json)).toEqual(list.json)
  })
})

describe('gateways end to end (bin/run.js)', () => {
  it('sets and lists', () => {
    const db = tempStore()
    const set = runBin(db, ['gateways', 'set', 'gateway_b', '--accept', 'EUR,USD', '--amount-format', 'minor'])
    expect(set.code).toBe(0)
    expect(set.stdout).toBe('gateway_b: accepts EUR,USD, falls back to USD, minor amounts\n')
    const list = runBin(db, ['gateways', 'list', '--json'])
    expect(list.json.gateways[1]).toEqual({accepted_currencies: ['EUR', 'USD'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_b', source: 'store'})
    const bad = runBin(db, ['gateways', 'set', 'gateway_b', '--fallback', 'JPY'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('JPY is not among the accepted currencies EUR,USD')
  })

  it('overrides a currency rule and shows it', () => {
    const db = tempStore()
    const set = runBin(db, ['gateways', 'set', 'gateway_a', '--currency', 'KWD', '--divisible-by', '1'])
    expect(set.code).toBe(0)
    expect(set.stdout).toBe('gateway_a KWD: exponent 3, divisible by 1, no minimum, max 99999.999 KWD (stored override)\n')
    const show = runBin(db, ['gateways', 'show', 'gateway_a', 'KWD', '--json'])
    expect(show.json.rule).toMatchObject({divisible_by: 1, exponent: 3, note: 'three-decimal currency: the last digit must be 0 (5.124 KWD is sent as 5120 or 5130)', source: 'store'})
    const bad = runBin(db, ['gateways', 'set', 'gateway_a', '--currency', 'KWD', '--min', '0.0005'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe('Error: --min 0.0005: Stripe amounts in KWD have 3 decimals, so 0.0005 KWD cannot be a bound (pass --exponent too if the gateway takes more). See "pricectl gateways set --help".\n')
  })
})

function storedRules(db: string): unknown[] {
  if (!existsSync(db)) return []
  const sqlite = new Database(db, {readonly: true})
  try {
    return sqlite.prepare('SELECT gateway, currency, exponent, divisible_by, min_amount, max_amount FROM gateway_currency_rules ORDER BY gateway, currency').all()
  } finally {
    sqlite.close()
  }
}

describe('gateways show', () => {
  it.each([
    // [gateway, currency, exponent, divisible_by, min_amount, max_amount, source]
    ['gateway_a', 'ISK', 2, 100, null, 99_999_999, 'table'],
    ['gateway_a', 'UGX', 2, 100, null, 99_999_999, 'table'],
    ['gateway_a', 'KWD', 3, 10, null, 99_999_999, 'table'],
    ['gateway_a', 'JPY', 0, 1, 50, 99_999_999, 'table'],
    ['gateway_a', 'HUF', 2, 1, 17_500, 99_999_999, 'table'],
    ['gateway_a', 'IDR', 2, 1, null, 999_999_999_999, 'table'],
    ['gateway_a', 'NGN', 2, 1, null, 99_999_999, 'default'],
    ['gateway_b', 'HUF', 0, 1, null, null, 'table'],
    ['gateway_b', 'KWD', 3, 1, null, null, 'default'],
    ['gateway_c', 'KWD', 2, 1, null, null, 'table'],
    ['gateway_d', 'KWD', 3, 1, null, null, 'default'],
  ] as const)('%s %s: exponent %i, divisible by %i', async (gateway, currency, exponent, divisible, min, max, source) => {
    const r = await run(await initStore(), ['gateways', 'show', gateway, currency.toLowerCase(), '--json'])
    expect(r.code).toBe(0)
    expect(r.json.rule).toMatchObject({currency, divisible_by: divisible, exponent, gateway, max_amount: max, min_amount: min, source})
  })

  it('says where a rule comes from, with the bounds as amounts and the table\'s sources', async () => {
    const db = await initStore()
    const r = await run(db, ['gateways', 'show', 'gateway_a', 'USD', '--json'])
    expect(r.json).toEqual({
      message: 'gateway_a USD: exponent 2, divisible by 1, from the Stripe table entry',
      rule: {
        accepted: true,
        amount_format: 'minor',
        currency: 'USD',
        divisible_by: 1,
        exponent: 2,
        gateway: 'gateway_a',
        listed: true,
        max: '999999.99',
        max_amount: 99_999_999,
        min: '0.50',
        min_amount: 50,
        model: 'Stripe',
        note: null,
        source: 'table',
        source_text: 'Stripe table entry for USD',
        table: {divisible_by: 1, exponent: 2, max_amount: 99_999_999, min_amount: 50, source: 'table'},
      },
      success: true,
    })
    const human = await run(db, ['gateways', 'show', 'gateway_a', 'ISK'])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/exponent\s*│\s*2 \(amounts are sent as integers in 1\/100 ISK: 1234\.00 ISK is 123400\)/)
    expect(human.stdout).toMatch(/divisible by\s*│\s*100/)
    expect(human.stdout).toMatch(/source\s*│\s*table entry: Stripe table entry for ISK/)
    expect(human.stdout).toContain('https://docs.stripe.com/currencies#special-cases')
    const unlisted = await run(db, ['gateways', 'show', 'gateway_b', 'KWD'])
    expect(unlisted.stderr).toContain("warning: KWD is not in PayPal's published list of currencies")
  })

  it('without a currency, lists the table: its default, its entries and stored overrides', async () => {
    const db = tempStore()
    await run(db, ['gateways', 'set', 'gateway_b', '--currency', 'EUR', '--min', '1'])
    const r = await run(db, ['gateways', 'show', 'gateway_b', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.message).toBe('gateway_b follows PayPal: 4 currencies listed (1 stored override), the default for the rest')
    expect(r.json.table).toMatchObject({default: {divisible_by: 1, exponent: 'iso', max_amount: null, min_amount: null}, gateway: 'gateway_b', model: 'PayPal', overrides: 1})
    expect(r.json.table.entries.map((e: {currency: string; source: string}) => [e.currency, e.source])).toEqual([
      ['EUR', 'store'],
      ['HUF', 'table'],
      ['JPY', 'table'],
      ['TWD', 'table'],
    ])
    expect(r.json.table.sources[0]).toMatch(/^https:\/\/developer\.paypal\.com\//)
    expect(r.json.table.currencies).toContain('TWD')
    const human = await run(db, ['gateways', 'show', 'gateway_b'])
    expect(human.stdout).toMatch(/\(any other\)\s*│\s*ISO 4217\s*│\s*1\s*│\s*none\s*│\s*none\s*│\s*table default/)
    expect(human.stdout).toMatch(/EUR\s*│\s*2\s*│\s*1\s*│\s*1\.00\s*│\s*none\s*│\s*stored override/)
    expect(human.stdout).toContain('Sources:\n- https://developer.paypal.com/')
  })

  it.each([
    [['gateway_x', 'USD'], 'unknown gateway "gateway_x"'],
    [['gateway_a', 'XYZ'], 'CURRENCY: unknown currency "XYZ"'],
  ])('refuses %j with exit 2 and creates no store', async (args, message) => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'show', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain(message)
    expect(existsSync(db)).toBe(false)
  })
})

describe('gateways set --currency', () => {
  it('overrides a rule, show reports the override, --default restores the table', async () => {
    const db = tempStore()
    const set = await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'isk', '--exponent', '0', '--divisible-by', '1', '--json'])
    expect(set.code).toBe(0)
    expect(set.json).toMatchObject({
      message: 'gateway_a ISK: exponent 0, divisible by 1, no minimum, max 999999 ISK (stored override)',
      reset: false,
      rule: {divisible_by: 1, exponent: 0, max_amount: 999_999, source: 'store', table: {divisible_by: 100, exponent: 2, max_amount: 99_999_999, source: 'table'}},
      success: true,
    })
    expect(storedRules(db)).toEqual([{currency: 'ISK', divisible_by: 1, exponent: 0, gateway: 'gateway_a', max_amount: 999_999, min_amount: null}])
    const show = await run(db, ['gateways', 'show', 'gateway_a', 'ISK', '--json'])
    expect(show.json.rule).toMatchObject({exponent: 0, source: 'store', source_text: 'override stored with "pricectl gateways set gateway_a --currency ISK" (over the Stripe table entry for ISK)'})
    const human = await run(db, ['gateways', 'show', 'gateway_a', 'ISK'])
    expect(human.stdout).toMatch(/table\s*│\s*exponent 2, divisible by 100, min none, max 99999999 units \(table entry; restore with --default\)/)
    const reset = await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'ISK', '--default', '--json'])
    expect(reset.json).toMatchObject({reset: true, rule: {divisible_by: 100, exponent: 2, source: 'table'}})
    expect(storedRules(db)).toEqual([])
    const again = await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'ISK', '--default'])
    expect(again.code).toBe(0)
    expect(again.stdout).toBe('gateway_a ISK: no override was stored (nothing changed); exponent 2, divisible by 100, no minimum, max 999999.99 ISK (table entry)\n')
  })

  it('takes --min and --max as amounts of the currency; none clears a bound; other fields keep their value', async () => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'set', 'gateway_d', '--currency', 'USD', '--min', '0.70', '--max', '5000', '--json'])
    expect(r.json.rule).toMatchObject({max: '5000.00', max_amount: 500_000, min: '0.70', min_amount: 70, source: 'store'})
    await run(db, ['gateways', 'set', 'gateway_d', '--currency', 'USD', '--max', 'none'])
    expect(storedRules(db)).toEqual([{currency: 'USD', divisible_by: 1, exponent: 2, gateway: 'gateway_d', max_amount: null, min_amount: 70}])
  })

  it.each([
    [['gateway_a', '--currency', 'ZZZ', '--exponent', '0'], '--currency: unknown currency "ZZZ"'],
    [['gateway_a', '--currency', 'ISK', '--exponent', '7'], '--exponent: expected a whole number from 0 to 6'],
    [['gateway_a', '--currency', 'ISK', '--exponent', 'two'], '--exponent: expected a whole number from 0 to 6'],
    [['gateway_a', '--currency', 'ISK', '--divisible-by', '0'], '--divisible-by: expected a whole number of gateway units >= 1'],
    [['gateway_a', '--currency', 'USD', '--min', '0.505'], '--min 0.505: Stripe amounts in USD have 2 decimals'],
    [['gateway_a', '--currency', 'USD', '--min', '1,50'], '--min: expected an amount of the currency such as 0.50, or none to clear it, got "1,50"'],
    [['gateway_a', '--currency', 'USD', '--min', '10', '--max', '5'], 'min_amount 1000 is above max_amount 500'],
    [['gateway_a', '--currency', 'USD', '--max', '0'], 'max_amount: expected a whole number >= 1 of gateway_a units (or none), got 0'],
    [['gateway_a', '--currency', 'USD'], 'nothing to set for gateway_a USD: pass --exponent, --divisible-by, --min or --max (or --default)'],
    [['gateway_a', '--currency', 'USD', '--default', '--min', '1'], '--default drops the override of gateway_a USD; do not combine it with --min'],
    [['gateway_a', '--exponent', '0'], '--exponent change one currency\'s rule: pass --currency CODE as well'],
    [['gateway_a', '--currency', 'USD', '--exponent', '3', '--accept', 'USD'], '--currency overrides one rule of the currency table; --accept change the gateway\'s settings: run them as two commands'],
    [['gateway_x', '--currency', 'USD', '--exponent', '0'], 'unknown gateway "gateway_x"'],
  ])('refuses %j with exit 2 and writes nothing', async (args, message) => {
    const db = tempStore()
    await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'USD', '--min', '1'])
    const before = storedRules(db)
    const r = await run(db, ['gateways', 'set', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain(message)
    expect(storedRules(db)).toEqual(before)
    expect(storedGateways(db)).toEqual([])
  })
})

describe('an override changes what a quote sends to the gateway', () => {
  it('ISK 2400 kr goes to gateway_a as 240000 (two decimals, divisible by 100), as 2400 once overridden, and back with --default', async () => {
    const db = tempStore()
    await createProducts(db, [
      {
        api_id: 'pro_is',
        base_px: 19.99,
        country_prices: [{amount: 2400, country: 'IS', currency: 'ISK'}, {amount: 1200, country: 'JP', currency: 'JPY'}],
        interval: 'month',
        interval_count: 1,
        name: 'Pro Iceland',
      },
    ])
    let n = 0
    const quote = async (country: string) => {
      const r = await run(db, ['price', '-u', `user-${(n += 1)}`, '-p', 'pro_is', '--country', country, '--integration', 'gateway_a', '--json'])
      expect(r.code, r.stdout + r.stderr).toBe(0)
      return r.json.products.pro_is.integrations.gateway_a
    }
    expect(await quote('IS')).toMatchObject({amount: 240_000, currency: 'ISK'})
    expect(await quote('JP')).toMatchObject({amount: 1200, currency: 'JPY'})
    await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'ISK', '--exponent', '0', '--divisible-by', '1'])
    await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'JPY', '--exponent', '2'])
    expect(await quote('IS')).toMatchObject({amount: 2400, currency: 'ISK'})
    expect(await quote('JP')).toMatchObject({amount: 120_000, currency: 'JPY'})
    await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'ISK', '--default'])
    expect(await quote('IS')).toMatchObject({amount: 240_000, currency: 'ISK'})
  })
})

describe('gateway_c (Chargebee) amounts are what Chargebee charges by default (issue 29 item 1)', () => {
  it('sends integers in the smallest unit: USD 9.99 is 999, zero-decimal JPY unmultiplied, HUF in fillér; show says the same', async () => {
    const db = tempStore()
    await createProducts(db, [{api_id: 'P', base_px: 9.99, country_prices: [{amount: 1200, country: 'JP', currency: 'JPY'}], interval: 'month', interval_count: 1, name: 'P'}])
    const r = await run(db, ['price', 'preview', '-p', 'P', '--country', 'US,HU,JP', '--integration', 'gateway_c', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const byCountry = Object.fromEntries(r.json.rows.map((row: {country: string; integrations: {gateway_c: unknown}; price: number}) => [row.country, [row.price, row.integrations.gateway_c]]))
    expect(byCountry.US).toEqual([9.99, {amount: 999, currency: 'USD', formatted: '$9.99', tax_behavior: 'exclusive'}])
    expect(byCountry.JP).toEqual([1200, {amount: 1200, currency: 'JPY', formatted: '￥1,200', tax_behavior: 'exclusive'}])
    expect(byCountry.HU[1]).toMatchObject({amount: byCountry.HU[0] * 100, currency: 'HUF'})
    const show = await run(db, ['gateways', 'show', 'gateway_c', 'HUF'])
    expect(show.stdout).toMatch(/exponent\s*│\s*2 \(amounts are sent as integers in 1\/100 HUF: 1234\.00 HUF is 123400\)/)
    const decimal = await run(db, ['gateways', 'show', 'gateway_b', 'HUF'])
    expect(decimal.stdout).toMatch(/exponent\s*│\s*0 \(amounts are sent as decimal numbers with at most 0 decimals: 1234 HUF is 1234\)/)
  })
})

describe('a gateway is sent only the currencies it accepts (issue 29 item 4)', () => {
  const products = [{api_id: 'P', base_px: 9.99, interval: 'month', interval_count: 1, name: 'P'}]
  const objects = async (db: string, countries: string, gateways: string[]) => {
    const r = await run(db, ['price', 'preview', '-p', 'P', '--country', countries, ...gateways.flatMap((g) => ['--integration', g]), '--json'])
    expect(r.code, r.stderr).toBe(0)
    return Object.fromEntries(r.json.rows.map((row: {country: string; integrations: Record<string, {currency: string}>}) => [row.country, row.integrations]))
  }

  it('by default each follows its published list and falls back to USD: PayPal gets no KWD, ISK or VND, Paddle no KWD', async () => {
    const db = tempStore()
    await createProducts(db, products)
    const o = await objects(db, 'KW,IS,VN,DE,JP', ['gateway_a', 'gateway_b', 'gateway_c', 'gateway_d'])
    for (const c of ['KW', 'IS', 'VN']) expect(o[c].gateway_b.currency, c).toBe('USD')
    expect(o.KW.gateway_d.currency).toBe('USD')
    // Stripe's list has them; Chargebee's table records no list (any currency).
    expect([o.KW.gateway_a.currency, o.IS.gateway_a.currency, o.VN.gateway_a.currency]).toEqual(['KWD', 'ISK', 'VND'])
    expect(o.KW.gateway_c.currency).toBe('KWD')
    // Listed currencies stay local.
    expect([o.DE.gateway_b.currency, o.JP.gateway_b.currency, o.DE.gateway_d.currency, o.JP.gateway_d.currency]).toEqual(['EUR', 'JPY', 'EUR', 'JPY'])
    expect(o.KW.gateway_b).toMatchObject({currency: 'USD'})
    expect(typeof o.KW.gateway_d.amount === 'number' && Number.isInteger(o.KW.gateway_d.amount)).toBe(true)
    const show = await run(db, ['gateways', 'show', 'gateway_b', 'KWD', '--json'])
    expect(show.json.rule).toMatchObject({accepted: false, listed: false})
  })

  it('--accept all (also any, *) sends every currency as it is; --accept listed goes back', async () => {
    const db = tempStore()
    await createProducts(db, products)
    for (const word of ['all', 'any', '*']) {
      const set = await run(db, ['gateways', 'set', 'gateway_b', '--accept', word, '--json'])
      expect(set.code).toBe(0)
      expect(set.json.gateway.accepted_currencies).toEqual(['*'])
      expect(set.json.message).toBe('gateway_b: accepts any currency, falls back to USD, decimal amounts')
    }
    expect((await objects(db, 'KW', ['gateway_b'])).KW.gateway_b).toMatchObject({currency: 'KWD'})
    const listed = await run(db, ['gateways', 'set', 'gateway_b', '--accept', 'listed', '--json'])
    expect(listed.json.gateway.accepted_currencies).toEqual(['listed'])
    expect(listed.json.message).toBe("gateway_b: accepts PayPal's published list (25 currencies), falls back to USD, decimal amounts")
    expect(storedGateways(db)).toEqual([{accepted_currencies: 'listed', amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_b'}])
    expect((await objects(db, 'KW', ['gateway_b'])).KW.gateway_b).toMatchObject({currency: 'USD'})
  })

  it('refuses a fallback the published list does not have (exit 2, nothing stored)', async () => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'set', 'gateway_d', '--fallback', 'KWD', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain("KWD is not in Paddle's published list of currencies that gateway_d accepts")
    expect(storedGateways(db)).toEqual([])
  })
})

describe('gateways show and set --currency --json match the declared output schemas', () => {
  it('prints exactly their outputSchema fields', async () => {
    const db = tempStore()
    const set = await run(db, ['gateways', 'set', 'gateway_a', '--currency', 'USD', '--min', '1', '--json'])
    const one = await run(db, ['gateways', 'show', 'gateway_a', 'USD', '--json'])
    const all = await run(db, ['gateways', 'show', 'gateway_a', '--json'])
    expect(GatewaysSetOutput.parse(set.json)).toEqual(set.json)
    expect(GatewaysShowOutput.parse(one.json)).toEqual(one.json)
    expect(GatewaysShowOutput.parse(all.json)).toEqual(all.json)
  })
})
