import Database from 'better-sqlite3'
import {readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {run, runBin, tempStore} from '../helpers/run.js'

/** Every table's rows, as text: what "writes nothing" must leave unchanged. */
function dump(db: string): string {
  const d = new Database(db, {readonly: true})
  try {
    const tables = d.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[]
    return tables.map((t) => `${t}:${JSON.stringify(d.prepare(`SELECT * FROM "${t}"`).all())}`).join('\n')
  } finally {
    d.close()
  }
}

describe('price preview', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await createProducts(db, CATALOG)
  })

  it('prices products x countries and writes nothing (no lock, user or exposure)', async () => {
    const before = dump(db)
    const r = await run(db, ['price', 'preview', '-p', 'pro_monthly,lifetime', '--country', 'DE', '--country', 'US,JP', '--integration', 'gateway_a', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rows).toHaveLength(6)
    const de = r.json.rows.find((x: any) => x.product === 'pro_monthly' && x.country === 'DE')
    expect(de).toMatchObject({audience: 'default', currency: 'EUR', layer: 'country_price', price: 8.99})
    expect(de.display).toMatch(/^8,99\s€$/)
    expect(de.integrations.gateway_a.currency).toBe('EUR')
    expect(r.json.rows.find((x: any) => x.product === 'lifetime' && x.country === 'US').layer).toBe('base')
    // Sorted by product, country.
    expect(r.json.rows.map((x: any) => `${x.product}/${x.country}`)).toEqual(['lifetime/DE', 'lifetime/JP', 'lifetime/US', 'pro_monthly/DE', 'pro_monthly/JP', 'pro_monthly/US'])
    expect(dump(db)).toBe(before)
  })

  it('--feature prices as the audience whose rules match', async () => {
    const a = await run(db, ['audiences', 'create', '--api-id', 'power', '--name', 'Power users', '--rule', 'feature seats gte 10'])
    expect(a.code, a.stderr).toBe(0)
    const r = await run(db, ['price', 'preview', '-p', 'pro_monthly', '--country', 'US', '--feature', 'seats=12', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rows[0]).toMatchObject({audience: 'power', country: 'US', product: 'pro_monthly'})
    expect((await run(db, ['price', 'preview', '-p', 'pro_monthly', '--country', 'US', '--json'])).json.rows[0].audience).toBe('default')
  })

  it('a lock under the preview id does not win over --country', async () => {
    expect((await run(db, ['price', '-u', 'pricectl-preview', '-p', 'pro_monthly', '--country', 'US'])).code).toBe(0)
    const r = await run(db, ['price', 'preview', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    expect(r.json.rows[0]).toMatchObject({country: 'DE', currency: 'EUR', price: 8.99})
  })

  it('defaults to every product in the countries with country prices plus the default country', async () => {
    const r = await run(db, ['price', 'preview', '--output', 'csv'])
    expect(r.code, r.stderr).toBe(0)
    const countries = new Set(r.stdout.trim().split('\n').slice(1).map((l) => l.split(',')[1]))
    expect([...countries].sort()).toEqual(['DE', 'JP', 'KW', 'US'])
    expect(r.stdout.split('\n')[0]).toBe('product,country,audience,currency,price,display,price_usd,layer')
  })

  it('refuses a bad tolerance and --update without --against (exit 2)', async () => {
    expect((await run(db, ['price', 'preview', '--against', 'x.json', '--tolerance', 'lots'])).code).toBe(2)
    expect((await run(db, ['price', 'preview', '--update'])).code).toBe(2)
    expect((await run(db, ['price', 'preview', '--junit', join(dirname(db), 'gate.xml')])).code).toBe(2)
  })

  it('CI gate: fails on a one-cent change, passes after the snapshot is refreshed', () => {
    const snap = join(dirname(db), 'prices.json')
    const made = runBin(db, ['price', 'preview', '--output', 'json'])
    expect(made.code, made.stderr).toBe(0)
    writeFileSync(snap, made.stdout)
    // Deterministic: the same store gives the same bytes.
    expect(runBin(db, ['price', 'preview', '--output', 'json']).stdout).toBe(made.stdout)
    expect(runBin(db, ['price', 'preview', '--against', snap]).code).toBe(0)

    const up = runBin(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.00:EUR', '--country-price', 'JP=1200:JPY', '--country-price', 'KW=3.5:KWD'])
    expect(up.code, up.stderr).toBe(0)
    const gate = runBin(db, ['price', 'preview', '--against', snap])
    expect(gate.code).toBe(1)
    expect(gate.stdout).toContain('pro_monthly DE: 8.99 -> 9 EUR (+0.11%)')
    expect(gate.stdout.trim().split('\n')).toHaveLength(1)
    expect(gate.stderr).toMatch(/price gate failed: 1 of \d+ prices differ/)
    // Within an absolute tolerance of two cents, the cent passes.
    expect(runBin(db, ['price', 'preview', '--against', snap, '--tolerance', '0.02']).code).toBe(0)
    const json = runBin(db, ['price', 'preview', '--against', snap, '--json'])
    expect(json.code).toBe(1)
    expect(json.json.comparison.changes).toEqual([expect.objectContaining({after: 9, before: 8.99, change: 'changed', country: 'DE', product: 'pro_monthly'})])
    // The body says what the exit code says.
    expect(json.json).toMatchObject({comparison: {failed: 1, passed: false}, success: false})
    expect(json.json.comparison.compared).toBe(json.json.rows.length)

    // Refresh (what a reviewer commits), then the gate passes.
    const refreshed = runBin(db, ['price', 'preview', '--against', snap, '--update'])
    expect(refreshed.code, refreshed.stderr).toBe(0)
    expect(readFileSync(snap, 'utf8')).toBe(runBin(db, ['price', 'preview', '--output', 'json']).stdout)
    const again = runBin(db, ['price', 'preview', '--against', snap])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain('price gate passed')
  })

  it('reports added and removed rows, and reads a CSV snapshot', async () => {
    const snap = join(dirname(db), 'prices.csv')
    writeFileSync(snap, (await run(db, ['price', 'preview', '--country', 'DE,US', '--output', 'csv'])).stdout)
    expect((await run(db, ['price', 'preview', '--country', 'DE,US', '--against', snap])).code).toBe(0)
    const deleted = await run(db, ['products', 'delete', 'lifetime', '--yes'])
    expect(deleted.code, deleted.stderr).toBe(0)
    const r = await run(db, ['price', 'preview', '--country', 'DE,US,JP', '--against', snap])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('+ pro_monthly JP: new row')
    expect(r.stdout).toContain('- lifetime US: row gone')
  })

  it('snapshot rows outside -p and --country are not compared, counted once, named, and kept by --update', async () => {
    const snap = join(dirname(db), 'prices.json')
    writeFileSync(snap, (await run(db, ['price', 'preview', '--output', 'json'])).stdout)
    const all = JSON.parse(readFileSync(snap, 'utf8')).rows as {country: string; product: string}[]
    expect(all.length).toBeGreaterThan(4)
    const up = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.00:EUR', '--country-price', 'JP=1200:JPY', '--country-price', 'KW=3.5:KWD'])
    expect(up.code, up.stderr).toBe(0)

    // One product and two countries against the whole catalog's snapshot: 2 rows compared.
    const r = await run(db, ['price', 'preview', '-p', 'pro_monthly', '--country', 'DE,US', '--against', snap, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({comparison: {compared: 2, failed: 1, passed: false}, success: false})
    expect(r.json.comparison.not_compared).toHaveLength(all.length - 2)
    expect(r.json.comparison.not_compared).toContainEqual(expect.objectContaining({country: 'DE', product: 'lifetime'}))
    expect(r.stderr).toContain('price gate failed: 1 of 2 prices differ')
    expect(r.stderr).toMatch(new RegExp(`${all.length - 2} snapshot rows were outside -p/--country and not compared \\(lifetime `))
    // The other product did not move: its gate passes, whatever the snapshot holds besides.
    const other = await run(db, ['price', 'preview', '-p', 'lifetime', '--against', snap])
    expect(other.code, other.stderr).toBe(0)
    expect(other.stderr).toMatch(/price gate passed: \d+ prices match/)

    // A narrowed refresh rewrites its rows and keeps the others: the snapshot is the whole catalog's again.
    const refreshed = await run(db, ['price', 'preview', '-p', 'pro_monthly', '--against', snap, '--update'])
    expect(refreshed.code, refreshed.stderr).toBe(0)
    expect(readFileSync(snap, 'utf8')).toBe((await run(db, ['price', 'preview', '--output', 'json'])).stdout)
    expect((await run(db, ['price', 'preview', '--against', snap])).code).toBe(0)
  })

  it('a CSV snapshot refreshed for one product keeps the other rows cell for cell', async () => {
    const snap = join(dirname(db), 'prices.csv')
    const full = (await run(db, ['price', 'preview', '--integration', 'gateway_a', '--output', 'csv'])).stdout
    writeFileSync(snap, full)
    const refreshed = await run(db, ['price', 'preview', '-p', 'pro_monthly', '--integration', 'gateway_a', '--against', snap, '--update'])
    expect(refreshed.code, refreshed.stderr).toBe(0)
    expect(readFileSync(snap, 'utf8')).toBe(full)
  })

  it('on GitHub Actions a failing gate prints one ::error annotation per changed price; --junit writes a JUnit report', async () => {
    const snap = join(dirname(db), 'prices.json')
    writeFileSync(snap, (await run(db, ['price', 'preview', '--output', 'json'])).stdout)
    const up = await run(db, ['products', 'update', 'pro_monthly', '--country-price', 'DE=9.00:EUR', '--country-price', 'JP=1300:JPY', '--country-price', 'KW=3.5:KWD'])
    expect(up.code, up.stderr).toBe(0)
    const junit = join(dirname(db), 'gate.xml')
    const gate = runBin(db, ['price', 'preview', '--against', snap, '--junit', junit], {env: {GITHUB_ACTIONS: 'true'}})
    expect(gate.code).toBe(1)
    const annotations = gate.stderr.split('\n').filter((l) => l.startsWith('::error '))
    expect(annotations).toEqual([
      `::error file=${snap.replaceAll(':', '%3A').replaceAll(',', '%2C')},title=price gate%3A pro_monthly DE::~ pro_monthly DE: 8.99 -> 9 EUR (+0.11%25)`,
      expect.stringMatching(/^::error file=.*,title=price gate%3A pro_monthly JP::~ pro_monthly JP: \d+ -> 1300 JPY/),
    ])
    expect(gate.stdout).not.toContain('::error')
    const xml = readFileSync(junit, 'utf8')
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="pricectl price gate" tests="(\d+)" failures="2" errors="0" skipped="0">/)
    expect(xml).toContain('<testcase classname="price gate.pro_monthly" name="pro_monthly DE">\n      <failure type="changed" message="~ pro_monthly DE: 8.99 -&gt; 9 EUR (+0.11%)"/>')
    expect(xml.match(/<testcase /g)).toHaveLength(Number(/tests="(\d+)"/.exec(xml)![1]))
    // Not on GitHub Actions: no annotations.
    expect(runBin(db, ['price', 'preview', '--against', snap], {env: {GITHUB_ACTIONS: ''}}).stderr).not.toContain('::error')
    // A passing gate writes its report too, with no failure.
    expect((await run(db, ['price', 'preview', '--against', snap, '--update'])).code).toBe(0)
    expect((await run(db, ['price', 'preview', '--against', snap, '--junit', junit])).code).toBe(0)
    expect(readFileSync(junit, 'utf8')).toMatch(/failures="0"/)
    expect(readFileSync(junit, 'utf8')).not.toContain('<failure')
  })
})
