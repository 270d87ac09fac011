import countryToCurrency from 'country-to-currency'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {PriceImpact} from '../../src/schemas/impact.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {dump, fileDigest} from '../helpers/dump.js'
import {run, seededStore, tempStore} from '../helpers/run.js'

function file(db: string, name: string, content: string): string {
  const p = join(dirname(db), name)
  writeFileSync(p, content)
  return p
}

async function must(db: string, args: string[]): Promise<any> {
  const r = await run(db, [...args, '--json'])
  if (r.code !== 0) throw new Error(`${args.join(' ')} failed: ${r.stdout} ${r.stderr}`)
  return r.json
}

async function catalogStore(): Promise<string> {
  const db = tempStore()
  await createProducts(db, CATALOG)
  return db
}

/** The catalog and a case's setup commands, run once per worker for each distinct setup (several cases share one) and copied. */
async function caseStore(setup: string[][] = []): Promise<string> {
  const db = tempStore()
  await seededStore(db, `price-impact:${JSON.stringify(setup)}`, async (store) => {
    await createProducts(store, CATALOG)
    for (const s of setup) await must(store, s)
  })
  return db
}

const COUNTRIES = Object.keys(countryToCurrency as Record<string, string>).sort()

/** The issue's first example: starter_monthly with 203 country prices (9.99 EUR each), and team_yearly. */
async function issueStore(): Promise<string> {
  const db = tempStore()
  const countries = ['DE', ...COUNTRIES.filter((c) => c !== 'DE').slice(0, 202)]
  await createProducts(db, [
    {api_id: 'starter_monthly', base_px: 9.99, country_prices: countries.map((country) => ({amount: 9.99, country, currency: 'EUR'})), interval: 'month', interval_count: 1, name: 'Starter'},
    {api_id: 'team_yearly', base_px: 479, interval: 'year', interval_count: 1, name: 'Team yearly'},
  ])
  return db
}

describe('products update replacing 203 country prices (issue 15)', () => {
  it('--dry-run reports the 202 dropped country prices and each price they move, and writes nothing', async () => {
    const db = await issueStore()
    // Byte for byte: a digest of the file proves "nothing written" (stronger than a dump of the rows, and cheaper).
    const before = fileDigest(db)
    const r = await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--dry-run'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/drops 202 country prices of starter_monthly: AD, AE, AF/)
    expect(r.stdout).toMatch(/│ starter_monthly │ JP +│ default +│ €9\.99 +│ ￥[\d,]+ +│ EUR -> JPY/)
    expect(r.stdout).toMatch(/price impact: largest moves [^;]+; \d+ prices change in 1 product x \d+ countries; .*drops 202 country prices \(starter_monthly: 202\)/)
    expect(r.stdout).toContain('dry run: would update product starter_monthly')
    expect(fileDigest(db)).toBe(before)

    const j = await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--dry-run', '--json'])
    expect(j.json.dry_run).toBe(true)
    expect(PriceImpact.parse(j.json.impact)).toEqual(j.json.impact)
    expect(j.json.impact.dropped).toEqual([{count: 202, countries: expect.any(Array), product: 'starter_monthly'}])
    expect(j.json.impact.dropped[0].countries).toHaveLength(202)
    expect(j.json.impact.changes.every((c: any) => c.product === 'starter_monthly' && c.country !== 'DE')).toBe(true)
    expect(j.json.impact.changed).toBe(j.json.impact.changes.length)
    // The JSON shows the product as it would be: one country price.
    expect(j.json.country_prices).toEqual([{country: 'DE', currency: 'EUR', local_price: 9.99}])
    expect(fileDigest(db)).toBe(before)
  })

  it('--max-changes exceeded: exit 1 even with --yes, nothing written, the impact in the JSON error; within it, written', async () => {
    const db = await issueStore()
    const before = dump(db)
    const digest = fileDigest(db)
    // --yes allows dropping the 202 country prices without a terminal; it does not lift --max-changes.
    const r = await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--max-changes', '5', '--yes'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/Error: \d+ prices would change, more than --max-changes 5: nothing written \(.*drops 202 country prices/)
    expect(r.stderr).toContain('review them with --dry-run')
    const j = await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--max-changes', '5', '--yes', '--json'])
    expect(j.code).toBe(1)
    expect(j.json).toMatchObject({impact: {dropped: [{count: 202, product: 'starter_monthly'}]}, success: false})
    expect(dump(db)).toEqual(before)
    expect(fileDigest(db)).toBe(digest)

    const ok = await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--max-changes', '1000', '--yes'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toBe('updated product starter_monthly\n')
    expect(ok.stderr).toMatch(/price impact: largest moves [^;]+; \d+ prices change .*drops 202 country prices/)
    expect((await must(db, ['products', 'get', 'starter_monthly'])).country_prices).toHaveLength(1)
  })
})

