import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {createProducts} from '../helpers/catalog.js'
import {run, seededStore, tempStore} from '../helpers/run.js'

/**
 * Tax in prices through the commands (docs/tax.md): tax set/list/delete, the behaviour
 * settings, the quote's tax object and gateway tax_behavior, a locked price keeping the tax
 * it was shown with, price explain's tax step, and tax changes under change control.
 */

const PRODUCTS = [
  {api_id: 'pro', base_px: 9.99, country_prices: [{amount: 9.99, country: 'AT', currency: 'EUR'}], integrations: [{gateway_a_product_id: 'prod_pro', type: 'gateway_a'}], interval: 'month', interval_count: 1, name: 'Pro'},
  {api_id: 'book', base_px: 9.99, interval: 'one_time', interval_count: 1, name: 'Book'},
]

async function must(db: string, args: string[]): Promise<any> {
  const r = await run(db, [...args, '--json'])
  if (r.code !== 0) throw new Error(`${args.join(' ')} failed (${r.code}): ${r.stdout} ${r.stderr}`)
  return r.json
}

/** The products and hand-computable FX rates (units per USD), seeded once and copied; `setup` adds commands. */
async function taxStore(setup: string[][] = []): Promise<string> {
  const db = tempStore()
  await seededStore(db, `tax:${JSON.stringify(setup)}`, async (store) => {
    await createProducts(store, PRODUCTS)
    for (const [c, r] of Object.entries({EUR: '0.9', HUF: '360', INR: '90', JPY: '150'})) await must(store, ['fx', 'set', c, r, '--date', '2020-01-01'])
    for (const s of setup) await must(store, s)
  })
  return db
}

const INCLUSIVE = [['tax', 'behavior', 'inclusive', '--yes']]

async function quote(db: string, user: string, country: string, product = 'pro'): Promise<any> {
  const r = await must(db, ['price', '-u', user, '-p', product, '--country', country, '--integration', 'gateway_a'])
  return r.products[product]
}

/** net + tax = gross in the currency's minor units (the numbers are the spec's decimal form). */
function adds(t: {gross: number; net: number; tax: number}, digits: number): void {
  const m = (x: number) => Math.round(x * 10 ** digits)
  expect(m(t.net) + m(t.tax)).toBe(m(t.gross))
}

describe('tax set, list, delete', () => {
  it('lists the bundled rates; an operator rate outranks them, a future one is scheduled, delete brings the bundled one back', async () => {
    const db = await taxStore()
    const de = (await must(db, ['tax', 'list', '--country', 'DE'])).rates
    expect(de).toContainEqual(expect.objectContaining({category: 'standard', country: 'DE', kind: 'bundled', label: 'VAT', rate: 19, status: 'current'}))
    expect(de).toContainEqual(expect.objectContaining({category: 'ebook', country: 'DE', rate: 7}))
    for (const [c, rate] of [['HU', 27], ['JP', 10], ['IN', 18], ['US', 0]] as const) {
      expect((await must(db, ['tax', 'list', '--country', c])).rates[0]).toMatchObject({country: c, rate})
    }
    const set = await must(db, ['tax', 'set', 'de', '20', '--from', '2020-01-01'])
    expect(set).toMatchObject({rate: {country: 'DE', kind: 'operator', rate: 20, source: 'manual', status: 'current'}, scheduled: false})
    const later = await must(db, ['tax', 'set', 'DE', '21', '--from', '2999-01-01'])
    expect(later).toMatchObject({current: {rate: 20}, scheduled: true})
    const rows = (await must(db, ['tax', 'list', '--country', 'DE'])).rates.filter((r: any) => r.category === 'standard')
    expect(rows.map((r: any) => [r.rate, r.status])).toEqual([[20, 'current'], [21, 'scheduled']])
    expect((await must(db, ['tax', 'delete', 'DE'])).removed).toBe(2)
    expect((await must(db, ['tax', 'list', '--country', 'DE'])).rates[0]).toMatchObject({kind: 'bundled', rate: 19})
  })

  it('refuses bad input with exit 2 and writes nothing', async () => {
    const db = await taxStore()
    for (const args of [['tax', 'set', 'DE', '100'], ['tax', 'set', 'DE', '19.125'], ['tax', 'set', 'XX', '19'], ['tax', 'set', 'DE', 'abc'], ['tax', 'set', 'DE', '19', '--from', '2026-02-30'], ['tax', 'set', 'DE', '7', '--category', 'food']]) {
      const r = await run(db, [...args, '--json'])
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.success).toBe(false)
    }
    expect((await must(db, ['tax', 'list'])).rates.every((r: any) => r.kind === 'bundled' || r.rate === 0)).toBe(true)
    expect((await run(db, ['tax', 'delete', 'DE'])).code).toBe(1)
  })
})

