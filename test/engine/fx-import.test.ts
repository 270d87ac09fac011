import fc from 'fast-check'
import {strToU8, zipSync} from 'fflate'
import {afterEach, describe, expect, it} from 'vitest'

import {convertMinor} from '../../src/currency.js'
import {InvalidInputError} from '../../src/errors.js'
import {detectFxFormat, eurToUsdRates, importRates, parseEcbDate, parseFxFile} from '../../src/fx/import.js'
import {rateOn} from '../../src/fx/rates.js'
import {listRates, setRate, yearAverageRate} from '../../src/fx/repository.js'
import {openSqliteStore as openStore} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'

// Small fixtures in the ECB's own layouts.
const ECB_LATEST = `Date, USD, JPY, GBP, CHF, KRW, \n13 April 2026, 1.1684, 186.75, 0.87058, 0.9242, 1740.86, \n`
const ECB_HIST = [
  'Date,USD,JPY,CYP,GBP,TRL,KRW,',
  '2026-04-13,1.1684,186.75,N/A,0.87058,N/A,1740.86,',
  '2026-04-10,1.1711,186.43,N/A,0.87105,N/A,1737.06,',
  '1999-01-04,1.1789,133.73,0.58231,0.7111,372274,N/A,',
  '',
].join('\n')

const u8 = (s: string) => strToU8(s)

afterEach(() => {
  delete process.env.PRICECTL_NOW
})

function store() {
  return openStore(tempStore())
}

function close(a: number, b: number, rel = 1e-12) {
  expect(Math.abs(a - b) / Math.abs(b)).toBeLessThanOrEqual(rel)
}

describe('ECB eurofxref', () => {
  it('parses both date styles', () => {
    expect(parseEcbDate('13 April 2026')).toBe('2026-04-13')
    expect(parseEcbDate(' 2 Jan 2026 ')).toBe('2026-01-02')
    expect(parseEcbDate('2026-04-13')).toBe('2026-04-13')
    expect(parseEcbDate('31 February 2026')).toBeUndefined()
    expect(parseEcbDate('13 Foo 2026')).toBeUndefined()
  })

  it('latest: values per 1 EUR become values per 1 USD, EUR is added, USD is the base', () => {
    const p = parseFxFile(u8(ECB_LATEST), {name: 'eurofxref.csv'})
    expect(p.format).toBe('ecb')
    expect(p.rowsRead).toBe(1)
    const by = Object.fromEntries(p.rows.map((r) => [r.currency, r]))
    expect(Object.keys(by).sort()).toEqual(['CHF', 'EUR', 'GBP', 'JPY', 'KRW'])
    expect(by.JPY).toEqual({currency: 'JPY', date: '2026-04-13', rate: 186.75 / 1.1684})
    expect(by.EUR.rate).toBe(1 / 1.1684)
    expect(by.KRW.rate).toBe(1740.86 / 1.1684)
    expect(p.source).toBe('ECB eurofxref (eurofxref.csv)')
  })

  it('history: N/A cells are skipped, retired non-ISO codes are skipped and counted', () => {
    const p = parseFxFile(u8(ECB_HIST), {name: 'eurofxref-hist.csv'})
    expect(p.rowsRead).toBe(3)
    expect(p.skippedCodes).toEqual(['CYP', 'TRL'])
    expect(p.skippedValues).toBe(2) // CYP and TRL on 1999-01-04
    const on1999 = p.rows.filter((r) => r.date === '1999-01-04').map((r) => r.currency).sort()
    expect(on1999).toEqual(['EUR', 'GBP', 'JPY']) // KRW was N/A
    expect(p.rows).toHaveLength(3 * 4 - 1)
  })

  it('reads the zip operators download (one csv inside)', () => {
    const zip = zipSync({'eurofxref-hist.csv': u8(ECB_HIST)})
    const fromZip = parseFxFile(zip, {name: 'eurofxref-hist.zip'})
    const fromCsv = parseFxFile(u8(ECB_HIST), {name: 'x'})
    expect(fromZip.rows).toEqual(fromCsv.rows)
    expect(fromZip.source).toBe('ECB eurofxref (eurofxref-hist.zip:eurofxref-hist.csv)')
    expect(() => parseFxFile(zipSync({'a.csv': u8(ECB_HIST), 'b.csv': u8(ECB_HIST)}), {name: 'two.zip'})).toThrow(/several files \(a\.csv, b\.csv\)/)
    expect(() => parseFxFile(zipSync({'readme.txt': u8('hi')}), {name: 'r.zip'})).toThrow(/no \.csv or \.json/)
  })

  it('rejects a bad value or date naming the line, and a file without USD', () => {
    expect(() => parseFxFile(u8('Date,USD,JPY,\n2026-04-13,1.1684,abc,\n'), {name: 'f.csv'})).toThrow(/line 2: JPY rate "abc" is not a positive number/)
    expect(() => parseFxFile(u8('Date,USD,JPY,\n2026-04-13,1.1684,-3,\n'), {name: 'f.csv'})).toThrow(/line 2: JPY rate "-3"/)
    expect(() => parseFxFile(u8('Date,USD,JPY,\n2026-13-01,1.1684,186,\n'), {name: 'f.csv'})).toThrow(/line 2: date "2026-13-01"/)
    expect(() => parseFxFile(u8('Date,JPY,GBP,\n2026-04-13,186,0.8,\n'), {name: 'f.csv'})).toThrow(/no USD column/)
    expect(() => parseFxFile(u8('Date,USD,JPY,\n2026-04-13,1.1,186,\n2026-04-13,1.1,186,\n'), {name: 'f.csv'})).toThrow(/line 3: date 2026-04-13 appears twice \(also line 2\)/)
  })

  it('conversion keeps every cross rate and round-trips through EUR (property)', () => {
    const rate = fc.double({max: 1e6, min: 1e-4, noNaN: true})
    fc.assert(
      fc.property(rate, rate, rate, (usdPerEur, xPerEur, yPerEur) => {
        const r = eurToUsdRates({USD: usdPerEur, X: xPerEur, Y: yPerEur}, usdPerEur)
        expect(r.USD).toBeUndefined()
        close(r.X * usdPerEur, xPerEur) // X per EUR again
        close(r.EUR * usdPerEur, 1)
        close(r.X / r.Y, xPerEur / yPerEur) // the EUR cross rate is unchanged
        close(r.X / r.EUR, xPerEur)
      }),
    )
  })

  it('money converted through imported rates matches the ECB cross rate to the minor unit (property)', () => {
    fc.assert(
      fc.property(
        fc.double({max: 2, min: 0.5, noNaN: true}),
        fc.double({max: 300, min: 50, noNaN: true}),
        fc.integer({max: 10_000_000, min: 0}),
        (usdPerEur, jpyPerEur, eurCents) => {
          const r = eurToUsdRates({JPY: jpyPerEur}, usdPerEur)
          const yen = convertMinor(eurCents, 'EUR', r.EUR, 'JPY', r.JPY)
          const direct = (eurCents / 100) * jpyPerEur
          expect(Math.abs(yen - direct)).toBeLessThanOrEqual(0.5 + 1e-6 * direct)
        },
      ),
    )
  })
})

