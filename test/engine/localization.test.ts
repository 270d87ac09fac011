import fc from 'fast-check'
import {strToU8} from 'fflate'
import {describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../src/errors.js'
import {setRate} from '../../src/fx/repository.js'
import {toCountry} from '../../src/localization/countries.js'
import {clearFactors, listFactors, localizationFactor, setFactor, writeFactors} from '../../src/localization/factors.js'
import {detectLocalizationFormat, parseLocalizationFile, resolveFactors} from '../../src/localization/import.js'
import {openStore} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'

const u8 = (s: string) => strToU8(s)

/** The World Bank wide layout: BOM, 4 preamble lines, CRLF, quoted cells, trailing comma. */
function wide(rows: string[][], indicator = 'PA.NUS.PPPC.RF', years = ['2021', '2022', '2023', '2024']): string {
  const q = (cells: string[]) => cells.map((c) => `"${c}"`).join(',') + ','
  return (
    '\uFEFF"Data Source","World Development Indicators",\r\n\r\n"Last Updated Date","2025-10-07",\r\n\r\n' +
    q(['Country Name', 'Country Code', 'Indicator Name', 'Indicator Code', ...years]) +
    '\r\n' +
    rows.map(([name, code, ...values]) => q([name, code, 'Price level ratio of PPP conversion factor (GDP) to market exchange rate', indicator, ...values])).join('\r\n') +
    '\r\n'
  )
}

const WIDE = wide([
  ['Aruba', 'ABW', '0.70', '0.71', '0.72', '0.73'],
  ['World', 'WLD', '0.5', '0.5', '0.5', '0.5'],
  ['European Union', 'EUU', '0.8', '0.8', '0.8', '0.8'],
  ['Germany', 'DEU', '0.81', '0.83', '0.85', ''],
  ['India', 'IND', '0.24', '', '', '0.25'],
  ['Kosovo', 'XKX', '0.41', '0.42', '0.43', '0.44'],
  ['Korea, Dem. People\'s Rep.', 'PRK', '', '', '', ''],
  ['High income', 'HIC', '0.9', '0.9', '0.9', '0.9'],
])

function store() {
  return openStore(tempStore())
}

describe('country codes', () => {
  it('alpha-3 and alpha-2 to alpha-2; aggregates are not countries', () => {
    expect(toCountry('DEU')).toBe('DE')
    expect(toCountry('de')).toBe('DE')
    expect(toCountry('XKX')).toBe('XK') // the World Bank's Kosovo
    for (const code of ['WLD', 'EUU', 'HIC', 'AFE', 'CHI', 'EU', '1W', 'XC', 'Z4', '']) expect(toCountry(code)).toBeUndefined()
  })
})

describe('World Bank wide layout (price level ratio)', () => {
  it('latest year with a value per country; aggregates skipped and counted', () => {
    const p = parseLocalizationFile(u8(WIDE), {name: 'API_PA.NUS.PPPC.RF.csv'})
    expect(p.format).toBe('wide')
    expect(p.kind).toBe('ratio')
    expect(p.rowsRead).toBe(8)
    expect(Object.fromEntries([...p.entries].map(([c, e]) => [c, [e.value, e.year]]))).toEqual({
      AW: [0.73, 2024],
      DE: [0.85, 2023],
      IN: [0.25, 2024],
      XK: [0.44, 2024],
    })
    expect(p.aggregates).toEqual(['WLD', 'EUU', 'HIC'])
    expect(p.noValue).toEqual(['KP'])
    expect(p.source).toBe('World Bank PA.NUS.PPPC.RF (API_PA.NUS.PPPC.RF.csv)')
  })

  it('the values are the factors', async () => {
    const s = store()
    const r = await resolveFactors(s, parseLocalizationFile(u8(WIDE), {name: 'w.csv'}))
    expect(r.factors.map((f) => [f.country, f.factor, f.year])).toEqual([
      ['AW', 0.73, 2024],
      ['DE', 0.85, 2023],
      ['IN', 0.25, 2024],
      ['XK', 0.44, 2024],
    ])
    await s.close()
  })

  it('refuses other indicators and malformed values, naming them', () => {
    expect(() => parseLocalizationFile(u8(wide([['Aruba', 'ABW', '1', '1', '1', '1']], 'NY.GDP.MKTP.CD')), {name: 'gdp.csv'})).toThrow(/indicator NY\.GDP\.MKTP\.CD is not one pricectl can turn into factors/)
    expect(() => parseLocalizationFile(u8(wide([['Aruba', 'ABW', '', '', '', 'abc']])), {name: 'w.csv'})).toThrow(/line 6: ABW 2024: "abc" is not a positive number/)
  })

  it('a PPP indicator in the wide layout is divided by FX like the long layout', async () => {
    const s = store()
    await setRate(s, {currency: 'INR', date: '2024-06-01', rate: 80, source: 't'})
    const p = parseLocalizationFile(u8(wide([['India', 'IND', '', '', '', '20']], 'PA.NUS.PPP')), {name: 'ppp.csv'})
    expect(p.kind).toBe('ppp')
    expect((await resolveFactors(s, p)).factors).toEqual([{country: 'IN', factor: 0.25, source: 'World Bank PA.NUS.PPP (ppp.csv)', year: 2024}])
    await s.close()
  })

  it('latest year wins whatever the values (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.double({max: 3, min: 0.1, noNaN: true}), {nil: undefined}), {maxLength: 8, minLength: 8}), (values) => {
        const years = Array.from({length: 8}, (_, i) => String(2017 + i))
        const p = parseLocalizationFile(u8(wide([['Japan', 'JPN', ...values.map((v) => (v === undefined ? '' : String(v)))]], 'PA.NUS.PPPC.RF', years)), {name: 'w.csv'})
        const last = values.findLastIndex((v) => v !== undefined)
        if (last < 0) expect(p.noValue).toEqual(['JP'])
        else expect(p.entries.get('JP')).toMatchObject({value: values[last], year: 2017 + last})
      }),
    )
  })
})