describe('localization import reports prices, not factor counts (issue 15)', () => {
  it('--dry-run lists each price the factors move, per product x country, in the display format', async () => {
    const db = await issueStore()
    const before = fileDigest(db)
    const csv = file(db, 'factors.csv', 'country,factor\nFR,0.74\nIN,0.25\n')
    const r = await run(db, ['localization', 'import', csv, '--dry-run'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/│ team_yearly +│ FR +│ default +│ [\d\s]+,\d\d\s€ +│ [\d\s]+,\d\d\s€ +│ -2\d\.\d+% /)
    // starter_monthly has a country price in FR (and in IN): the factors do not move it.
    expect(r.stdout).not.toMatch(/starter_monthly/)
    expect(r.stdout).toMatch(/price impact: largest moves -\d+(\.\d+)?% IN team_yearly, -2\d(\.\d+)?% FR team_yearly; 2 prices change in 1 product x 2 countries/)
    expect(r.stdout).toContain('dry run: would write 2 factors')
    expect(fileDigest(db)).toBe(before)
    const j = await run(db, ['localization', 'import', csv, '--dry-run', '--json'])
    const fr = j.json.impact.changes.find((c: any) => c.country === 'FR')
    expect(fr).toMatchObject({audience: 'default', change: 'changed', product: 'team_yearly'})
    expect(fr.after.price).toBeLessThan(fr.before.price)
    expect(fr.before.display).toMatch(/€/)
    expect(fileDigest(db)).toBe(before)
  })
})

type Case = {args: string[]; changes: 'added' | 'none' | 'some'; setup?: string[][]}

const EXPERIMENT = ['experiments', 'create', '--name', 'Yearly', '-p', 'pro_yearly', '--arm', 'x1.2', '--seed', '1']

/** Every command family that can change a quote, with what it is expected to do to prices. */
const CASES: Record<string, Case> = {
  'products create': {args: ['products', 'create', '--api-id', 'new', '--name', 'New', '--base-px', '5', '--interval', 'month', '--interval-count', '1'], changes: 'added'},
  'products update': {args: ['products', 'update', 'pro_yearly', '--base-px', '120'], changes: 'some'},
  'products delete': {args: ['products', 'delete', 'lifetime', '--yes'], changes: 'some'},
  'products import': {args: ['products', 'import', 'FILE:products.json'], changes: 'some'},
  // A hand-set country price (DE 8.99 EUR) replaced by the factor's price.
  'products localize': {args: ['products', 'localize', 'pro_monthly', '--country', 'DE'], changes: 'some', setup: [['localization', 'set', 'DE', '0.5', '--yes']]},
  'localization set': {args: ['localization', 'set', 'IN', '0.3'], changes: 'some'},
  'localization clear': {args: ['localization', 'clear', '--yes'], changes: 'some', setup: [['localization', 'set', 'IN', '0.3', '--yes']]},
  'localization import': {args: ['localization', 'import', 'FILE:factors.csv'], changes: 'some'},
  'rounding set': {args: ['rounding', 'set', 'EUR', '0+: end .49 nearest'], changes: 'some'},
  'fx set': {args: ['fx', 'set', 'GBP', '0.5'], changes: 'some'},
  'fx import': {args: ['fx', 'import', 'FILE:eurofxref.csv'], changes: 'some'},
  'fx delete': {args: ['fx', 'delete', 'GBP', '--yes'], changes: 'some', setup: [['fx', 'set', 'GBP', '0.5', '--yes']]},
  'fx prune': {args: ['fx', 'prune', '--source', 'manual', '--yes'], changes: 'some', setup: [['fx', 'set', 'GBP', '0.5', '--yes']]},
  'coupons create': {args: ['coupons', 'create', '--api-id', 'TEN', '--name', 'Ten', '--type', 'percentage', '--value', '10'], changes: 'none'},
  'coupons update': {
    args: ['coupons', 'update', 'TEN', '--value', '20'],
    changes: 'some',
    setup: [['coupons', 'create', '--api-id', 'TEN', '--name', 'Ten', '--type', 'percentage', '--value', '10'], ['campaigns', 'create', '--api-id', 'all', '--name', 'All', '--coupon', 'TEN']],
  },
  'coupons delete': {args: ['coupons', 'delete', 'TEN', '--yes'], changes: 'none', setup: [['coupons', 'create', '--api-id', 'TEN', '--name', 'Ten', '--type', 'percentage', '--value', '10']]},
  'campaigns create': {
    args: ['campaigns', 'create', '--api-id', 'de', '--name', 'DE', '--coupon', 'TEN', '--country', 'DE'],
    changes: 'some',
    setup: [['coupons', 'create', '--api-id', 'TEN', '--name', 'Ten', '--type', 'percentage', '--value', '10']],
  },
  'campaigns delete': {
    args: ['campaigns', 'delete', 'de', '--yes'],
    changes: 'some',
    setup: [['coupons', 'create', '--api-id', 'TEN', '--name', 'Ten', '--type', 'percentage', '--value', '10'], ['campaigns', 'create', '--api-id', 'de', '--name', 'DE', '--coupon', 'TEN', '--country', 'DE']],
  },
  'audiences create': {args: ['audiences', 'create', '--api-id', 'students', '--name', 'Students', '--rule', 'feature student eq yes', '--price', 'pro_yearly=x0.5'], changes: 'some'},
  'audiences update': {
    args: ['audiences', 'update', 'students', '--price', 'pro_yearly=x0.4'],
    changes: 'some',
    setup: [['audiences', 'create', '--api-id', 'students', '--name', 'Students', '--rule', 'feature student eq yes', '--price', 'pro_yearly=x0.5', '--yes']],
  },
  'audiences delete': {
    args: ['audiences', 'delete', 'students', '--yes'],
    changes: 'some',
    setup: [['audiences', 'create', '--api-id', 'students', '--name', 'Students', '--rule', 'feature student eq yes', '--price', 'pro_yearly=x0.5', '--yes']],
  },
  'packages create': {args: ['packages', 'create', '--api-id', 'de', '--name', 'DE', '--product', 'pro_yearly', '--country', 'DE'], changes: 'added'},
  'packages update': {args: ['packages', 'update', 'de', '--product', 'pro_yearly,lifetime'], changes: 'added', setup: [['packages', 'create', '--api-id', 'de', '--name', 'DE', '--product', 'pro_yearly', '--country', 'DE']]},
  'packages delete': {args: ['packages', 'delete', 'de', '--yes'], changes: 'some', setup: [['packages', 'create', '--api-id', 'de', '--name', 'DE', '--product', 'pro_yearly', '--country', 'DE']]},
  'experiments start': {args: ['experiments', 'start', '1'], changes: 'some', setup: [EXPERIMENT]},
  'experiments stop': {args: ['experiments', 'stop', '1'], changes: 'some', setup: [[...EXPERIMENT, '--start']]},
  'gateways set': {args: ['gateways', 'set', 'gateway_a', '--currency', 'EUR', '--divisible-by', '100'], changes: 'some'},
}

function files(db: string, args: string[]): string[] {
  const content: Record<string, string> = {
    'eurofxref.csv': 'Date, USD, JPY, GBP, \n13 April 2026, 1.1684, 186.75, 0.6, \n',
    'factors.csv': 'country,factor\nIN,0.3\nFR,0.7\n',
    'products.json': JSON.stringify([{...CATALOG[1], base_px: 150}]),
  }
  return args.map((a) => (a.startsWith('FILE:') ? file(db, a.slice(5), content[a.slice(5)]) : a))
}

describe('every command that can change a quote: --dry-run reports and writes nothing', () => {
  it.each(Object.keys(CASES))('%s', async (name) => {
    const c = CASES[name]
    const db = await caseStore(c.setup)
    const args = files(db, c.args)
    const before = fileDigest(db)
    const r = await run(db, [...args, '--dry-run', '--json'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.json.dry_run).toBe(true)
    expect(r.json.message).toMatch(/dry run|would/)
    const impact = PriceImpact.parse(r.json.impact)
    if (c.changes === 'some') expect(impact.changed, impact.summary).toBeGreaterThan(0)
    if (c.changes === 'added') expect([impact.changed, impact.added > 0]).toEqual([0, true])
    if (c.changes === 'none') expect(impact.changes).toEqual([])
    expect(fileDigest(db)).toBe(before)
    // Human output: the summary line on stdout, still nothing written.
    const h = await run(db, [...args, '--dry-run'])
    expect(h.code).toBe(0)
    expect(h.stdout).toContain(`price impact: ${impact.summary}`)
    expect(fileDigest(db)).toBe(before)
  })
})

describe('--max-changes: exit 1 and nothing written when exceeded', () => {
  it.each(['rounding set', 'fx set', 'audiences create', 'experiments start', 'localization import', 'products delete'])('%s', async (name) => {
    const c = CASES[name]
    const db = await caseStore(c.setup)
    const args = files(db, c.args)
    const before = dump(db)
    const digest = fileDigest(db)
    const r = await run(db, [...args, '--max-changes', '0', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toMatch(/prices would change, more than --max-changes 0: nothing written/)
    expect(PriceImpact.parse(r.json.impact).changed).toBeGreaterThan(0)
    expect(fileDigest(db)).toBe(digest)
    // Within the limit and with --yes (some of these move a price by more than 25%), the change is written and its impact returned.
    const ok = await run(db, [...args, '--max-changes', String(r.json.impact.changed), '--yes', '--json'])
    expect(ok.code, ok.stdout).toBe(0)
    expect(ok.json).toMatchObject({dry_run: false, impact: {changed: r.json.impact.changed}})
    expect(dump(db)).not.toEqual(before)
  })
})

describe('impact by audience and by experiment arm', () => {
  it('audiences create: the members price in each country, before and after', async () => {
    const db = await catalogStore()
    const r = await must(db, [...CASES['audiences create'].args, '--dry-run'])
    const de = r.impact.changes.find((c: any) => c.country === 'DE' && c.product === 'pro_yearly')
    expect(de).toMatchObject({audience: 'students', change: 'changed'})
    expect(de.after.price).toBeLessThan(de.before.price)
    expect(r.impact.changes.every((c: any) => c.audience === 'students' && c.product === 'pro_yearly')).toBe(true)
  })

  it('experiments start: each arm against the control price', async () => {
    const db = await caseStore([EXPERIMENT])
    const r = await must(db, ['experiments', 'start', '1', '--dry-run'])
    const us = r.impact.changes.filter((c: any) => c.country === 'US')
    expect(us).toEqual([expect.objectContaining({audience: expect.stringMatching(/^arm 1:/), product: 'pro_yearly'})])
    expect(us[0].after.price).toBeGreaterThan(us[0].before.price)
    expect((await must(db, ['experiments', 'show', '1'])).experiment.status).toBe('draft')
  })
})
