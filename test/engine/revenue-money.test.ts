import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {fromMinor, toMinor} from '../../src/currency.js'
import {rateOn} from '../../src/fx/rates.js'
import {amountCodes, parseUnits} from '../../src/import/amounts.js'
import {parseDate, parseInterval} from '../../src/import/rows.js'
import {SqliteRevenue} from '../../src/store/sqlite/revenue.js'
import {FxTable, monthlyMinor, usdMinor} from '../../src/revenue/money.js'
import {setRates, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {join} from 'node:path'

describe('amount_usd_monthly (month-normalised USD cents)', () => {
  it('matches the hand-computed figures of each interval', () => {
    expect(monthlyMinor(999, 'month', 1)).toBe(999)
    expect(monthlyMinor(12_000, 'year', 1)).toBe(1000)
    expect(monthlyMinor(3000, 'month', 3)).toBe(1000)
    expect(monthlyMinor(700, 'week', 1)).toBe(3033) // 7 x 52 / 12 = 30.333
    expect(monthlyMinor(100, 'day', 1)).toBe(3042) // 1 x 365 / 12 = 30.4167
    expect(monthlyMinor(1000, 'year', 2)).toBe(42) // 10 / 24 = 0.41667
    expect(monthlyMinor(999, 'one_time', 1)).toBeNull()
  })

  it('is the exact monthly value rounded half up to the cent, never negative', () => {
    const factor = {day: 365 / 12, month: 1, week: 52 / 12, year: 1 / 12} as const
    fc.assert(
      fc.property(fc.integer({max: 1e9, min: 0}), fc.constantFrom('day', 'week', 'month', 'year'), fc.integer({max: 24, min: 1}), (cents, interval, count) => {
        const m = monthlyMinor(cents, interval, count)!
        const exact = (cents * factor[interval]) / count
        expect(Number.isInteger(m)).toBe(true)
        expect(m).toBeGreaterThanOrEqual(0)
        expect(Math.abs(m - exact)).toBeLessThanOrEqual(0.5 + 1e-6)
      }),
    )
  })

  it('a monthly subscription costs its amount per month; twelve months of a yearly one cost about its amount', () => {
    fc.assert(
      fc.property(fc.integer({max: 1e9, min: 0}), (cents) => {
        expect(monthlyMinor(cents, 'month', 1)).toBe(cents)
        expect(Math.abs(monthlyMinor(cents, 'year', 1)! * 12 - cents)).toBeLessThanOrEqual(6)
      }),
    )
  })
})

describe('amount_usd (USD cents at a rate in units per USD)', () => {
  it('converts and rounds half up to the cent', () => {
    expect(usdMinor(999, 'EUR', 0.8)).toBe(1249) // 9.99 / 0.8 = 12.4875
    expect(usdMinor(1500, 'JPY', 150)).toBe(1000)
    expect(usdMinor(1000, 'KWD', 0.3)).toBe(333) // 1.000 KWD / 0.3 = 3.333 USD
    expect(usdMinor(12_345, 'USD', 1)).toBe(12_345)
  })

  it('is within half a cent of the exact value, and monotonic in the amount', () => {
    fc.assert(
      fc.property(
        fc.integer({max: 1e10, min: 0}),
        fc.integer({max: 1e10, min: 0}),
        fc.double({max: 20_000, min: 0.001, noNaN: true}),
        fc.constantFrom('EUR', 'JPY', 'KWD', 'GBP'),
        (a, b, rate, currency) => {
          const digits = currency === 'JPY' ? 0 : currency === 'KWD' ? 3 : 2
          const exact = (a / 10 ** digits / rate) * 100
          expect(Math.abs(usdMinor(a, currency, rate) - exact)).toBeLessThanOrEqual(0.5 + exact * 1e-9)
          if (a <= b) expect(usdMinor(a, currency, rate)).toBeLessThanOrEqual(usdMinor(b, currency, rate))
        },
      ),
    )
  })

  it('amounts round-trip through minor units exactly', () => {
    fc.assert(
      fc.property(fc.integer({max: 1e12, min: 0}), fc.constantFrom('USD', 'JPY', 'KWD'), (minor, currency) => {
        expect(toMinor(fromMinor(minor, currency), currency)).toBe(minor)
      }),
    )
  })
})

describe('FxTable (in-memory rates of an import)', () => {
  it('gives the same rate as rateOn: nearest earlier date, else the earliest', async () => {
    const path = join(tempDir(), 'fx.db')
    await withStore(path, async (db, store) => {
      setRates(db, '2024-01-10', {EUR: 0.9})
      setRates(db, '2024-03-01', {EUR: 0.8}, false)
      setRates(db, '2024-06-15', {EUR: 0.85}, false)
      const table = new FxTable(new SqliteRevenue(db))
      await table.load('EUR', 'XAU')
      await fc.assert(
        fc.asyncProperty(fc.integer({max: Date.UTC(2025, 0, 1) / 1000, min: Date.UTC(2023, 0, 1) / 1000}), async (seconds) => {
          const day = new Date(seconds * 1000).toISOString().slice(0, 10)
          expect(table.rate('EUR', seconds)).toBe((await rateOn(store, 'EUR', day))!.rate)
        }),
      )
      expect(table.rate('EUR', Date.UTC(2024, 2, 1) / 1000)).toBe(0.8)
      expect(table.rate('EUR', Date.UTC(2024, 1, 29) / 1000)).toBe(0.9)
      expect(table.rate('EUR', Date.UTC(2020, 0, 1) / 1000)).toBe(0.9)
      expect(table.rate('XAU', 0)).toBeUndefined()
      expect(table.rate('USD', 0)).toBe(1)
    })
  })
})

describe('export cells', () => {
  it('reads the date forms gateway exports use, as UTC', () => {
    expect(parseDate('2026-01-05 10:00:00')).toBe(Date.UTC(2026, 0, 5, 10) / 1000)
    expect(parseDate('2026-01-05 10:00')).toBe(Date.UTC(2026, 0, 5, 10) / 1000)
    expect(parseDate('2026-01-05')).toBe(Date.UTC(2026, 0, 5) / 1000)
    expect(parseDate('2026-01-05T10:00:00Z')).toBe(Date.UTC(2026, 0, 5, 10) / 1000)
    expect(parseDate('2026-01-05T10:00:00.123Z')).toBe(Date.UTC(2026, 0, 5, 10) / 1000)
    expect(parseDate('2026-01-05T12:00:00+02:00')).toBe(Date.UTC(2026, 0, 5, 10) / 1000)
    expect(parseDate('1767607200')).toBe(1_767_607_200)
    expect(parseDate('1767607200123')).toBe(1_767_607_200)
    for (const bad of ['2026-13-01 00:00:00', '2026-02-30 00:00:00', '2026-01-01 24:00:00', '05/01/2026', 'yesterday', '17678664', '']) {
      expect(parseDate(bad), bad).toBeUndefined()
    }
  })

  it('fast and general date paths agree', () => {
    fc.assert(
      fc.property(fc.date({max: new Date('2099-12-31T23:59:59Z'), min: new Date('1971-01-01T00:00:00Z'), noInvalidDate: true}), (d) => {
        const s = d.toISOString().slice(0, 19)
        const t = Math.floor(d.getTime() / 1000)
        expect(parseDate(s.replace('T', ' '))).toBe(t)
        expect(parseDate(`${s}Z`)).toBe(t)
      }),
    )
  })

  it('reads amounts under the declared separators only, and intervals in several spellings', () => {
    const plain = amountCodes({decimal: '.', thousands: null})
    const grouped = amountCodes({decimal: '.', thousands: ','})
    expect(parseUnits('9.99', plain, 2)).toBe(999)
    expect(parseUnits('1,200.00', grouped, 2)).toBe(120_000)
    expect(parseUnits('1,200.00', plain, 2)).toBeNaN()
    expect(parseUnits('-5', plain, 2)).toBe(-500)
    expect(parseUnits('9,99', plain, 2)).toBeNaN()
    expect(parseUnits('9,99', grouped, 2)).toBeNaN()
    expect(parseUnits('abc', plain, 2)).toBeNaN()
    expect(parseInterval('month')).toEqual({count: 1, interval: 'month'})
    expect(parseInterval('3 months')).toEqual({count: 3, interval: 'month'})
    expect(parseInterval('every 2 weeks')).toEqual({count: 2, interval: 'week'})
    expect(parseInterval('Yearly')).toEqual({count: 1, interval: 'year'})
    expect(parseInterval('quarterly')).toEqual({count: 3, interval: 'month'})
    expect(parseInterval('0 month')).toBeUndefined()
    expect(parseInterval('fortnight')).toBeUndefined()
  })
})
