import Database from 'better-sqlite3'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {run, tempStore} from '../helpers/run.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-loc-cmd-'))
function fixture(name: string, content: string): string {
  const p = join(dir, name)
  writeFileSync(p, content)
  return p
}

function dump(db: string): string {
  const d = new Database(db, {readonly: true})
  try {
    const tables = d.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {name: string}[]
    return JSON.stringify(tables.map(({name}) => [name, d.prepare(`SELECT * FROM "${name}"`).all()]))
  } finally {
    d.close()
  }
}

const IND = 'Price level ratio of PPP conversion factor (GDP) to market exchange rate'
/** World Bank wide layout, as API_PA.NUS.PPPC.RF_DS2_en_csv_v2_*.csv ships it. */
const WIDE =
  '\uFEFF"Data Source","World Development Indicators",\r\n\r\n"Last Updated Date","2025-10-07",\r\n\r\n' +
  '"Country Name","Country Code","Indicator Name","Indicator Code","2022","2023","2024",\r\n' +
  `"India","IND","${IND}","PA.NUS.PPPC.RF","0.23","0.24","0.25",\r\n` +
  `"World","WLD","${IND}","PA.NUS.PPPC.RF","0.6","0.6","0.6",\r\n` +
  `"Euro area","EMU","${IND}","PA.NUS.PPPC.RF","0.8","0.8","0.8",\r\n` +
  `"Switzerland","CHE","${IND}","PA.NUS.PPPC.RF","1.4","1.45","",\r\n` +
  `"Gibraltar","GIB","${IND}","PA.NUS.PPPC.RF","","","",\r\n`

async function store(): Promise<string> {
  const db = tempStore()
  expect((await run(db, ['db', 'init'])).code).toBe(0)
  return db
}

