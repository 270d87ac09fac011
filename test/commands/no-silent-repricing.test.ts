import {describe, expect, it} from 'vitest'

import {createProducts} from '../helpers/catalog.js'
import {fileDigest} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * Issue 32, items 4 and 5: without a terminal, a command-line write never reprices silently.
 * A --country-price replacement that drops stored prices needs --yes (or the --add-/--remove-
 * edits), and a move beyond --max-change-pct (default 25%) needs --yes.
 */

async function must(db: string, args: string[]): Promise<any> {
  const r = await run(db, [...args, '--json'])
  if (r.code !== 0) throw new Error(`${args.join(' ')} failed: ${r.stdout} ${r.stderr}`)
  return r.json
}

/** pro_monthly as the issue found it: country prices in DE, FR and IN (299 INR), an integration. */
const PRO = {
  api_id: 'pro_monthly',
  base_px: 9.99,
  country_prices: [
    {amount: 8.99, country: 'DE', currency: 'EUR'},
    {amount: 8.99, country: 'FR', currency: 'EUR'},
    {amount: 299, country: 'IN', currency: 'INR'},
  ],
  integrations: [{gateway_a_product_id: 'prod_pro', type: 'gateway_a'}],
  interval: 'month',
  interval_count: 1,
  min_px: 5,
  name: 'Pro monthly',
}

async function proStore(): Promise<string> {
  const db = tempStore()
  await createProducts(db, [PRO])
  return db
}

const countryPrices = async (db: string) => (await must(db, ['products', 'get', 'pro_monthly'])).country_prices