describe('price with tax', () => {
  it('exclusive by default: the price is net as before, the tax object adds the VAT; gateway_a gets tax_behavior exclusive', async () => {
    const p = await quote(await taxStore(), 'u1', 'DE')
    expect(p.price).toBe(8.99)
    expect(p.tax).toEqual({behavior: 'exclusive', country: 'DE', display: 'zzgl. MwSt.', gross: 10.7, label: 'VAT', net: 8.99, rate: 19, tax: 1.71})
    expect(p.integrations.gateway_a).toMatchObject({amount: 899, currency: 'EUR', tax_behavior: 'exclusive'})
  })

  it('inclusive: the rounding rule rounds the gross, so the charm price is what the customer sees (DE 19%)', async () => {
    const db = await taxStore(INCLUSIVE)
    // 9.99 USD x 0.9 = 8.99 EUR net, x 1.19 = 10.70 gross, rounded by the default EUR rule to 10.99.
    const p = await quote(db, 'u1', 'DE')
    expect(p.price).toBe(10.99)
    expect(p.display.price).toContain('10,99')
    expect(p.tax).toEqual({behavior: 'inclusive', country: 'DE', display: 'inkl. MwSt.', gross: 10.99, label: 'VAT', net: 9.24, rate: 19, tax: 1.75})
    expect(p.integrations.gateway_a).toMatchObject({amount: 1099, tax_behavior: 'inclusive'})
    // A country price is the shown price: 9.99 EUR stays 9.99 EUR incl. 20% VAT in AT.
    const at = await quote(db, 'u2', 'AT')
    expect(at.price).toBe(9.99)
    expect(at.tax).toMatchObject({gross: 9.99, net: 8.32, rate: 20, tax: 1.67})
  })

  it('HU 27%, JP 10%, IN 18% inclusive: net + tax = gross in the minor units; a US store price stays exclusive', async () => {
    const db = await taxStore(INCLUSIVE)
    const hu = await quote(db, 'h', 'HU')
    expect(hu.tax).toMatchObject({behavior: 'inclusive', gross: hu.price, rate: 27})
    expect(hu.price % 100).toBe(0)
    adds(hu.tax, 2)
    const jp = await quote(db, 'j', 'JP')
    expect(jp.tax).toEqual({behavior: 'inclusive', country: 'JP', display: '税込', gross: 1600, label: 'consumption tax', net: 1455, rate: 10, tax: 145})
    const ind = await quote(db, 'i', 'IN')
    expect(ind.tax).toMatchObject({behavior: 'inclusive', gross: ind.price, label: 'GST', rate: 18})
    expect(ind.price % 10).toBe(9)
    adds(ind.tax, 2)
    const us = await quote(db, 'a', 'US')
    expect(us.price).toBe(9.99)
    expect(us.tax).toMatchObject({behavior: 'exclusive', display: '+ sales tax', gross: 9.99, net: 9.99, rate: 0, tax: 0})
    expect(us.integrations.gateway_a.tax_behavior).toBe('exclusive')
  })

  it('precedence: a country setting beats the store, a product setting beats the store; the ebook category takes the reduced rate', async () => {
    const db = await taxStore([...INCLUSIVE, ['tax', 'behavior', 'exclusive', '--country', 'FR'], ['tax', 'behavior', '--product', 'book', '--category', 'ebook'], ['tax', 'behavior', 'exclusive', '--product', 'book']])
    expect((await quote(db, 'f', 'FR')).tax).toMatchObject({behavior: 'exclusive', display: 'HT', rate: 20})
    expect((await quote(db, 'd', 'DE', 'book')).tax).toMatchObject({behavior: 'exclusive', rate: 7})
    expect((await quote(db, 'd2', 'DE')).tax).toMatchObject({behavior: 'inclusive', rate: 19})
  })

  it('a locked price keeps the tax it was shown with after a rate change; a new user gets the new rate', async () => {
    const db = await taxStore(INCLUSIVE)
    const before = await quote(db, 'alice', 'DE')
    await must(db, ['tax', 'set', 'DE', '20', '--from', '2020-01-01'])
    const locked = await quote(db, 'alice', 'DE')
    expect(locked.price).toBe(before.price)
    expect(locked.tax).toEqual(before.tax)
    const fresh = await quote(db, 'bob', 'DE')
    expect(fresh.tax).toMatchObject({gross: 10.99, net: 9.16, rate: 20, tax: 1.83})
  })

  it('products localize writes the price a new user is shown: under inclusive the gross of the localized net, rounded', async () => {
    const db = await taxStore(INCLUSIVE)
    await must(db, ['localization', 'set', 'IT', '0.8', '--yes'])
    const quoted = await quote(db, 'it1', 'IT')
    const r = await must(db, ['products', 'localize', 'pro', '--country', 'IT', '--yes'])
    // 9.99 USD x 0.9 x 0.8 = 7.19 EUR net, x 1.22 = 8.77 gross, rounded to 8.99 incl. VAT.
    expect(r.changes).toEqual([expect.objectContaining({after: 8.99, country: 'IT', currency: 'EUR'})])
    expect(quoted.price).toBe(8.99)
    expect((await quote(db, 'it2', 'IT')).tax).toMatchObject({gross: 8.99, rate: 22})
  })

  it('price explain shows the tax step', async () => {
    const db = await taxStore(INCLUSIVE)
    const r = await must(db, ['price', 'explain', '-u', 'x', '-p', 'pro', '--country', 'DE'])
    const step = r.steps.find((s: any) => s.step === 'tax pro')
    expect(step.detail).toMatch(/^DE VAT 19% \(bundled.*\), inclusive \(the store setting\): 10\.99 EUR shown incl\. VAT = 9\.24 net \+ 1\.75 VAT$/)
    expect(r.steps.some((s: any) => s.step === 'price pro' && /8\.99 net, x 1\.19 \(19% tax, inclusive\) = 10\.7 gross, rounded/.test(s.detail))).toBe(true)
    const at = await must(db, ['price', 'explain', '-u', 'y', '-p', 'pro', '--country', 'AT'])
    expect(at.steps.some((s: any) => s.step === 'price pro' && /country price 9\.99 EUR for AT .*the shown price, tax included/.test(s.detail))).toBe(true)
    // A reused lock explains the tax it was shown, and today's rate beside it.
    await must(db, ['price', '-u', 'z', '-p', 'pro', '--country', 'DE'])
    await must(db, ['tax', 'set', 'DE', '20', '--from', '2020-01-01'])
    const locked = await must(db, ['price', 'explain', '-u', 'z', '-p', 'pro'])
    expect(locked.steps.find((s: any) => s.step === 'tax pro').detail).toMatch(/^DE VAT 19% as locked \(today 20%\), inclusive/)
  })
})