describe('long layout Country,Country ID,Year,PPP', () => {
  const LONG = [
    'Country,Country ID,Year,PPP',
    'Japan,JP,2023,95',
    'Japan,JP,2024,100',
    '"Korea, Rep.",KOR,2024,800',
    'World,1W,2024,1',
    'Euro area,XC,2024,0.7',
    'Ecuador,EC,2024,0.45',
    'Venezuela,VE,2024,5000000',
    'Mali,ML,2024,',
    'Tuvalu,TV,2024,1.2',
  ].join('\n')

  it('factor = PPP / that year\'s mean FX rate, else the latest rate; USD countries divide by 1', async () => {
    const s = store()
    await setRate(s, {currency: 'JPY', date: '2024-03-01', rate: 150, source: 't'})
    await setRate(s, {currency: 'JPY', date: '2024-09-01', rate: 130, source: 't'}) // 2024 mean 140
    await setRate(s, {currency: 'KRW', date: '2025-01-01', rate: 1600, source: 't'}) // current (outranks the snapshot), no 2024 rate
    const p = parseLocalizationFile(u8(LONG), {name: 'ppp-gdp.csv'})
    expect(p.format).toBe('long')
    expect(p.aggregates.sort()).toEqual(['1W', 'XC'])
    expect(p.noValue).toEqual(['ML'])
    const r = await resolveFactors(s, p)
    const by = Object.fromEntries(r.factors.map((f) => [f.country, f]))
    expect(by.JP).toEqual({country: 'JP', factor: 100 / 140, source: 'World Bank PPP / FX (ppp-gdp.csv)', year: 2024})
    expect(by.KR.factor).toBe(800 / 1600)
    expect(by.EC.factor).toBe(0.45)
    expect(r.implausible).toEqual(['VE']) // a PPP in a redenominated currency
    expect(r.fx).toEqual({latest: 3, yearAverage: 1}) // KRW, AUD (Tuvalu) and VES at the latest rate
    await s.close()
  })

  it('reports bad years and values by line', () => {
    expect(() => parseLocalizationFile(u8('Country,Country ID,Year,PPP\nJapan,JP,20x4,95\nJapan,JP,2024,-1\n'), {name: 'l.csv'})).toThrow(
      /line 2: year "20x4".*line 3: JP 2024 PPP: "-1" is not a positive number/,
    )
    expect(() => parseLocalizationFile(u8('Country,Country ID,Year,PPP\nJapan,JP,2024,95\nJapan,JPN,2024,96\n'), {name: 'l.csv'})).toThrow(/line 3: JPN 2024 is given twice \(also line 2\)/)
  })
})

