import {beforeEach, describe, expect, it} from 'vitest'

import {run, seededStore, tempStore} from '../helpers/run.js'
import {count, must, segCatalog, withBody} from '../helpers/segments-fixtures.js'

describe('audiences', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    // Seeded once per worker and copied for each test (test/helpers/run.ts seededStore).
    await seededStore(db, 'audiences:catalog', segCatalog)
  })

  it('creates from flags: rules in their text form, prices as multiplier or fixed amount', async () => {
    const r = await run(db, [
      'audiences', 'create', '--api-id', 'dach', '--name', 'DACH', '--priority', '5',
      '--rule', 'country in DE,AT,CH', '--rule', 'feature plan_level gte 3',
      '--price', 'basic=x0.8', '--price', 'yearly=79.99:EUR', '--json',
    ])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({message: 'created audience dach', success: true})
    expect(r.json.audience).toMatchObject({
      api_id: 'dach',
      name: 'DACH',
      prices: [
        {amount: null, currency: null, multiplier: 0.8, product: 'basic'},
        {amount: 79.99, currency: 'EUR', multiplier: null, product: 'yearly'},
      ],
      priority: 5,
      rules: [
        {operator: 'in', type: 'country', values: ['DE', 'AT', 'CH']},
        {feature: 'plan_level', operator: 'gte', type: 'feature', value: 3},
      ],
      rules_text: ['country in DE,AT,CH', 'feature plan_level gte 3'],
    })
    const got = await run(db, ['audiences', 'get', 'dach', '--json'])
    expect(got.json.audience).toEqual(r.json.audience)
    const table = await run(db, ['audiences', 'get', 'dach'])
    expect(table.stdout).toContain('feature plan_level gte 3')
    expect(table.stdout).toContain('yearly 79.99 EUR')
  })

  it('creates from --body with rule objects; flags override the body', async () => {
    const r = await withBody(db, ['audiences', 'create', '--priority', '7'], {
      api_id: 'gold',
      name: 'Gold',
      priority: 1,
      rules: [{feature: 'tier', operator: 'in', type: 'feature', values: ['gold', 'platinum']}, 'feature beta exists'],
    })
    expect(r.code).toBe(0)
    expect(r.json.audience.priority).toBe(7)
    expect(r.json.audience.rules_text).toEqual(['feature tier in gold,platinum', 'feature beta exists'])
  })

  it('a printed audience can be fed back as a body', async () => {
    const made = await must(db, ['audiences', 'create'], {api_id: 'src', name: 'Source', prices: [{amount: 5, currency: 'EUR', product: 'basic'}], priority: 4, rules: ['country not in US', 'feature plan eq "pro plus"']})
    const copy = await withBody(db, ['audiences', 'create', '--api-id', 'copy'], made.json.audience)
    expect(copy.code).toBe(0)
    const {api_id: _a, created_at: _c, updated_at: _u, ...same} = made.json.audience
    expect(copy.json.audience).toMatchObject(same)
    const again = await withBody(db, ['audiences', 'update', 'src'], made.json.audience)
    expect(again.json.message).toBe('audience src unchanged (the update matches what is stored)')
  })

  it('lists highest priority first, ties by api_id', async () => {
    await must(db, ['audiences', 'create'], {api_id: 'b_low', name: 'low', priority: 1, rules: ['country in DE']})
    await must(db, ['audiences', 'create'], {api_id: 'c_high', name: 'high', priority: 9, rules: ['country in DE']})
    await must(db, ['audiences', 'create'], {api_id: 'a_low', name: 'low too', priority: 1, rules: ['country in DE']})
    const r = await run(db, ['audiences', 'list', '--json'])
    expect(r.json.audiences.map((a: {api_id: string}) => a.api_id)).toEqual(['c_high', 'a_low', 'b_low'])
    const csv = await run(db, ['audiences', 'list', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('api_id,name,priority,rules,prices')
  })

  it.each([
    [['--rule', 'feature plan like pro'], 'rules[0]: unknown operator "like"'],
    [['--rule', 'feature plan_level gt three'], 'rules[0].value: "gt" compares numbers: "three" is not a number'],
    [['--rule', 'country in DE', '--rule', 'country in XX'], 'rules[1].values[0]: unknown country "XX"'],
    [['--price', 'nope=x0.5'], 'prices[0].product: unknown product "nope"', 1],
    [['--price', 'basic=x0'], 'prices[0].multiplier: must be above 0'],
    [['--price', 'basic=9.999:EUR'], 'prices[0].amount: 9.999 has more decimals than EUR allows (2)'],
    [['--price', 'basic=9'], '--price: expected PRODUCT=xMULTIPLIER'],
    [['--priority', 'high'], 'priority: expected a whole number, got "high"'],
  ] as [string[], string, number?][])('bad input %j exits 2 (a product that does not exist: 1), names field and value, writes nothing', async (args, message, code = 2) => {
    const r = await run(db, ['audiences', 'create', '--api-id', 'bad', '--name', 'Bad', ...args, '--json'])
    expect(r.code).toBe(code)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain(message)
    expect(count(db, 'audiences')).toBe(0)
    expect(count(db, 'audience_prices')).toBe(0)
  })

  it('refuses bad rules in a body too (unknown operator, gt against text)', async () => {
    const r = await withBody(db, ['audiences', 'create'], {
      api_id: 'bad',
      name: 'Bad',
      rules: [{feature: 'a', operator: 'around', type: 'feature', value: 1}, {feature: 'b', operator: 'gt', type: 'feature', value: 'x'}],
    })
    expect(r.code).toBe(2)
    expect(r.json.message).toContain('rules[0].operator: unknown operator "around"')
    expect(r.json.message).toContain('rules[1].value: "gt" compares numbers: "x" is not a number')
    expect(count(db, 'audiences')).toBe(0)
  })

  it('refuses a duplicate api_id and the reserved "default"', async () => {
    await must(db, ['audiences', 'create'], {api_id: 'dach', name: 'DACH', rules: ['country in DE']})
    const dup = await withBody(db, ['audiences', 'create'], {api_id: 'dach', name: 'again'})
    // A conflict with the store, not bad input: exit 1.
    expect(dup.code).toBe(1)
    expect(dup.json.message).toContain('audience "dach" already exists')
    const reserved = await withBody(db, ['audiences', 'create'], {api_id: 'default', name: 'x'})
    expect(reserved.code).toBe(2)
    expect(reserved.json.message).toContain('"default" is the audience of users no audience matches')
  })

  it('updates: given fields replace stored ones, rules and prices as whole lists; an unchanged update says so', async () => {
    await must(db, ['audiences', 'create'], {api_id: 'dach', name: 'DACH', prices: [{multiplier: 0.5, product: 'basic'}], rules: ['country in DE', 'feature x exists']})
    // Country rules only: the x0.5 price now reaches everyone in AT, a move beyond --max-change-pct (--yes without a terminal).
    const r = await run(db, ['audiences', 'update', 'dach', '--rule', 'country in AT', '--yes', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.audience.rules_text).toEqual(['country in AT'])
    expect(r.json.audience.prices).toHaveLength(1)
    // AT's prices go back from x0.5 (+100%): --yes without a terminal.
    const cleared = await run(db, ['audiences', 'update', 'dach', '--price', 'none', '--yes', '--json'])
    expect(cleared.json.audience.prices).toEqual([])
    const same = await run(db, ['audiences', 'update', 'dach', '--name', 'DACH', '--json'])
    expect(same.json.message).toBe('audience dach unchanged (the update matches what is stored)')
    const bad = await run(db, ['audiences', 'update', 'dach', '--rule', 'feature n lt many', '--json'])
    expect(bad.code).toBe(2)
    expect((await run(db, ['audiences', 'get', 'dach', '--json'])).json.audience.rules_text).toEqual(['country in AT'])
    const rename = await withBody(db, ['audiences', 'update', 'dach'], {api_id: 'other'})
    expect(rename.code).toBe(2)
    expect(rename.json.message).toContain('api_id is immutable')
  })

  it('a missing audience exits 1; missing flags without a terminal exit 2 listing them', async () => {
    const missing = await run(db, ['audiences', 'get', 'nope', '--json'])
    expect(missing.code).toBe(1)
    expect(missing.json.message).toContain('no audience with api_id "nope"')
    const flags = await run(db, ['audiences', 'create', '--json'])
    expect(flags.code).toBe(2)
    expect(flags.json.message).toContain('--api-id, --name')
  })

  it('delete refuses an audience packages or campaigns are segmented on, unless --force deletes them too', async () => {
    await must(db, ['audiences', 'create'], {api_id: 'dach', name: 'DACH', rules: ['country in DE']})
    await must(db, ['packages', 'create'], {api_id: 'dach_pkg', audience: 'dach', name: 'DACH pkg', products: ['basic']})
    await must(db, ['coupons', 'create'], {api_id: 'TEN', coupon_type: 'percentage', name: 'Ten', value: 10})
    await must(db, ['campaigns', 'create'], {api_id: 'dach_sale', audience: 'dach', coupon: 'TEN', name: 'Sale'})
    const noYes = await run(db, ['audiences', 'delete', 'dach', '--json'])
    expect(noYes.code).toBe(2)
    expect(noYes.json.message).toContain('without --yes')
    const refused = await run(db, ['audiences', 'delete', 'dach', '--yes', '--json'])
    expect(refused.code).toBe(1)
    expect(refused.json.message).toContain('used by package dach_pkg, campaign dach_sale; pass --force')
    expect(count(db, 'audiences')).toBe(1)
    const forced = await run(db, ['audiences', 'delete', 'dach', '--yes', '--force', '--json'])
    expect(forced.code).toBe(0)
    expect(forced.json).toMatchObject({api_id: 'dach', campaigns_deleted: ['dach_sale'], packages_deleted: ['dach_pkg']})
    expect(count(db, 'audiences') + count(db, 'packages') + count(db, 'campaigns')).toBe(0)
    expect(count(db, 'coupons')).toBe(1)
  })
})