describe('currency,rate[,date] CSV', () => {
  it('with or without a header; the date defaults to --date, else today', () => {
    process.env.PRICECTL_NOW = '2026-05-01T12:00:00Z'
    const p = parseFxFile(u8('EUR,0.92\njpy,151.5,2026-04-01\n'), {name: 'r.csv'})
    expect(p.format).toBe('csv')
    expect(p.rows).toEqual([
      {currency: 'EUR', date: '2026-05-01', rate: 0.92},
      {currency: 'JPY', date: '2026-04-01', rate: 151.5},
    ])
    const h = parseFxFile(u8('date,rate,currency\n2026-01-02,0.9,EUR\n,0.8,GBP\n'), {date: '2025-12-31', name: 'h.csv'})
    expect(h.rows).toEqual([
      {currency: 'EUR', date: '2026-01-02', rate: 0.9},
      {currency: 'GBP', date: '2025-12-31', rate: 0.8},
    ])
    expect(h.rowsRead).toBe(2)
  })

  it('every bad row is reported by line; unknown currencies are never skipped', () => {
    const text = 'currency,rate,date\nEUR,0.92,2026-04-01\nXBT,0.00001,2026-04-01\nGBP,zero,2026-04-01\nJPY,150,2026-02-30\nUSD,1.2,2026-04-01\nEUR,0.93,2026-04-01\n'
    let error: unknown
    try {
      parseFxFile(u8(text), {name: 'bad.csv'})
    } catch (error_) {
      error = error_
    }
    expect(error).toBeInstanceOf(InvalidInputError)
    const m = (error as Error).message
    expect(m).toContain('bad.csv: 5 bad rows')
    expect(m).toContain('line 3: unknown currency "XBT"')
    expect(m).toContain('line 4: GBP rate "zero" is not a positive number')
    expect(m).toContain('line 5: date "2026-02-30" is not a date')
    expect(m).toContain('line 6: USD is the base of every rate, so its rate must be 1, got 1.2')
    expect(m).toContain('line 7: EUR on 2026-04-01 is given twice (also line 2)')
  })

  it('rejects a bad --date', () => {
    expect(() => parseFxFile(u8('EUR,0.9\n'), {date: '2026-4-1', name: 'r.csv'})).toThrow(/--date: expected a date YYYY-MM-DD, got "2026-4-1"/)
  })
})