describe('products update: a replacing --country-price never drops prices silently (issue 32, item 4)', () => {
  it('without a terminal: exit 2 naming the prices it would drop and the flags to use instead; nothing written', async () => {
    const db = await proStore()
    const before = fileDigest(db)
    const r = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.49:EUR'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('refusing to drop 2 country prices of pro_monthly (FR=8.99:EUR, IN=299:INR) without --yes')
    expect(r.stderr).toContain('--add-country-price COUNTRY=AMOUNT[:CURRENCY]')
    expect(r.stderr).toContain('--remove-country-price COUNTRY')
    expect(r.stdout).toBe('')
    const j = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.49:EUR', '--json'])
    expect(j.code).toBe(2)
    expect(j.json).toMatchObject({message: expect.stringContaining('IN=299:INR'), success: false})
    expect(fileDigest(db)).toBe(before)
    // --dry-run asks nothing and writes nothing: it reports the drop.
    const dry = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.49:EUR', '--dry-run'])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain('drops 2 country prices of pro_monthly: FR, IN')
    expect(fileDigest(db)).toBe(before)
  })

  it('--yes replaces the list (the spec\'s update); a list that keeps every country asks nothing', async () => {
    const db = await proStore()
    const keep = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.49:EUR', '--country-price', 'FR=8.99:EUR', '--country-price', 'IN=299:INR'])
    expect(keep.code, keep.stderr).toBe(0)
    const r = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.49:EUR', '--yes'])
    expect(r.code, r.stderr).toBe(0)
    expect(await countryPrices(db)).toEqual([{country: 'DE', currency: 'EUR', local_price: 9.49}])
  })

  it('--add-country-price changes one country and keeps the others; --remove-country-price removes one', async () => {
    const db = await proStore()
    const r = await run(db, ['products', 'update', 'pro_monthly', '--add-country-price', 'DE=9.49:EUR', '--add-country-price', 'AT=9.49'])
    expect(r.code, r.stderr).toBe(0)
    const sorted = (await countryPrices(db)).sort((a: any, b: any) => a.country.localeCompare(b.country))
    expect(sorted).toEqual([
      {country: 'AT', currency: 'EUR', local_price: 9.49},
      {country: 'DE', currency: 'EUR', local_price: 9.49},
      {country: 'FR', currency: 'EUR', local_price: 8.99},
      {country: 'IN', currency: 'INR', local_price: 299},
    ])
    const rm = await run(db, ['products', 'update', 'pro_monthly', '--remove-country-price', 'at', '--json'])
    expect(rm.code, rm.stdout).toBe(0)
    expect(rm.json.country_prices.map((c: any) => c.country).sort()).toEqual(['DE', 'FR', 'IN'])
    // A country without a price is named with the ones there are; nothing written.
    const before = fileDigest(db)
    const bad = await run(db, ['products', 'update', 'pro_monthly', '--remove-country-price', 'JP'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('product pro_monthly has no country price for "JP" (its country prices: DE, FR, IN)')
    // Edit and replace at once is refused: one says "keep the others", the other "replace them".
    const both = await run(db, ['products', 'update', 'pro_monthly', '--add-country-price', 'DE=9.99:EUR', '--country-price', 'DE=9.99:EUR'])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--country-price/)
    expect(fileDigest(db)).toBe(before)
  })

  it('--add-integration / --remove-integration edit the integrations one at a time', async () => {
    const db = await proStore()
    const add = await must(db, ['products', 'update', 'pro_monthly', '--add-integration', 'gateway_c:plan_42', '--add-integration', 'gateway_a:prod_pro'])
    expect(add.integrations).toEqual([
      expect.objectContaining({gateway_a_product_id: 'prod_pro', type: 'gateway_a'}),
      expect.objectContaining({gateway_c_plan_id: 'plan_42', type: 'gateway_c'}),
    ])
    const rm = await must(db, ['products', 'update', 'pro_monthly', '--remove-integration', 'gateway_a:prod_pro'])
    expect(rm.integrations).toEqual([expect.objectContaining({gateway_c_plan_id: 'plan_42', type: 'gateway_c'})])
    const bad = await run(db, ['products', 'update', 'pro_monthly', '--remove-integration', 'gateway_d'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('has no integration "gateway_d" (its integrations: gateway_c:plan_42)')
    expect((await countryPrices(db)).map((c: any) => c.country).sort()).toEqual(['DE', 'FR', 'IN'])
  })
})

describe('a price move beyond --max-change-pct needs --yes without a terminal (issue 32, item 5)', () => {
  it('refuses (exit 2) naming the largest moves first, writes nothing; --max-change-pct raises the bar, --yes writes', async () => {
    const db = await proStore()
    const before = fileDigest(db)
    // +40% base price: every country without a country price moves by 40% or more (rounding; a
    // gateway's bounds can stop a country being quoted at all).
    const args = ['products', 'update', 'pro_monthly', '--base-px', '13.99']
    const r = await run(db, args)
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/Error: \d+ prices would move by more than 25%: [^:]*\+\d+(\.\d+)?% [A-Z]{2} pro_monthly/)
    expect(r.stderr).toContain('nothing written')
    expect(r.stderr).toContain('re-run with --yes (or raise --max-change-pct)')
    expect(r.stdout).toBe('')
    const j = await run(db, [...args, '--json'])
    expect(j.code).toBe(2)
    expect(j.json.success).toBe(false)
    expect(j.json.impact.summary).toMatch(/^largest moves [^;]*\+\d+(\.\d+)?% [A-Z]{2} pro_monthly/)
    expect(fileDigest(db)).toBe(before)

    const raised = await run(db, [...args, '--max-change-pct', '100'])
    expect(raised.code, raised.stderr).toBe(0)
    expect(raised.stdout).toBe('updated product pro_monthly\n')
    // The applied report on stderr: the summary leads with the largest moves.
    expect(raised.stderr).toMatch(/price impact: largest moves [^;]*\+\d+(\.\d+)?% [A-Z]{2} pro_monthly/)
    expect((await must(db, ['products', 'get', 'pro_monthly'])).base_px).toBe(13.99)

    const back = await run(db, ['products', 'update', 'pro_monthly', '--base-px', '9.99', '--yes'])
    expect(back.code, back.stderr).toBe(0)
    // A small move (+5%) goes through without --yes.
    const small = await run(db, ['products', 'update', 'pro_monthly', '--base-px', '10.49'])
    expect(small.code, small.stderr).toBe(0)
  })

  it('the applied table shows the largest moves first', async () => {
    const db = await proStore()
    // DE +10%, IN +200%: the table's first row is IN.
    const r = await run(db, ['products', 'update', 'pro_monthly', '--add-country-price', 'DE=9.89:EUR', '--add-country-price', 'IN=897:INR', '--yes'])
    expect(r.code, r.stderr).toBe(0)
    const rows = r.stderr.split('\n').filter((l) => l.includes('│ pro_monthly'))
    expect(rows.map((l) => l.split('│')[2].trim())).toEqual(['IN', 'DE'])
    expect(r.stderr).toMatch(/price impact: largest moves \+200% IN pro_monthly, \+10(\.\d+)?% DE pro_monthly; 2 prices change/)
  })

  it('localization set: a factor that moves prices by more than 25% is refused without --yes', async () => {
    const db = await proStore()
    const before = fileDigest(db)
    const r = await run(db, ['localization', 'set', 'BR', '0.5'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/would move by more than 25%: -\d+(\.\d+)?% BR pro_monthly/)
    expect(fileDigest(db)).toBe(before)
    expect((await run(db, ['localization', 'set', 'BR', '0.5', '--yes'])).code).toBe(0)
  })

  it('experiments conclude: an x0.85 arm that raises India through the min_px clamp is refused without --yes', async () => {
    const db = await proStore()
    await must(db, ['experiments', 'create', '--name', 'Cheaper', '-p', 'pro_monthly', '--arm', 'x0.85', '--seed', '1'])
    await must(db, ['experiments', 'start', '1', '--yes'])
    const before = fileDigest(db)
    const r = await run(db, ['experiments', 'conclude', '1', '1'])
    expect(r.code).toBe(2)
    // The arm's price in IN (299 INR x 0.85) is under min_px 5 USD: the clamp raises it, and conclude makes it the country price.
    expect(r.stderr).toMatch(/1 price would move by more than 25%: \+\d+(\.\d+)?% IN pro_monthly: nothing written \(largest moves \+\d+(\.\d+)?% IN pro_monthly/)
    expect(r.stderr).toContain('re-run with --yes')
    expect(fileDigest(db)).toBe(before)
    expect((await must(db, ['experiments', 'show', '1'])).experiment.status).toBe('running')
    const ok = await run(db, ['experiments', 'conclude', '1', '1', '--yes', '--json'])
    expect(ok.code, ok.stdout).toBe(0)
    expect(ok.json.impact.summary).toMatch(/^largest moves /)
  })

  it('--max-change-pct takes a percent >= 0', async () => {
    const db = await proStore()
    const r = await run(db, ['products', 'update', 'pro_monthly', '--base-px', '10', '--max-change-pct', 'lots'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--max-change-pct')
  })
})
