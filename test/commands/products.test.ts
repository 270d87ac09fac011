import Database from 'better-sqlite3'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'

import {dump, fileDigest} from '../helpers/dump.js'
import {run, seededStore, tempStore} from '../helpers/run.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-products-'))
let n = 0
function file(content: string, ext = 'json'): string {
  const p = join(dir, `f${n++}.${ext}`)
  writeFileSync(p, content)
  return p
}

/** Every product field, as the spec's create body (plus this project's min/max, baseline, features, trials). */
const body = {
  api_id: 'pro_monthly',
  base_px: 9.99,
  baseline: 'pro_base',
  country_prices: [
    {amount: 8.99, country: 'DE', currency: 'EUR'},
    {amount: 7.99, country: 'GB', currency: 'GBP'},
    {amount: 1200, country: 'JP', currency: 'JPY'},
  ],
  features: [
    {api_id: 'seats', description: 'Team seats', feature_group: {api_id: 'limits', description: 'Usage limits', name: 'Limits'}, name: 'Seats', status: 'active', type: 'numeric', unit: 'seats', value: 5},
    {api_id: 'sso', description: 'Single sign-on', feature_group: null, name: 'SSO', status: 'inactive', type: 'boolean', unit: null, value: 0},
  ],
  integrations: [
    {gateway_a_product_id: 'prod_1', type: 'gateway_a'},
    {gateway_a_product_id: 'prod_m', interval: 'month', interval_count: 3, type: 'gateway_a_with_interval'},
    {gateway_c_plan_id: 'plan_c', type: 'gateway_c'},
    {currency: 'EUR', gateway_d_plan_id: 'plan_d', type: 'gateway_d'},
  ],
  interval: 'month',
  interval_count: 1,
  max_px: 19.99,
  min_px: 4.99,
  name: 'Pro Monthly',
  product_trials: [{interval: 'day', interval_count: 14}],
}

/** What get --json must print for `body`, given the baseline's numeric id and the feature group's id. */
function expectedGet(baselineId: number, groupId: number) {
  const {baseline: _b, country_prices, features, ...rest} = body
  return {
    ...rest,
    baseline_id: baselineId,
    country_prices: country_prices.map((c) => ({country: c.country, currency: c.currency, local_price: c.amount})),
    features: [
      {...features[0], feature_group: {...features[0].feature_group, id: groupId}, group_id: groupId},
      {...features[1], group_id: null},
    ],
    message: 'product pro_monthly',
    success: true,
  }
}

let db: string
beforeEach(async () => {
  db = tempStore()
  // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
  await seededStore(db, 'products:pro_base', async (store) => {
    expect((await run(store, ['products', 'create', '--api-id', 'pro_base', '--name', 'Pro (baseline)', '--base-px', '12', '--interval', 'month', '--interval-count', '1'])).code).toBe(0)
  })
})

/** The numeric id of pro_base (the commands show api_ids only), read from the store. */
async function baselineId(): Promise<number> {
  const d = new Database(db, {fileMustExist: true, readonly: true})
  try {
    return (d.prepare("SELECT id FROM products WHERE api_id = 'pro_base'").get() as {id: number}).id
  } finally {
    d.close()
  }
}