describe('{date, usd: {...}} JSON', () => {
  it('lower-case codes as the npm package ships them; non-ISO codes skipped and counted', () => {
    const json = JSON.stringify({date: '2026-09-29', usd: {'1inch': 4.2, btc: 0.00001, eur: 0.88, jpy: 157.4, usd: 1, xau: 0.0003}})
    const p = parseFxFile(u8(json), {name: 'usd.json'})
    expect(p.format).toBe('json')
    expect(p.rows.sort((a, b) => a.currency.localeCompare(b.currency))).toEqual([
      {currency: 'EUR', date: '2026-09-29', rate: 0.88},
      {currency: 'JPY', date: '2026-09-29', rate: 157.4},
    ])
    expect(p.skippedCodes.sort()).toEqual(['1INCH', 'BTC', 'XAU'])
    expect(p.rowsRead).toBe(6)
  })

  it('another base table is converted through its usd entry', () => {
    const p = parseFxFile(u8(JSON.stringify({date: '2026-09-29', eur: {jpy: 180, usd: 1.2}})), {name: 'eur.json'})
    const by = Object.fromEntries(p.rows.map((r) => [r.currency, r.rate]))
    expect(by).toEqual({EUR: 1 / 1.2, JPY: 180 / 1.2})
  })

  it('errors name the field and value', () => {
    expect(() => parseFxFile(u8('{"date":"2026-09-29","usd":{"eur":-1}}'), {name: 'x.json'})).toThrow(/usd\.eur: rate -1 is not a positive number/)
    expect(() => parseFxFile(u8('{"date":"29.09.2026","usd":{"eur":0.9}}'), {name: 'x.json'})).toThrow(/"date" must be YYYY-MM-DD, got "29.09.2026"/)
    expect(() => parseFxFile(u8('{"date":"2026-09-29"}'), {name: 'x.json'})).toThrow(/expected one rate table/)
    expect(() => parseFxFile(u8('{"date":"2026-09-29",'), {name: 'x.json'})).toThrow(/malformed JSON/)
    expect(() => parseFxFile(u8('{"date":"2026-09-29","eur":{"jpy":180}}'), {name: 'x.json'})).toThrow(/no usd entry/)
  })
})

describe('layout detection', () => {
  it('detects each layout from the content, and says what to do otherwise', () => {
    expect(detectFxFormat(ECB_LATEST)).toBe('ecb')
    expect(detectFxFormat('\uFEFFDate,USD,\n')).toBe('ecb')
    expect(detectFxFormat('currency,rate\nEUR,1\n')).toBe('csv')
    expect(detectFxFormat('EUR,0.9\n')).toBe('csv')
    expect(detectFxFormat('  {"date": "2026-01-01"}')).toBe('json')
    expect(() => parseFxFile(u8('hello world\n'), {name: 'x.txt'})).toThrow(/cannot tell the layout.*--format ecb\|csv\|json/)
  })

  it('--format forces a layout', () => {
    expect(() => parseFxFile(u8('EUR,0.9\n'), {format: 'ecb', name: 'x.csv'})).toThrow(/expected the ECB header/)
  })
})