describe('plain country,factor CSV', () => {
  it('with or without header, optional year', () => {
    const a = parseLocalizationFile(u8('country,factor,year\nIN,0.3,2024\nde,0.9,\n'), {name: 'f.csv'})
    expect(a.format).toBe('csv')
    expect([...a.entries].map(([c, e]) => [c, e.value, e.year])).toEqual([
      ['IN', 0.3, 2024],
      ['DE', 0.9, null],
    ])
    const b = parseLocalizationFile(u8('BR,0.5\n'), {name: 'f.csv'})
    expect(b.entries.get('BR')?.value).toBe(0.5)
  })

  it('every row must be valid: unknown country, bad or out-of-range factor, duplicates', () => {
    let error: unknown
    try {
      parseLocalizationFile(u8('country,factor\nDEU,0.9\nZZ,0.5\nFR,abc\nIT,85\nES,0\nIN,0.3\nin,0.4\n'), {name: 'f.csv'})
    } catch (error_) {
      error = error_
    }
    expect(error).toBeInstanceOf(InvalidInputError)
    const m = (error as Error).message
    expect(m).toContain('line 2: unknown country "DEU"')
    expect(m).toContain('line 3: unknown country "ZZ"')
    expect(m).toContain('line 4: FR factor "abc": is not a number')
    expect(m).toContain('line 5: IT factor "85": must be between 0.05 and 10')
    expect(m).toContain('line 6: ES factor "0": must be between')
    expect(m).toContain('line 8: in is country IN again (also line 7)')
  })
})

describe('detection', () => {
  it('tells the three layouts apart and refuses anything else', () => {
    expect(detectLocalizationFormat(WIDE)).toBe('wide')
    expect(detectLocalizationFormat('"Country Name","Country Code","Indicator Name","Indicator Code","2024",\n')).toBe('wide')
    expect(detectLocalizationFormat('Country,Country ID,Year,PPP\n')).toBe('long')
    expect(detectLocalizationFormat('country,factor\n')).toBe('csv')
    expect(detectLocalizationFormat('IN,0.3\n')).toBe('csv')
    expect(() => parseLocalizationFile(u8('a;b;c\n'), {name: 'x.csv'})).toThrow(/cannot tell the layout.*--format wide\|long\|csv/)
  })
})

describe('the factor store', () => {
  it('localizationFactor reads what was written; replace and dry run', async () => {
    const s = store()
    expect(await localizationFactor(s, 'IN')).toBeUndefined()
    const first = await writeFactors(s, [
      {country: 'IN', factor: 0.3, source: 'a', year: 2024},
      {country: 'DE', factor: 0.9, source: 'a', year: 2024},
    ])
    expect(first).toEqual({removed: 0, unchanged: 0, written: 2})
    expect(await localizationFactor(s, 'IN')).toBe(0.3)
    expect(await writeFactors(s, [{country: 'IN', factor: 0.3, source: 'a', year: 2024}])).toEqual({removed: 0, unchanged: 1, written: 0})
    expect(await writeFactors(s, [{country: 'BR', factor: 0.5, source: 'b', year: null}], {dryRun: true, replace: true})).toEqual({removed: 2, unchanged: 0, written: 1})
    expect((await listFactors(s)).map((f) => f.country)).toEqual(['DE', 'IN'])
    expect(await writeFactors(s, [{country: 'BR', factor: 0.5, source: 'b', year: null}], {replace: true})).toEqual({removed: 2, unchanged: 0, written: 1})
    expect(await listFactors(s)).toEqual([{country: 'BR', factor: 0.5, source: 'b', year: null}])
    await setFactor(s, {country: 'CH', factor: 1.4, source: 'manual', year: null})
    expect(await localizationFactor(s, 'CH')).toBe(1.4)
    expect(await clearFactors(s, ['CH'])).toBe(1)
    expect(await clearFactors(s)).toBe(1)
    expect(await localizationFactor(s, 'BR')).toBeUndefined()
    await s.close()
  })
})

describe('empty files', () => {
  it('a file without any country value is an input error', () => {
    expect(() => parseLocalizationFile(u8('country,factor\n'), {name: 'e.csv'})).toThrow(/e\.csv: no country values to import \(0 rows read as csv/)
    expect(() => parseLocalizationFile(u8(wide([['World', 'WLD', '1', '1', '1', '1']])), {name: 'w.csv'})).toThrow(/no country values.*1 aggregates/)
  })
})
