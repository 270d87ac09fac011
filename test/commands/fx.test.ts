import {strToU8, zipSync} from 'fflate'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {defaultFxSnapshot} from '../../src/fx/snapshot.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {fileDigest} from '../helpers/dump.js'
import {run, seededStore, tempStore} from '../helpers/run.js'
import {at, steps} from '../helpers/segments-fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-fx-cmd-'))
function fixture(name: string, content: string | Uint8Array): string {
  const p = join(dir, name)
  writeFileSync(p, content)
  return p
}

const ECB_LATEST = `Date, USD, JPY, GBP, KRW, \n13 April 2026, 1.1684, 186.75, 0.87058, 1740.86, \n`
const ECB_HIST = 'Date,USD,JPY,CYP,GBP,\n2026-04-13,1.1684,186.75,N/A,0.87058,\n2026-04-10,1.1711,186.43,N/A,0.87105,\n1999-01-04,1.1789,133.73,0.58231,0.7111,\n'

/** A store made by `db init` (migrated, the default snapshot seeded): once per worker, copied after that. */
async function freshStore(): Promise<string> {
  const db = tempStore()
  await seededStore(db, 'fx:fresh', async (store) => {
    expect((await run(store, ['db', 'init'])).code).toBe(0)
  })
  return db
}

describe('fx list', () => {
  it('a fresh store has the dated default snapshot, ISO 4217 codes only', async () => {
    const r = await run(await freshStore(), ['fx', 'list', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.success).toBe(true)
    const eur = r.json.rates.find((x: {currency: string}) => x.currency === 'EUR')
    expect(eur).toEqual({
      currency: 'EUR',
      date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      kind: 'snapshot',
      rate: expect.any(Number),
      source: expect.stringContaining('default snapshot'),
      status: 'current',
    })
    expect(r.json.rates.find((x: {currency: string}) => x.currency === 'USD').rate).toBe(1)
    expect(r.json.rates.every((x: {currency: string}) => /^[A-Z]{3}$/.test(x.currency))).toBe(true)
    expect(r.json.rates.some((x: {currency: string}) => x.currency === 'BTC')).toBe(false)
  })

  it('a table for people, csv on request', async () => {
    const db = await freshStore()
    const t = await run(db, ['fx', 'list', '--currency', 'eur'])
    expect(t.stdout).toMatch(/currency.*rate.*date.*source/)
    expect(t.stdout).toContain('EUR')
    await run(db, ['fx', 'import', fixture('hist1.csv', ECB_HIST)])
    const c = await run(db, ['fx', 'list', '--currency', 'JPY', '--history', '--output', 'csv'])
    const lines = c.stdout.trim().split('\n')
    expect(lines[0]).toBe('currency,rate,date,source,kind,status')
    expect(lines.slice(-3).map((l) => l.split(',')[2])).toEqual(['2026-04-13', '2026-04-10', '1999-01-04'])
  })

  it('as of a date: the nearest earlier rate, as conversion uses it', async () => {
    const db = await freshStore()
    await run(db, ['fx', 'import', fixture('hist2.csv', ECB_HIST)])
    const r = await run(db, ['fx', 'list', '--currency', 'GBP', '--date', '2026-04-12', '--json'])
    // status is about today: the file's 2026-04-13 rate prices now, this one is past.
    expect(r.json.rates).toEqual([{currency: 'GBP', date: '2026-04-10', kind: 'import', rate: 0.87105 / 1.1711, source: 'ECB eurofxref (hist2.csv)', status: 'past'}])
  })

  it('bad filters exit 2; a currency without a rate exits 1 and says how to add one', async () => {
    const db = await freshStore()
    const unknown = await run(db, ['fx', 'list', '--currency', 'XYZ', '--json'])
    expect(unknown.code).toBe(2)
    expect(unknown.json).toEqual({message: expect.stringContaining('unknown currency "XYZ"'), success: false})
    const badDate = await run(db, ['fx', 'list', '--date', '2026-02-30', '--json'])
    expect(badDate.code).toBe(2)
    expect(badDate.json.message).toContain('"2026-02-30"')
    const none = await run(db, ['fx', 'list', '--currency', 'XSU', '--json'])
    expect(none.code).toBe(1)
    expect(none.json.message).toContain('pricectl fx set XSU RATE')
  })
})

describe('fx import', () => {
  it('ECB latest: summary on stdout, rates per 1 USD in the store', async () => {
    const db = await freshStore()
    const r = await run(db, ['fx', 'import', fixture('eurofxref.csv', ECB_LATEST), '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      currencies: 4,
      dates: {count: 1, from: '2026-04-13', to: '2026-04-13'},
      dry_run: false,
      format: 'ecb',
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: expect.stringContaining('wrote 4 rates'),
      newer_on_file: [], // the default snapshot is dated later, but an import outranks it
      rates_unchanged: 0,
      rates_written: 4,
      rows_read: 1,
      scheduled: 0,
      skipped: {codes: [], values: 0},
      source: 'ECB eurofxref (eurofxref.csv)',
      success: true,
    })
    expect(r.stderr).toBe('') // notes are silent under --json
    const jpy = await run(db, ['fx', 'list', '--currency', 'JPY', '--date', '2026-04-13', '--json'])
    expect(jpy.json.rates[0].rate).toBeCloseTo(186.75 / 1.1684, 10)
    const eur = await run(db, ['fx', 'list', '--currency', 'EUR', '--date', '2026-04-13', '--json'])
    expect(eur.json.rates[0].rate).toBeCloseTo(1 / 1.1684, 12)
  })

  it('the zipped history, retired codes skipped with a count on stderr; importing twice changes nothing', async () => {
    const db = await freshStore()
    const zip = fixture('eurofxref-hist.zip', zipSync({'eurofxref-hist.csv': strToU8(ECB_HIST)}))
    const r = await run(db, ['fx', 'import', zip])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('wrote 9 rates (0 unchanged) for 3 currencies, 3 dates 1999-01-04..2026-04-13, from 3 rows read (ecb)')
    expect(r.stderr).toContain('skipped 1 code that is not ISO 4217 (1 value): CYP')
    const again = await run(db, ['fx', 'import', zip, '--json'])
    expect(again.json).toMatchObject({rates_unchanged: 9, rates_written: 0})
  })

  it('a currency,rate CSV with --date; a dry run writes nothing', async () => {
    const db = await freshStore()
    const file = fixture('rates.csv', 'currency,rate\nEUR,0.9\nchf,0.8\n')
    const before = fileDigest(db)
    const dry = await run(db, ['fx', 'import', file, '--date', '2030-01-01', '--dry-run', '--json'])
    expect(dry.json).toMatchObject({dry_run: true, format: 'csv', rates_written: 2})
    expect(fileDigest(db)).toBe(before)
    const r = await run(db, ['fx', 'import', file, '--date', '2030-01-01', '--source', 'treasury', '--json'])
    expect(r.json).toMatchObject({dates: {count: 1, from: '2030-01-01'}, rates_written: 2, source: 'treasury'})
    // Dated after today: listed as scheduled after the rate that prices CHF now.
    const chf = await run(db, ['fx', 'list', '--currency', 'CHF', '--json'])
    expect(chf.json.rates).toEqual([
      expect.objectContaining({currency: 'CHF', kind: 'snapshot', status: 'current'}),
      {currency: 'CHF', date: '2030-01-01', kind: 'manual', rate: 0.8, source: 'treasury', status: 'scheduled'},
    ])
  })

  it('JSON in the npm package layout', async () => {
    const db = await freshStore()
    const file = fixture('usd.json', JSON.stringify({date: '2031-02-03', usd: {btc: 0.00001, eur: 0.95, usd: 1}}))
    const r = await run(db, ['fx', 'import', file, '--json'])
    expect(r.json).toMatchObject({format: 'json', rates_written: 1, rows_read: 3, skipped: {codes: ['BTC'], values: 1}})
  })

  it('an unknown currency exits 2 naming code and line, and leaves the store unchanged', async () => {
    const db = await freshStore()
    const before = fileDigest(db)
    const r = await run(db, ['fx', 'import', fixture('bad.csv', 'EUR,0.9,2030-01-01\nABC,1.5,2030-01-01\nGBP,0.7,2030-01-01\n'), '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: expect.stringContaining('line 2: unknown currency "ABC"'), success: false})
    expect(fileDigest(db)).toBe(before)
  })

  it('input errors exit 2: missing file, unknown layout, bad --format', async () => {
    const db = await freshStore()
    const before = fileDigest(db)
    const missing = await run(db, ['fx', 'import', join(dir, 'nope.csv'), '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toBe(`cannot read ${join(dir, 'nope.csv')}: no such file`)
    const odd = await run(db, ['fx', 'import', fixture('odd.txt', 'hello\n')])
    expect(odd.code).toBe(2)
    expect(odd.stderr).toContain('--format ecb|csv|json')
    const fmt = await run(db, ['fx', 'import', fixture('x.csv', 'EUR,1\n'), '--format', 'xml'])
    expect(fmt.code).toBe(2)
    expect(fileDigest(db)).toBe(before)
  })
})

describe('fx set', () => {
  it('from arguments and flags, or a --body; flags override the body', async () => {
    const db = await freshStore()
    const r = await run(db, ['fx', 'set', 'eur', '0.91', '--date', '2031-01-01', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      current: expect.objectContaining({currency: 'EUR', source: expect.stringContaining('default snapshot')}),
      dry_run: false,
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: 'EUR = 0.91 per 1 USD from 2031-01-01 (manual), scheduled: not used before that day',
      rate: {currency: 'EUR', date: '2031-01-01', rate: 0.91, source: 'manual'},
      replaced: null,
      scheduled: true,
      success: true,
    })
    const body = fixture('set.json', JSON.stringify({currency: 'GBP', date: '2031-01-01', rate: 0.7, source: 'bank'}))
    const b = await run(db, ['fx', 'set', '--body', body, '--source', 'desk', '--json'])
    expect(b.json.rate).toEqual({currency: 'GBP', date: '2031-01-01', rate: 0.7, source: 'desk'})
    const list = await run(db, ['fx', 'list', '--currency', 'GBP', '--json'])
    expect(list.json.rates[1]).toEqual({currency: 'GBP', date: '2031-01-01', kind: 'manual', rate: 0.7, source: 'desk', status: 'scheduled'})
  })

  it('the date defaults to today (PRICECTL_NOW honoured)', async () => {
    const db = await freshStore()
    process.env.PRICECTL_NOW = '2032-07-08T10:00:00Z'
    try {
      const r = await run(db, ['fx', 'set', 'JPY', '140', '--json'])
      expect(r.json.rate.date).toBe('2032-07-08')
    } finally {
      delete process.env.PRICECTL_NOW
    }
  })

  it.each([
    [['fx', 'set', 'EUR', 'abc'], 'RATE: expected a number of units per 1 USD, got "abc"'],
    [['fx', 'set', 'EUR', '-1'], 'rate: must be greater than 0, got -1'],
    [['fx', 'set', 'EUR', '0'], 'rate: must be greater than 0, got 0'],
    [['fx', 'set', 'EURO', '1'], 'currency: unknown currency "EURO"'],
    [['fx', 'set', 'USD', '2'], 'USD is the base of every rate, so its rate is always 1'],
    [['fx', 'set', 'EUR', '0.9', '--date', '31/01/2031'], 'date: expected a date YYYY-MM-DD, got "31/01/2031"'],
    [['fx', 'set'], 'missing required flags: CURRENCY, RATE'],
  ])('%j exits 2 and writes nothing', async (args, message) => {
    const db = await freshStore()
    const before = fileDigest(db)
    const r = await run(db, [...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain(message)
    expect(fileDigest(db)).toBe(before)
  })
})

/**
 * Issue 12, item 4: FX sources the operator controls. Each reproduction runs with "today"
 * pinned after the bundled snapshot's date (2026-09-29).
 */
describe('FX sources the operator controls', () => {
  const NOW = '2026-11-01T12:00:00Z'
  const price = (db: string, args: string[], now = NOW) => at(now, () => run(db, ['price', ...args, '--json']))
  const explain = (db: string, args: string[], now = NOW) => at(now, () => run(db, ['price', 'explain', ...args, '--json']))

  async function catalogStore(): Promise<string> {
    const db = tempStore()
    await createProducts(db, CATALOG)
    return db
  }

  it('fx set EUR 2 --date 2031-01-01 warns and leaves today\'s EUR price alone; imports still reach pricing', async () => {
    const db = await catalogStore()
    const before = await price(db, ['-u', 'u1', '-p', 'pro_yearly', '--country', 'DE'])
    const set = await at(NOW, () => run(db, ['fx', 'set', 'EUR', '2', '--date', '2031-01-01']))
    expect(set.code).toBe(0)
    const after = await price(db, ['-u', 'u2', '-p', 'pro_yearly', '--country', 'DE'])
    expect(after.json.products.pro_yearly.price).toBe(before.json.products.pro_yearly.price)
    expect(set.stdout).toContain('EUR = 2 per 1 USD from 2031-01-01 (manual), scheduled: not used before that day')
    expect(set.stderr).toMatch(/warning: 2031-01-01 is after today \(2026-11-01\): this rate is kept but not used before that day; until then EUR is priced at [\d.]+ dated 2026-09-29 \(default snapshot/)
    const list = await at(NOW, () => run(db, ['fx', 'list', '--currency', 'EUR', '--json']))
    expect(list.json.rates.map((r: {date: string; status: string}) => `${r.date} ${r.status}`)).toEqual(['2026-09-29 current', '2031-01-01 scheduled'])
    // An import dated today is used: the scheduled rate no longer freezes EUR.
    // EUR halves (-42%): beyond --max-change-pct without a terminal, so --yes.
    const imported = await at(NOW, () => run(db, ['fx', 'import', fixture('today.csv', 'EUR,0.5,2026-11-01\n'), '--yes']))
    expect(imported.code).toBe(0)
    const now = await price(db, ['-u', 'u3', '-p', 'pro_yearly', '--country', 'DE'])
    expect(now.json.products.pro_yearly.price).toBe(49.99) // 99 USD x 0.5, EUR rounding rule
    // From its date on, the scheduled rate prices.
    const later = await price(db, ['-u', 'u4', '-p', 'pro_yearly', '--country', 'DE'], '2031-01-02T00:00:00Z')
    expect(later.json.products.pro_yearly.price).toBe(199.99) // 99 USD x 2
  })

  it('ECB rates dated before the bundled snapshot are used over it, and explain says so', async () => {
    const db = await catalogStore()
    const r = await at(NOW, () => run(db, ['fx', 'import', fixture('ecb-old.csv', ECB_LATEST), '--json']))
    const p = await price(db, ['-u', 'u1', '-p', 'pro_yearly', '--country', 'DE'])
    expect(p.json.products.pro_yearly.price).toBe(84.99) // 99 / 1.1684 = 84.73, EUR rounding rule
    expect(r.json).toMatchObject({dates: {from: '2026-04-13'}, newer_on_file: [], scheduled: 0})
    const e = await explain(db, ['-u', 'u2', '-p', 'pro_yearly', '--country', 'DE'])
    const s = steps(e)
    expect(s).toContain(`fx EUR | chose | ${1 / 1.1684} EUR/USD dated 2026-04-13 from "ECB eurofxref (ecb-old.csv)" (operator import); outranks the bundled snapshot's`)
    expect(s).toContain(`price pro_yearly | applied | base 99 USD x ${1 / 1.1684} EUR/USD (2026-04-13, ECB eurofxref (ecb-old.csv))`)
  })

  it('explain names the rate, date and source of every conversion: country price, gateway fallback, the snapshot', async () => {
    const db = await catalogStore()
    await at(NOW, () => run(db, ['fx', 'set', 'GBP', '0.8', '--date', '2026-01-01']))
    expect((await run(db, ['gateways', 'set', 'gateway_c', '--accept', 'USD,EUR'])).code).toBe(0)
    // The DE country price (EUR) converted to the requested GBP; gateway_c charges GBP prices in USD.
    const e = await explain(db, ['-u', 'u1', '-p', 'pro_monthly', '--country', 'DE', '--currency', 'GBP', '--integration', 'gateway_c'])
    const s = steps(e)
    expect(s).toMatch(/fx EUR \| chose \| [\d.]+ EUR\/USD dated 2026-09-29 from "default snapshot \(@fawazahmed0\/currency-api [^"]+\)" \(bundled snapshot\)/)
    expect(s).toContain('fx GBP | chose | 0.8 GBP/USD dated 2026-01-01 from "manual" (operator rate); outranks the bundled snapshot\'s')
    expect(s).toMatch(/price pro_monthly \| applied \| country price 8\.99 EUR for DE, converted to GBP as requested at [\d.]+ EUR\/USD \(2026-09-29, default snapshot [^)]+\)\) and 0\.8 GBP\/USD \(2026-01-01, manual\)/)
    expect(s).toMatch(/price pro_monthly \| applied \| gateway_c does not accept GBP: [\d.]+ GBP is charged as .+ \(USD\), converted at 0\.8 GBP\/USD \(2026-01-01, manual\)/)
  })

  it('fx delete removes a rate of yours and says what; the price goes back to the snapshot', async () => {
    const db = await catalogStore()
    // A move beyond --max-change-pct: --yes without a terminal.
    await at(NOW, () => run(db, ['fx', 'set', 'EUR', '0.5', '--date', '2026-10-01', '--yes']))
    expect((await price(db, ['-u', 'u1', '-p', 'pro_yearly', '--country', 'DE'])).json.products.pro_yearly.price).toBe(49.99)
    const refused = await at(NOW, () => run(db, ['fx', 'delete', 'EUR', '--date', '2026-10-01']))
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('refusing to delete the EUR rate of 2026-10-01 without --yes')
    const r = await at(NOW, () => run(db, ['fx', 'delete', 'eur', '--date', '2026-10-01', '--yes']))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('removed 1 rate of EUR, dated 2026-10-01, from manual\n')
    expect((await price(db, ['-u', 'u2', '-p', 'pro_yearly', '--country', 'DE'])).json.products.pro_yearly.price).not.toBe(49.99)
    const again = await at(NOW, () => run(db, ['fx', 'delete', 'EUR', '--yes', '--json']))
    expect(again.code).toBe(1)
    expect(again.json.message).toContain('no rate of yours for EUR: EUR only has the bundled snapshot\'s')
    const usd = await run(db, ['fx', 'delete', 'USD', '--yes', '--json'])
    expect(usd.code).toBe(2)
    expect(usd.json.message).toContain('USD is the base of every rate')
  })

  it('fx prune by source says what it removed and what came back; --dry-run writes nothing', async () => {
    const db = await catalogStore()
    await at(NOW, () => run(db, ['fx', 'import', fixture('ecb-prune.csv', ECB_HIST)]))
    const before = fileDigest(db)
    const dry = await at(NOW, () => run(db, ['fx', 'prune', '--source', 'import', '--dry-run', '--json']))
    expect(dry.json).toMatchObject({dry_run: true, removed: 9})
    expect(fileDigest(db)).toBe(before)
    const r = await at(NOW, () => run(db, ['fx', 'prune', '--source', 'import', '--yes']))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('removed 9 rates of 3 currencies, dated 1999-01-04..2026-04-13, from ECB eurofxref (ecb-prune.csv)\n')
    const json = await at(NOW, () => run(db, ['fx', 'list', '--currency', 'JPY', '--history', '--json']))
    expect(json.json.rates.map((x: {kind: string}) => x.kind)).toEqual(['snapshot'])
  })

  it('fx prune refuses to leave a currency in use without a rate (exit 1, nothing written); bad flags exit 2', async () => {
    const db = await catalogStore()
    const before = fileDigest(db)
    const r = await at(NOW, () => run(db, ['fx', 'prune', '--source', 'snapshot', '--yes', '--json']))
    expect(r.code).toBe(1)
    expect(r.json.message).toMatch(/refusing to remove \d+ rates: EUR \(country prices\), JPY \(country prices\), KWD \(country prices\) would have no FX rate usable today/)
    expect(fileDigest(db)).toBe(before)
    const forced = await at(NOW, () => run(db, ['fx', 'prune', '--source', 'snapshot', '--currency', 'KWD', '--force', '--yes']))
    expect(forced.code).toBe(0)
    expect(forced.stderr).toContain('warning: KWD is used by country prices and has no FX rate usable today')
    const none = await run(db, ['fx', 'prune', '--yes', '--json'])
    expect(none.code).toBe(2)
    expect(none.json.message).toContain('fx prune needs --source or --before')
    const bad = await run(db, ['fx', 'prune', '--before', '2026-13-01', '--yes', '--json'])
    expect(bad.code).toBe(2)
  })

  it('a rate of yours on the snapshot\'s day replaces its row; deleting it brings the snapshot\'s back', async () => {
    const db = await freshStore()
    const snap = defaultFxSnapshot()
    const set = await at(NOW, () => run(db, ['fx', 'set', 'EUR', '0.5', '--date', snap.date]))
    expect(set.stderr).toContain(`replaced ${snap.rates.EUR} (${snap.source}) of ${snap.date}; deleting this rate ("pricectl fx delete EUR --date ${snap.date}") brings the bundled snapshot's back`)
    const del = await at(NOW, () => run(db, ['fx', 'delete', 'EUR', '--date', snap.date, '--yes', '--json']))
    expect(del.json).toMatchObject({removed: 1, restored: [{currency: 'EUR', date: snap.date, rate: snap.rates.EUR, source: snap.source}]})
    const list = await at(NOW, () => run(db, ['fx', 'list', '--currency', 'EUR', '--json']))
    expect(list.json.rates).toEqual([{currency: 'EUR', date: snap.date, kind: 'snapshot', rate: snap.rates.EUR, source: snap.source, status: 'current'}])
  })

  it('fx set and fx import refuse the snapshot\'s label', async () => {
    const db = await freshStore()
    const before = fileDigest(db)
    const set = await run(db, ['fx', 'set', 'EUR', '0.9', '--source', 'default snapshot (mine)', '--json'])
    expect(set.code).toBe(2)
    expect(set.json.message).toContain('"default snapshot" labels the bundled snapshot')
    const imp = await run(db, ['fx', 'import', fixture('label.csv', 'EUR,0.9\n'), '--source', 'Default Snapshot', '--json'])
    expect(imp.code).toBe(2)
    expect(fileDigest(db)).toBe(before)
  })
})