describe('products create / get round trip', () => {
  it('--body: create prints the spec create response; get --json shows every field with the same values', async () => {
    const c = await run(db, ['products', 'create', '--body', file(JSON.stringify(body)), '--json'])
    expect(c.code).toBe(0)
    const id = await baselineId()
    expect(c.json).toEqual({
      api_id: 'pro_monthly',
      base_px: 9.99,
      baseline_id: id,
      country_prices: body.country_prices.map((p) => ({country: p.country, currency: p.currency, local_price: p.amount})),
      integrations: body.integrations,
      dry_run: false,
      impact: expect.objectContaining({changed: 0, changes: expect.arrayContaining([expect.objectContaining({before: null, change: 'added', product: 'pro_monthly'})]), dropped: []}),
      message: 'created product pro_monthly',
      name: 'Pro Monthly',
      success: true,
    })
    const g = await run(db, ['products', 'get', 'pro_monthly', '--json'])
    expect(g.code).toBe(0)
    expect(g.json).toEqual(expectedGet(id, g.json.features[0].group_id))
    expect(typeof g.json.features[0].group_id).toBe('number')
  })

  it('flags: the same product from flags gives the same get --json', async () => {
    const c = await run(db, [
      'products', 'create',
      '--api-id', 'pro_monthly', '--name', 'Pro Monthly', '--base-px', '9.99', '--interval', 'month', '--interval-count', '1',
      '--country-price', 'DE=8.99:EUR', '--country-price', 'GB=7.99', '--country-price', 'JP=1200:JPY',
      '--integration', 'gateway_a:prod_1', '--integration', 'gateway_a_with_interval:prod_m:month:3', '--integration', '{"type":"gateway_c","gateway_c_plan_id":"plan_c"}', '--integration', 'gateway_d:plan_d:EUR',
      '--min-px', '4.99', '--max-px', '19.99', '--baseline', 'pro_base',
      '--feature', JSON.stringify(body.features[0]), '--feature', JSON.stringify(body.features[1]),
      '--trial', 'day:14',
    ])
    expect(c.code, c.stderr).toBe(0)
    expect(c.stdout).toContain('created product pro_monthly')
    const g = await run(db, ['products', 'get', 'pro_monthly', '--json'])
    expect(g.json).toEqual(expectedGet(await baselineId(), g.json.features[0].group_id))
  })

  it('get without --json prints tables; get of an unknown product exits 1 with the JSON error shape', async () => {
    await run(db, ['products', 'create', '--body', file(JSON.stringify(body))])
    const g = await run(db, ['products', 'get', 'pro_monthly'])
    expect(g.stdout).toMatch(/base price\s*│ 9\.99 USD/)
    expect(g.stdout).toMatch(/DE\s*│ 8\.99\s*│ EUR/)
    const missing = await run(db, ['products', 'get', 'nope', '--json'])
    expect(missing.code).toBe(1)
    expect(missing.json).toEqual({message: 'no product with api_id "nope" (list them with: pricectl products list)', success: false})
  })

  it('--json prints 2-space JSON and a newline, results and errors alike', async () => {
    const got = await run(db, ['products', 'get', 'pro_base', '--json'])
    expect(got.stdout).toBe(`${JSON.stringify(got.json, null, 2)}\n`)
    const missing = await run(db, ['products', 'get', 'nope', '--json'])
    expect(missing.json).toEqual({message: 'no product with api_id "nope" (list them with: pricectl products list)', success: false})
    expect(missing.stdout).toBe(`${JSON.stringify(missing.json, null, 2)}\n`)
  })

  it('flags override --body fields', async () => {
    const r = await run(db, ['products', 'create', '--body', file(JSON.stringify(body)), '--name', 'Renamed', '--base-px', '11', '--country-price', 'FR=9:EUR', '--json'])
    expect(r.json).toMatchObject({base_px: 11, country_prices: [{country: 'FR', currency: 'EUR', local_price: 9}], name: 'Renamed'})
  })

  it('without a terminal, missing required flags exit 2 listing them', async () => {
    const before = fileDigest(db)
    const r = await run(db, ['products', 'create', '--api-id', 'x', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe('missing required flags: --name, --base-px, --interval, --interval-count (or pass --body FILE)')
    expect(fileDigest(db)).toBe(before)
  })
})

describe('bad input exits 2, names the field and the value, and leaves the store byte-for-byte unchanged', () => {
  /** A valid create, with some flags replaced. */
  const good = (over: Record<string, string> = {}) => Object.entries({'--api-id': 'p1', '--base-px': '5', '--interval': 'month', '--interval-count': '1', '--name': 'P1', ...over}).flat()
  const cases: [string, () => string[], RegExp][] = [
    ['unknown interval', () => ['products', 'create', ...good({'--interval': 'monthly'})], /interval: unknown interval "monthly"/],
    ['3-letter country', () => ['products', 'create', ...good(), '--country-price', 'DEU=5:EUR'], /country_prices\[0\]\.country: unknown country "DEU"/],
    ['unknown currency', () => ['products', 'create', ...good(), '--country-price', 'DE=5:EUX'], /country_prices\[0\]\.currency: unknown currency "EUX"/],
    ['duplicate name', () => ['products', 'create', ...good({'--name': 'Pro (baseline)'})], /name: "Pro \(baseline\)" is already used by product "pro_base"/],
    ['negative price', () => ['products', 'create', ...good({'--base-px': '-5'})], /base_px: must not be negative, got -5/],
    ['negative country price', () => ['products', 'create', ...good(), '--country-price', 'DE=-1:EUR'], /country_prices\[0\]\.amount: must not be negative, got -1/],
    ['too many decimals', () => ['products', 'create', ...good(), '--country-price', 'JP=100.5:JPY'], /100\.5 has more decimals than JPY allows \(0\)/],
    ['integration missing its id (short form)', () => ['products', 'create', ...good(), '--integration', 'gateway_a'], /integrations\[0\]\.gateway_a_product_id: is required/],
    ['integration missing its id (JSON)', () => ['products', 'create', ...good(), '--integration', '{"type":"gateway_d","currency":"EUR"}'], /integrations\[0\]\.gateway_d_plan_id: is required/],
    ['unknown integration type', () => ['products', 'create', ...good(), '--integration', 'gateway_x:1'], /unknown integration type "gateway_x"/],
    ['malformed JSON in --body', () => ['products', 'create', '--body', file('{"api_id": "p1", ')], /--body: malformed JSON/],
    ['--body that is not an object', () => ['products', 'create', '--body', file('[1]')], /--body: expected a JSON object/],
    ['malformed --feature JSON', () => ['products', 'create', ...good(), '--feature', '{api_id:'], /--feature: malformed JSON/],
    ['unknown flag', () => ['products', 'create', ...good(), '--colour', 'red'], /Nonexistent flag: --colour/],
    ['unknown body field', () => ['products', 'create', '--body', file(JSON.stringify({...body, api_id: 'p2', name: 'P2', base_price: 1}))], /unknown field "base_price"/],
    ['one_time with interval_count 12', () => ['products', 'create', ...good({'--interval': 'one_time', '--interval-count': '12'})], /interval_count: one_time products use interval_count 1, got 12/],
    ['min above max', () => ['products', 'create', ...good(), '--min-px', '9', '--max-px', '3'], /min_px 9 is above max_px 3/],
    ['missing baseline', () => ['products', 'create', ...good(), '--baseline', 'ghost'], /baseline: no product with api_id "ghost"/],
    ['update with --api-id', () => ['products', 'update', 'pro_base', '--api-id', 'other'], /--api-id: api_id is immutable/],
    ['update to a bad interval', () => ['products', 'update', 'pro_base', '--interval', 'fortnight'], /interval: unknown interval "fortnight"/],
    ['delete without --yes and no terminal', () => ['products', 'delete', 'pro_base'], /refusing to delete product pro_base without --yes/],
    ['import with a failing row', () => ['products', 'import', file('api_id,name,base_px,interval,interval_count\nok,Ok,1,month,1\nbad,Bad,1,month,0\n', 'csv')], /row 2 \(line 3, api_id "bad"\): interval_count: must be at least 1, got 0/],
  ]
  it.each(cases)('%s', async (_name, args, message) => {
    // Byte for byte (the digest of the file implies every row; no dump needed).
    const digest = fileDigest(db)
    const r = await run(db, [...args(), '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toMatch(message)
    expect(fileDigest(db)).toBe(digest)
  })

  it('prints the error on stderr without --json, ending with the help to read', async () => {
    const r = await run(db, ['products', 'create', ...good({'--interval': 'monthly'})])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('Error: invalid product: interval: unknown interval "monthly"')
    expect(r.stderr.trim()).toMatch(/ See "pricectl products create --help"\.$/)
  })

  it('an api_id that exists is a conflict: exit 1, the store unchanged, bad input still exits 2 first', async () => {
    const before = fileDigest(db)
    const r = await run(db, ['products', 'create', ...good({'--api-id': 'pro_base'}), '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toEqual({message: 'api_id: product "pro_base" already exists (change it with: pricectl products update pro_base ...)', success: false})
    expect(fileDigest(db)).toBe(before)
    const human = await run(db, ['products', 'create', ...good({'--api-id': 'pro_base'})])
    expect(human.code).toBe(1)
    expect(human.stderr).not.toContain('--help')
    expect((await run(db, ['products', 'create', ...good({'--api-id': 'pro_base', '--interval': 'monthly'}), '--json'])).code).toBe(2)
  })
})

describe('products update / list / delete', () => {
  it('update overwrites country prices and integrations, keeps the rest, and prints the get shape', async () => {
    await run(db, ['products', 'create', '--body', file(JSON.stringify(body))])
    // --country-price replaces the list: dropping the stored ones needs --yes without a terminal.
    const u = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'FR=9.49:EUR', '--integration', 'gateway_c:plan_new', '--base-px', '10.99', '--yes', '--json'])
    expect(u.code, u.stdout).toBe(0)
    expect(u.json).toMatchObject({
      base_px: 10.99,
      country_prices: [{country: 'FR', currency: 'EUR', local_price: 9.49}],
      integrations: [{gateway_c_plan_id: 'plan_new', type: 'gateway_c'}],
      max_px: 19.99,
      message: 'updated product pro_monthly',
      min_px: 4.99,
      name: 'Pro Monthly',
      product_trials: [{interval: 'day', interval_count: 14}],
    })
    expect(u.json.features).toHaveLength(2)
    // "none" clears a list or an optional value.
    const cleared = await run(db, ['products', 'update', 'pro_monthly', '--integration', 'none', '--min-px', 'none', '--baseline', 'none', '--json'])
    expect(cleared.json).toMatchObject({baseline_id: null, integrations: [], min_px: null})
    // get --json fed back as the body changes nothing.
    const g = await run(db, ['products', 'get', 'pro_monthly', '--json'])
    const before = fileDigest(db)
    const same = await run(db, ['products', 'update', 'pro_monthly', '--body', file(JSON.stringify(g.json)), '--json'])
    expect(same.json.message).toBe('product pro_monthly unchanged (the update matches what is stored)')
    expect(fileDigest(db)).toBe(before)
  })

  it('list prints the spec list entries; --output csv and table for people', async () => {
    await run(db, ['products', 'create', '--body', file(JSON.stringify(body))])
    const l = await run(db, ['products', 'list', '--json'])
    expect(l.json).toEqual({
      message: '2 products',
      products: [
        {api_id: 'pro_base', base_px: 12, integrations: [], max_px: null, min_px: null, name: 'Pro (baseline)'},
        {api_id: 'pro_monthly', base_px: 9.99, integrations: body.integrations, max_px: 19.99, min_px: 4.99, name: 'Pro Monthly'},
      ],
      success: true,
    })
    const csv = await run(db, ['products', 'list', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('api_id,name,base_px,billing,min_px,max_px,countries,integrations')
    expect(csv.stdout).toContain('pro_monthly,Pro Monthly,9.99,every month,4.99,19.99,3,')
    const t = await run(db, ['products', 'list'])
    expect(t.stdout).toMatch(/pro_monthly\s*│ Pro Monthly/)
  })

  it('delete with --yes removes the product and prints {message, success, api_id}', async () => {
    const r = await run(db, ['products', 'delete', 'pro_base', '--yes', '--json'])
    expect(r.json).toEqual({api_id: 'pro_base', dry_run: false, impact: expect.objectContaining({added: 0, changes: expect.arrayContaining([expect.objectContaining({after: null, change: 'removed', product: 'pro_base'})])}), message: 'deleted product pro_base', success: true})
    expect(dump(db).tables.products).toEqual([])
    expect((await run(db, ['products', 'delete', 'pro_base', '--yes'])).code).toBe(1)
  })
})