describe('importRates and the fx repository', () => {
  it('writes in one transaction; re-importing changes nothing', async () => {
    const s = store()
    const p = parseFxFile(u8(ECB_HIST), {name: 'hist.csv'})
    const first = await importRates(s, p)
    expect(first).toMatchObject({currencies: 4, dates: {count: 3, from: '1999-01-04', to: '2026-04-13'}, ratesUnchanged: 0, ratesWritten: 11, rowsRead: 3})
    expect(await rateOn(s, 'JPY', '2026-04-12')).toMatchObject({date: '2026-04-10', rate: 186.43 / 1.1711, source: 'ECB eurofxref (hist.csv)'})
    const again = await importRates(s, p)
    expect(again).toMatchObject({ratesUnchanged: 11, ratesWritten: 0})
    await s.close()
  })

  it('a dry run writes nothing but reports what would change', async () => {
    const s = store()
    const before = s.db.prepare('SELECT count(*) AS n FROM fx_rates').get()
    const r = await importRates(s, parseFxFile(u8(ECB_HIST), {name: 'hist.csv'}), {dryRun: true})
    expect(r).toMatchObject({dryRun: true, ratesWritten: 11})
    expect(s.db.prepare('SELECT count(*) AS n FROM fx_rates').get()).toEqual(before)
    await s.close()
  })

  it('an import outranks the newer snapshot; only a later rate of the operator is reported as kept', async () => {
    const s = store()
    const snapshotDate = (s.db.prepare("SELECT max(date) AS d FROM fx_rates WHERE currency = 'JPY'").get() as {d: string}).d
    expect(snapshotDate > '2026-04-13').toBe(true)
    await setRate(s, {currency: 'GBP', date: '2026-05-01', rate: 0.8, source: 'manual'})
    const r = await importRates(s, parseFxFile(u8(ECB_HIST), {name: 'hist.csv'}), {today: '2026-06-01'})
    expect(r.newerOnFile.currencies).toEqual(['GBP'])
    expect(await rateOn(s, 'JPY', undefined, '2026-11-01')).toMatchObject({date: '2026-04-13', source: 'ECB eurofxref (hist.csv)'})
    await s.close()
  })

  it('imports a long history fast enough to do by hand (7,000 days x 30 currencies)', async () => {
    const s = store()
    const codes = ['JPY', 'GBP', 'CHF', 'KRW', 'AUD', 'BRL', 'CAD', 'CNY', 'HKD', 'IDR', 'ILS', 'INR', 'MXN', 'MYR', 'NZD', 'PHP', 'SGD', 'THB', 'ZAR', 'CZK', 'DKK', 'HUF', 'PLN', 'RON', 'SEK', 'ISK', 'NOK', 'TRY', 'BGN', 'RUB']
    const lines = [`Date,USD,${codes.join(',')},`]
    const day = Date.UTC(2026, 3, 13)
    for (let i = 0; i < 7000; i++) lines.push(`${new Date(day - i * 86_400_000).toISOString().slice(0, 10)},1.1,${codes.map((_, j) => (j + 1.5).toFixed(4)).join(',')},`)
    const r = await importRates(s, parseFxFile(u8(lines.join('\n')), {name: 'big.csv'}))
    expect(r.ratesWritten).toBe(7000 * 31)
    expect(r.dates.count).toBe(7000)
    await s.close()
  })

  it('lists latest, as of a date, and history; sets a rate', async () => {
    const s = store()
    await importRates(s, parseFxFile(u8(ECB_HIST), {name: 'hist.csv'}))
    const asOf = await listRates(s, {date: '2026-04-11'})
    const jpy = asOf.find((r) => r.currency === 'JPY')!
    expect(jpy.date).toBe('2026-04-10')
    expect(asOf.find((r) => r.currency === 'USD')).toMatchObject({rate: 1})
    expect((await listRates(s, {currency: 'JPY', history: true})).map((r) => r.date).slice(-3)).toEqual(['2026-04-13', '2026-04-10', '1999-01-04'])
    expect((await listRates(s, {currency: 'JPY', date: '2000-01-01', history: true})).map((r) => r.date)).toEqual(['1999-01-04'])
    await setRate(s, {currency: 'JPY', date: '2030-01-01', rate: 140, source: 'manual'})
    // Dated after today: listed as scheduled, after the rate that prices JPY today.
    expect(await listRates(s, {currency: 'JPY', today: '2026-06-01'})).toEqual([
      expect.objectContaining({date: '2026-04-13', kind: 'import', status: 'current'}),
      {currency: 'JPY', date: '2030-01-01', kind: 'manual', rate: 140, source: 'manual', status: 'scheduled'},
    ])
    expect((await listRates(s, {today: '2030-01-01'})).find((r) => r.currency === 'JPY')).toMatchObject({rate: 140, status: 'current'})
    expect((await listRates(s, {currency: 'XOF', date: '2000-01-01'})).length).toBeLessThanOrEqual(1)
    await s.close()
  })

  it('averages a year of rates', async () => {
    const s = store()
    await setRate(s, {currency: 'JPY', date: '2024-01-10', rate: 140, source: 't'})
    await setRate(s, {currency: 'JPY', date: '2024-12-31', rate: 160, source: 't'})
    await setRate(s, {currency: 'JPY', date: '2025-01-01', rate: 999, source: 't'})
    expect(await yearAverageRate(s, 'JPY', 2024)).toEqual({days: 2, rate: 150})
    expect(await yearAverageRate(s, 'JPY', 2023)).toBeUndefined()
    expect(await yearAverageRate(s, 'USD', 2023)).toEqual({days: 1, rate: 1})
    await s.close()
  })
})

describe('empty files', () => {
  it('a file without any rate is an input error', () => {
    expect(() => parseFxFile(u8('currency,rate,date\n'), {name: 'empty.csv'})).toThrow(/empty\.csv: no rates to import \(0 rows read as csv\)/)
    expect(() => parseFxFile(u8('{"date":"2026-01-01","usd":{"btc":0.1}}'), {name: 'c.json'})).toThrow(/no rates to import/)
    expect(() => parseFxFile(u8('Date,USD,JPY,\n'), {name: 'e.csv'})).toThrow(/no rates to import/)
  })
})