describe('price preview and the gate', () => {
  it('--columns shows net, tax and gross; the JSON rows carry the split of the shown price', async () => {
    const db = await taxStore(INCLUSIVE)
    const r = await run(db, ['price', 'preview', '-p', 'pro', '--country', 'DE,US', '--output', 'csv', '--columns', 'country,currency,price,net,tax,gross,tax_rate,tax_behavior'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual(['country,currency,price,net,tax,gross,tax_rate,tax_behavior', 'DE,EUR,10.99,9.24,1.75,10.99,19,inclusive', 'US,USD,9.99,9.99,0,9.99,0,exclusive'])
    const j = await must(db, ['price', 'preview', '-p', 'pro', '--country', 'DE'])
    expect(j.rows[0]).toMatchObject({price: 10.99, tax: {behavior: 'inclusive', gross: 10.99, net: 9.24, rate: 19, tax: 1.75}})
    expect((await run(db, ['price', 'preview', '--columns', 'country,vat'])).code).toBe(2)
  })

  it('the gate compares the shown price: a rate change that keeps the inclusive price passes, one that moves it fails', async () => {
    const db = await taxStore(INCLUSIVE)
    const snap = join(dirname(db), 'prices.json')
    const made = await run(db, ['price', 'preview', '-p', 'pro', '--country', 'DE,HU', '--output', 'json'])
    writeFileSync(snap, made.stdout)
    // DE 25%: 8.99 net x 1.25 = 11.24, still rounded to 10.99 shown: the customer sees no change.
    await must(db, ['tax', 'set', 'DE', '25', '--from', '2020-01-01', '--yes'])
    expect((await run(db, ['price', 'preview', '-p', 'pro', '--country', 'DE,HU', '--against', snap])).code).toBe(0)
    await must(db, ['tax', 'set', 'HU', '5', '--from', '2020-01-01', '--yes'])
    const gate = await run(db, ['price', 'preview', '-p', 'pro', '--country', 'DE,HU', '--against', snap, '--json'])
    expect(gate.code).toBe(1)
    expect(gate.json.comparison.changes).toEqual([expect.objectContaining({change: 'changed', country: 'HU', product: 'pro'})])
  })
})

describe('change control', () => {
  it('a behaviour change shows its price impact, is in the history and reverts', async () => {
    const db = await taxStore()
    const r = await must(db, ['tax', 'behavior', 'inclusive', '--yes'])
    expect(r.impact.changed).toBeGreaterThan(0)
    // Countries of one currency differ by their rates once prices include tax: each is measured.
    expect(r.impact.changes).toContainEqual(expect.objectContaining({after: expect.objectContaining({price: 10.99}), before: expect.objectContaining({price: 8.99}), country: 'DE', product: 'pro'}))
    expect(r.impact.changes).toContainEqual(expect.objectContaining({after: expect.objectContaining({price: 10.99}), country: 'FI', product: 'pro'}))
    expect(r.impact.changes).toContainEqual(expect.objectContaining({after: expect.objectContaining({price: 10.99}), before: expect.objectContaining({price: 8.99}), country: 'AT', product: 'book'}))
    const [change] = (await must(db, ['history', '--limit', '1'])).changes
    expect(change.rows).toEqual([{action: 'inserted', count: 1, table: 'tax_settings'}])
    await must(db, ['revert', String(change.id), '--yes'])
    expect((await must(db, ['tax', 'behavior'])).store_behavior).toBe('exclusive')
    expect((await quote(db, 'n', 'DE')).price).toBe(8.99)
  })

  it('a rate change moves inclusive prices through the impact report (dry run writes nothing), and reverts', async () => {
    const db = await taxStore(INCLUSIVE)
    const dry = await must(db, ['tax', 'set', 'HU', '5', '--from', '2020-01-01', '--dry-run'])
    expect(dry.dry_run).toBe(true)
    expect(dry.impact.changes.some((c: any) => c.country === 'HU')).toBe(true)
    expect((await must(db, ['tax', 'list', '--country', 'HU'])).rates[0].rate).toBe(27)
    await must(db, ['tax', 'set', 'HU', '5', '--from', '2020-01-01', '--yes'])
    const [change] = (await must(db, ['history', '--limit', '1'])).changes
    expect(change.rows).toEqual([{action: 'inserted', count: 1, table: 'tax_rates'}])
    await must(db, ['revert', String(change.id), '--yes'])
    expect((await must(db, ['tax', 'list', '--country', 'HU'])).rates[0]).toMatchObject({kind: 'bundled', rate: 27})
  })
})
