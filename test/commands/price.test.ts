import Database from 'better-sqlite3'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {run, tempStore} from '../helpers/run.js'

function lockCount(db: string): number {
  const d = new Database(db, {readonly: true})
  try {
    return (d.prepare('SELECT count(*) AS n FROM locks').get() as {n: number}).n
  } finally {
    d.close()
  }
}

describe('price', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
  })

  it('prints every field of the spec price result, with no experiment', async () => {
    const r = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'US', '--integration', 'gateway_a', '--json'])
    expect(r.code).toBe(0)
    expect(Object.keys(r.json).sort()).toEqual(['audience', 'country', 'currency', 'currency_symbol', 'matching_audiences', 'package_id', 'products', 'success', 'user_id', 'variants'])
    expect(r.json).toMatchObject({country: 'US', currency: 'USD', currency_symbol: '$', success: true, user_id: 'u1'})
    expect(r.json.variants).toEqual({arm_id: 0, experiment_id: 0, experiment_type: null, experimented_on: false, products_to_select: [], treatment_group: null})
    const p = r.json.products.pro_monthly
    expect(p).toMatchObject({interval: 'month', interval_count: 1, price: 9.99, price_usd: 9.99})
    expect(Object.keys(p.display).sort()).toEqual(['discount_to_baseline', 'price', 'price_with_baseline_strike', 'reference_interval_price'])
    expect(p.display.price).toBe('$9.99')
    // tax_behavior: pricectl's addition after the spec's fields (docs/tax.md); a US price is shown net.
    expect(p.integrations.gateway_a).toEqual({amount: 999, currency: 'USD', formatted: '$9.99', tax_behavior: 'exclusive'})
  })

  it('uses the country price as given, in its currency and minor unit', async () => {
    const de = await run(db, ['price', '-u', 'de', '-p', 'pro_monthly', '--country', 'DE', '--integration', 'gateway_a', '--json'])
    expect(de.json.currency).toBe('EUR')
    expect(de.json.products.pro_monthly.price).toBe(8.99)
    expect(de.json.products.pro_monthly.integrations.gateway_a.amount).toBe(899)
    const jp = await run(db, ['price', '-u', 'jp', '-p', 'pro_monthly', '--country', 'JP', '--integration', 'gateway_a', '--json'])
    expect(jp.json.products.pro_monthly).toMatchObject({price: 1200})
    expect(jp.json.products.pro_monthly.integrations.gateway_a).toMatchObject({amount: 1200, currency: 'JPY'})
    const kw = await run(db, ['price', '-u', 'kw', '-p', 'pro_monthly', '--country', 'KW', '--integration', 'gateway_a', '--json'])
    expect(kw.json.products.pro_monthly).toMatchObject({price: 3.5})
    expect(kw.json.products.pro_monthly.integrations.gateway_a).toMatchObject({amount: 3500, currency: 'KWD'})
  })

  it('keeps a lock: later calls return the first quote even after the base price changes, until --override', async () => {
    const first = await run(db, ['price', '-u', 'u1', '-p', 'pro_yearly', '--country', 'US', '--json'])
    expect(first.json.products.pro_yearly.price).toBe(99)
    // +50%: beyond --max-change-pct without a terminal, so --yes.
    const upd = await run(db, ['products', 'update', 'pro_yearly', '--base-px', '149', '--yes', '--json'])
    expect(upd.code).toBe(0)
    const again = await run(db, ['price', '-u', 'u1', '-p', 'pro_yearly', '--json'])
    expect(again.json).toEqual(first.json)
    const fresh = await run(db, ['price', '-u', 'u1', '-p', 'pro_yearly', '--override', '--json'])
    expect(fresh.json.products.pro_yearly.price).toBe(149)
    expect(lockCount(db)).toBe(1)
  })

  it('says on stderr when a lock wins over --country / --currency, with the command that recomputes; --json unchanged', async () => {
    const first = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    const human = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'FR'])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('u1: DE, EUR')
    expect(human.stderr).toMatch(
      new RegExp(`^note: u1's quote is locked in DE \\(EUR\\) since \\d{4}-\\d\\d-\\d\\dT[^;]+; --country FR was not applied: run "pricectl price -u u1 -p pro_monthly --country FR --db ${db.replaceAll('.', '\\.')} --override" to recompute\n$`),
    )
    const both = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'FR', '--currency', 'USD'])
    expect(both.stderr).toContain('--country FR and --currency USD were not applied')
    expect(both.stderr).toContain('(or --override-currency instead of --override to keep the locked amounts and show them in USD)')
    // --json: the spec's body only, nothing on stderr, the same quote as the first call.
    const json = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'FR', '--currency', 'USD', '--json'])
    expect(json.json).toEqual(first.json)
    expect(json.stderr).toBe('')
    // Nothing to say: the same country, no country, an override, an override of the currency.
    for (const args of [['--country', 'DE'], [], ['--currency', 'EUR'], ['--currency', 'USD', '--override-currency']]) {
      const r = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', ...args])
      expect(r.stderr, args.join(' ')).toBe('')
    }
    const over = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'FR', '--override'])
    expect(over.stderr).toBe('')
    expect(over.stdout).toContain('u1: FR, EUR')
  })

  it('--override-currency keeps the amounts and swaps the currency', async () => {
    await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    const r = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--currency', 'USD', '--override-currency', '--json'])
    expect(r.json.currency).toBe('USD')
    expect(r.json.products.pro_monthly.price).toBe(8.99)
    const again = await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--json'])
    expect(again.json.currency).toBe('USD')
    expect(again.json.products.pro_monthly.price).toBe(8.99)
  })

  it('an anonymous IP lock is adopted by the first call with a user id and that IP; the country is stored', async () => {
    const anon = await run(db, ['price', '--ip', '8.8.8.8', '-p', 'pro_monthly', '--json'])
    expect(anon.json.user_id).toBe('8.8.8.8')
    expect(anon.json.country).toBe('US')
    const user = await run(db, ['price', '-u', 'alice', '--ip', '8.8.8.8', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    expect(user.json.user_id).toBe('alice')
    expect(user.json.country).toBe('US')
    expect(user.json.products).toEqual(anon.json.products)
    expect(lockCount(db)).toBe(1)
    const stored = await run(db, ['user', 'get', 'alice', '--json'])
    expect(stored.json).toEqual({user: {country: 'US'}})
  })

  it('takes the country from the flag, then the stored user country, then the IP, then the store default', async () => {
    // A user with a stored country and no lock yet.
    const d = new Database(db)
    d.prepare("INSERT INTO users (user_id, country, created_at, updated_at) VALUES ('u9', 'FR', 'now', 'now')").run()
    d.close()
    const stored = await run(db, ['price', '-u', 'u9', '-p', 'lifetime', '--ip', '8.8.8.8', '--json'])
    expect(stored.json.country).toBe('FR')
    // --override recomputes the quote, not the country: the stored country still wins over the IP.
    const overridden = await run(db, ['price', '-u', 'u9', '-p', 'lifetime', '--ip', '8.8.8.8', '--override', '--json'])
    expect(overridden.json.country).toBe('FR')
    const flag = await run(db, ['price', '-u', 'u9', '-p', 'lifetime', '--country', 'JP', '--override', '--json'])
    expect(flag.json.country).toBe('JP')
    const user = await run(db, ['user', 'get', 'u9', '--json'])
    expect(user.json).toEqual({user: {country: 'JP'}})
    const fallback = await run(db, ['price', '-u', 'u2', '-p', 'lifetime', '--ip', '10.1.2.3', '--json'])
    expect(fallback.json.country).toBe('US')
    const explain = await run(db, ['price', 'explain', '-u', 'u3', '-p', 'lifetime', '--ip', '10.1.2.3', '--json'])
    expect(explain.json.steps.map((s: {detail: string}) => s.detail).join('\n')).toMatch(/IP 10\.1\.2\.3 gave no country: .*private/)
  })

  it('prices a product the lock lacks under the same country and currency', async () => {
    await run(db, ['price', '-u', 'u1', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    const r = await run(db, ['price', '-u', 'u1', '-p', 'lifetime', '--country', 'US', '--json'])
    expect(r.json.country).toBe('DE')
    expect(r.json.currency).toBe('EUR')
    expect(Object.keys(r.json.products)).toEqual(['lifetime'])
  })

  it('strikes the baseline product price on a yearly plan', async () => {
    await run(db, ['products', 'update', 'pro_yearly', '--baseline', 'pro_monthly'])
    const r = await run(db, ['price', '-u', 'u1', '-p', 'pro_yearly', '--country', 'US', '--json'])
    const d = r.json.products.pro_yearly.display
    // 12 x 9.99 = 119.88 struck through, then the yearly price.
    expect(d.price_with_baseline_strike).toBe('$̶1̶1̶9̶.̶8̶8̶ $99')
    expect(d.discount_to_baseline).toBeCloseTo(17.42, 2)
    expect(d.reference_interval_price).toBe('$8.25')
  })

  it.each([
    [['-p', 'pro_monthly', '--ip', '999.1.1.1'], 'not an IPv4 or IPv6 address'],
    [['-p', 'pro_monthly', '--currency', 'XYZ'], 'unknown currency "XYZ"'],
    [['-p', 'pro_monthly', '--country', 'DEU'], 'unknown country "DEU"'],
    [['-p', 'pro_monthly', '--feature', 'novalue'], '--feature: expected KEY=VALUE'],
  ])('bad input %j exits 2 and writes no lock', async (args, message) => {
    const r = await run(db, ['price', '-u', 'bad', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain(message)
    expect(lockCount(db)).toBe(0)
  })

  it('an unknown product is not found: exit 1, and writes no lock', async () => {
    const r = await run(db, ['price', '-u', 'bad', '-p', 'nope', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain('unknown product "nope"')
    expect(lockCount(db)).toBe(0)
  })

  it('rejects malformed features and coupons in --body', async () => {
    const file = join(dirname(db), 'bad.json')
    writeFileSync(file, JSON.stringify({coupons: {pro_monthly: ['x']}, features: {plan: {a: 1}}, products: ['pro_monthly'], user_id: 'u'}))
    const r = await run(db, ['price', '--body', file, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toMatch(/coupons\.pro_monthly/)
    expect(r.json.message).toMatch(/features\.plan/)
    expect(lockCount(db)).toBe(0)
  })

  it('refuses a feature named __proto__ in --body, --feature and a CSV batch instead of dropping it', async () => {
    const file = join(dirname(db), 'proto.json')
    writeFileSync(file, '{"features": {"__proto__": "gold", "plan": "pro"}, "products": ["pro_monthly"], "user_id": "u"}')
    const body = await run(db, ['price', '--body', file, '--json'])
    expect(body.code).toBe(2)
    expect(body.json.message).toMatch(/features: "__proto__" cannot be a feature name \(JavaScript reserves it\); rename it/)
    const flag = await run(db, ['price', '-u', 'u', '-p', 'pro_monthly', '--feature', '__proto__=gold'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('"__proto__" cannot be a key name')
    const csv = join(dirname(db), 'proto.csv')
    writeFileSync(csv, 'user_id,products,features\nu,pro_monthly,__proto__=gold\n')
    const batch = await run(db, ['price', '--input', csv, '--output', 'csv'])
    expect(batch.code).toBe(1)
    expect(batch.stdout).toContain('features: ""__proto__"" cannot be a key name (JavaScript reserves it); rename it')
    expect(lockCount(db)).toBe(0)
  })

  it('without products and packages, says what to pass', async () => {
    const r = await run(db, ['price', '-u', 'u1', '--country', 'BR', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe('no package for country BR and audience default: pass --product or --package-id')
  })

  it('explain shows each layer and writes nothing', async () => {
    const r = await run(db, ['price', 'explain', '-u', 'u1', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    expect(r.code).toBe(0)
    const details = r.json.steps.map((s: {detail: string}) => s.detail).join('\n')
    expect(details).toContain('DE from the request')
    expect(details).toContain('country price 8.99 EUR for DE wins over the base price')
    expect(details).toMatch(/rounded by (default|store) rule/)
    expect(r.json.result.products.pro_monthly.price).toBe(8.99)
    expect(lockCount(db)).toBe(0)
  })
})

describe('price --input', () => {
  it('streams one result per line, reports a bad line by number, exits 1 at the end', async () => {
    const db = tempStore()
    await createProducts(db, CATALOG)
    const file = join(dirname(db), 'requests.jsonl')
    writeFileSync(file, ['{"user_id":"a","products":["pro_monthly"],"country":"DE"}', '{not json', '{"user_id":"c","products":["nope"]}', '', '{"user_id":"d","products":["lifetime"],"country":"US"}'].join('\n'))
    const r = await run(db, ['price', '--input', file])
    expect(r.code).toBe(1)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toHaveLength(4)
    expect(lines[0].products.pro_monthly.price).toBe(8.99)
    expect(lines[1]).toMatchObject({line: 2, success: false})
    expect(lines[2]).toMatchObject({line: 3, message: expect.stringContaining('unknown product "nope"'), success: false})
    expect(lines[3].products.lifetime.price).toBe(199)
    expect(r.stderr).toContain('line 2: malformed JSON')
  })

  /** `price --input` of this CSV on a store with the catalog, CSV out: the run and its output rows. */
  async function csvBatch(text: string): Promise<{r: Awaited<ReturnType<typeof run>>; rows: string[]}> {
    const db = tempStore()
    await createProducts(db, CATALOG)
    const file = join(dirname(db), 'requests.csv')
    writeFileSync(file, text)
    const r = await run(db, ['price', '--input', file, '--output', 'csv'])
    return {r, rows: r.stdout.trim().split('\n')}
  }

  it('reads CSV requests and writes CSV results', async () => {
    const {r, rows} = await csvBatch('user_id,products,country,integrations\nx,pro_monthly;lifetime,JP,gateway_a\n')
    expect(r.code).toBe(0)
    expect(rows[0]).toBe('line,user_id,country,currency,product,price,price_usd,display_price,interval,interval_count,experiment_id,arm_id,error')
    expect(rows[1]).toMatch(/^2,x,JP,JPY,pro_monthly,1200,/)
    expect(rows[2]).toMatch(/^2,x,JP,JPY,lifetime,/)
  })

  it('refuses a CSV row with more cells than its header, by line, and prices the others', async () => {
    const {r, rows} = await csvBatch('user_id,country,products\nc7,DE,pro_monthly\nc8,DE,pro_monthly,pro_yearly\nc9,DE,"pro_monthly;pro_yearly"\n')
    expect(r.code).toBe(1)
    expect(rows.filter((x) => x.startsWith('2,c7,DE,EUR,pro_monthly,'))).toHaveLength(1)
    expect(rows.filter((x) => x.startsWith('4,c9,DE,EUR,'))).toHaveLength(2)
    const refused = rows.find((x) => x.startsWith('3,'))
    expect(refused).toMatch(/4 cells under a header of 3 \(user_id, country, products\)/)
    expect(rows.filter((x) => x.includes('c8'))).toEqual([])
  })
})