describe('localization import', () => {
  it('World Bank wide layout: latest year per country, aggregates skipped and counted', async () => {
    const db = await store()
    const r = await run(db, ['localization', 'import', fixture('API_PA.NUS.PPPC.RF.csv', WIDE), '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      dry_run: false,
      factors_unchanged: 0,
      factors_written: 2,
      format: 'wide',
      fx: {latest: 0, year_average: 0},
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: expect.stringContaining('wrote 2 factors'),
      removed: 0,
      rows_read: 5,
      skipped: {aggregates: ['WLD', 'EMU'], implausible: [], no_fx_rate: [], no_value: ['GI']},
      source: 'World Bank PA.NUS.PPPC.RF (API_PA.NUS.PPPC.RF.csv)',
      success: true,
      years: {from: 2023, to: 2024},
    })
    const list = await run(db, ['localization', 'list', '--json'])
    expect(list.json).toEqual({
      factors: [
        {country: 'CH', factor: 1.45, source: 'World Bank PA.NUS.PPPC.RF (API_PA.NUS.PPPC.RF.csv)', year: 2023},
        {country: 'IN', factor: 0.25, source: 'World Bank PA.NUS.PPPC.RF (API_PA.NUS.PPPC.RF.csv)', year: 2024},
      ],
      message: '2 localization factors',
      success: true,
    })
  })

  it('long layout: PPP / FX from the store, with notes on stderr', async () => {
    const db = await store()
    await run(db, ['fx', 'set', 'INR', '80', '--date', '2024-05-01'])
    const r = await run(db, ['localization', 'import', fixture('ppp.csv', 'Country,Country ID,Year,PPP\nIndia,IN,2024,20\nWorld,1W,2024,1\nVenezuela,VE,2024,9999999\n')])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('wrote 1 factor (0 unchanged)')
    expect(r.stdout).toContain('1 aggregate,')
    expect(r.stderr).toContain('implausible factors (outside 0.05..10, often a PPP in a redenominated currency) skipped: VE')
    const inr = await run(db, ['localization', 'list', '--country', 'in', '--json'])
    expect(inr.json.factors).toEqual([{country: 'IN', factor: 0.25, source: 'World Bank PPP / FX (ppp.csv)', year: 2024}])
  })

  it('plain csv; --replace removes countries the file does not give; --dry-run writes nothing', async () => {
    const db = await store()
    await run(db, ['localization', 'import', fixture('a.csv', 'country,factor\nIN,0.3\nBR,0.5\n')])
    const before = dump(db)
    const dry = await run(db, ['localization', 'import', fixture('b.csv', 'country,factor\nIN,0.3\nMX,0.55\n'), '--replace', '--dry-run', '--json'])
    expect(dry.json).toMatchObject({dry_run: true, factors_unchanged: 0, factors_written: 2, removed: 1}) // source differs: b.csv
    expect(dump(db)).toBe(before)
    const r = await run(db, ['localization', 'import', fixture('b.csv', 'country,factor\nIN,0.3\nMX,0.55\n'), '--replace', '--json'])
    expect(r.json).toMatchObject({factors_written: 2, removed: 1})
    const list = await run(db, ['localization', 'list', '--json'])
    expect(list.json.factors.map((f: {country: string}) => f.country)).toEqual(['IN', 'MX'])
  })

  it('a bad row exits 2 naming the line and value, and writes nothing', async () => {
    const db = await store()
    await run(db, ['localization', 'set', 'IN', '0.3'])
    const before = dump(db)
    const r = await run(db, ['localization', 'import', fixture('bad.csv', 'country,factor\nDE,0.9\nXX,0.5\nFR,85\n'), '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain('line 3: unknown country "XX"')
    expect(r.json.message).toContain('line 4: FR factor "85": must be between 0.05 and 10')
    expect(dump(db)).toBe(before)
  })
})

describe('localization list, set, clear', () => {
  it('an empty store says how to add factors; a missing country exits 1', async () => {
    const db = await store()
    const r = await run(db, ['localization', 'list'])
    expect(r.stdout).toContain('no localization factors')
    const one = await run(db, ['localization', 'list', '--country', 'IN', '--json'])
    expect(one.code).toBe(1)
    expect(one.json.message).toContain('pricectl localization set IN FACTOR')
    const bad = await run(db, ['localization', 'list', '--country', 'IND', '--json'])
    expect(bad.code).toBe(2)
  })

  it('set from arguments or --body, shown as a table', async () => {
    const db = await store()
    const r = await run(db, ['localization', 'set', 'ch', '1.4', '--year', '2024', '--json'])
    expect(r.json).toEqual({dry_run: false, factor: {country: 'CH', factor: 1.4, source: 'manual', year: 2024}, impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'}, message: 'CH: localization factor 1.4 for 2024 (source: manual)', success: true})
    const body = fixture('f.json', JSON.stringify({country: 'BR', factor: 0.5, source: 'survey'}))
    expect((await run(db, ['localization', 'set', '--body', body, '--json'])).json.factor).toEqual({country: 'BR', factor: 0.5, source: 'survey', year: null})
    const t = await run(db, ['localization', 'list'])
    expect(t.stdout).toMatch(/country.*factor.*year.*source/)
    expect(t.stdout).toMatch(/CH .*1\.4 .*2024 .*manual/)
  })

  it.each([
    [['localization', 'set', 'IN', 'abc'], 'FACTOR: expected a number such as 0.85, got "abc"'],
    [['localization', 'set', 'IN', '35'], 'factor: must be between 0.05 and 10'],
    [['localization', 'set', 'IND', '0.3'], 'country: unknown country "IND"'],
    [['localization', 'set', 'IN', '0.3', '--year', '99'], 'year: expected a year such as 2024, got 99'],
    [['localization', 'set'], 'missing required flags: COUNTRY, FACTOR'],
  ])('%j exits 2 and writes nothing', async (args, message) => {
    const db = await store()
    const before = dump(db)
    const r = await run(db, [...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain(message)
    expect(dump(db)).toBe(before)
  })

  it('clear needs --yes without a terminal; can clear chosen countries', async () => {
    const db = await store()
    await run(db, ['localization', 'import', fixture('c.csv', 'IN,0.3\nBR,0.5\nMX,0.55\n')])
    const refused = await run(db, ['localization', 'clear', '--json'])
    expect(refused.code).toBe(2)
    expect(refused.json.message).toContain('without --yes')
    const some = await run(db, ['localization', 'clear', '--country', 'br', '--country', 'MX', '--yes', '--json'])
    expect(some.json).toEqual({deleted: 2, dry_run: false, impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'}, message: 'deleted 2 localization factors', success: true})
    const all = await run(db, ['localization', 'clear', '--yes'])
    expect(all.stdout).toContain('deleted 1 localization factor')
    expect((await run(db, ['localization', 'list', '--json'])).json.factors).toEqual([])
  })
})
