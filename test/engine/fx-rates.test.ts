import fc from 'fast-check'
import {afterEach, describe, expect, it} from 'vitest'

import {rateOn, ratesOn, requireRate} from '../../src/fx/rates.js'
import {listRates, setRate} from '../../src/fx/repository.js'
import {fxKind} from '../../src/fx/sources.js'
import {kindSql} from '../../src/store/sqlite/fx.js'
import {FxSetInput} from '../../src/schemas/fx.js'
import {SqliteRevenue} from '../../src/store/sqlite/revenue.js'
import {FxTable} from '../../src/revenue/money.js'
import {PricingContexts} from '../../src/server/contexts.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {defaultFxSnapshot} from '../../src/store/seed.js'
import {tempStore} from '../helpers/run.js'

/**
 * The rule that picks a rate (docs/fx-localization-geoip.md, "Which rate is used"), with
 * "today" fixed by the tests: operator rates outrank the bundled snapshot whatever their
 * dates, and a rate dated after today is not used before its date.
 */

const SNAP = 'default snapshot (@fawazahmed0/currency-api 9.9.9)'
const stores: {close(): void}[] = []

afterEach(() => {
  for (const s of stores.splice(0)) s.close()
  delete process.env.PRICECTL_NOW
})

/** A store with only the given rates (the bundled snapshot removed). */
function storeWith(rates: {currency?: string; date: string; rate: number; source: string}[]): Store {
  const s = openStore(tempStore())
  stores.push(s)
  s.db.prepare('DELETE FROM fx_rates').run()
  for (const r of rates) setRate(s, {currency: r.currency ?? 'EUR', date: r.date, rate: r.rate, source: r.source})
  return s
}

describe('pricing today', () => {
  it('an operator rate older than the snapshot outranks it (the ECB import case)', () => {
    const db = storeWith([
      {date: '2026-04-13', rate: 0.85, source: 'ECB eurofxref (eurofxref.csv)'},
      {date: '2026-09-29', rate: 0.88, source: SNAP},
    ])
    expect(rateOn(db, 'EUR', undefined, '2026-11-23')).toMatchObject({date: '2026-04-13', rate: 0.85})
    expect(ratesOn(db, undefined, '2026-11-23').get('EUR')).toMatchObject({date: '2026-04-13', rate: 0.85})
  })

  it('a rate dated after today is not used before its date, and is from it (fx set EUR 2 --date 2031-01-01)', () => {
    const db = storeWith([
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2026-05-01', rate: 0.9, source: 'manual'},
      {date: '2031-01-01', rate: 2, source: 'manual'},
    ])
    expect(rateOn(db, 'EUR', undefined, '2026-11-23')?.rate).toBe(0.9)
    expect(rateOn(db, 'EUR', undefined, '2030-12-31')?.rate).toBe(0.9)
    expect(rateOn(db, 'EUR', undefined, '2031-01-01')?.rate).toBe(2)
    expect(ratesOn(db, undefined, '2026-11-23').get('EUR')?.rate).toBe(0.9)
    expect(ratesOn(db, undefined, '2031-01-01').get('EUR')?.rate).toBe(2)
  })

  it('only a future rate of the operator beside the snapshot: the snapshot prices until that date', () => {
    const db = storeWith([
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2031-01-01', rate: 2, source: 'manual'},
    ])
    expect(rateOn(db, 'EUR', undefined, '2026-11-23')?.rate).toBe(0.88)
  })

  it('only future rates: none usable today (an error naming the currency and the fix)', () => {
    const db = storeWith([{date: '2031-01-01', rate: 2, source: 'manual'}])
    expect(rateOn(db, 'EUR', undefined, '2026-11-23')).toBeUndefined()
    expect(ratesOn(db, undefined, '2026-11-23').has('EUR')).toBe(false)
    process.env.PRICECTL_NOW = '2026-11-23T00:00:00Z'
    expect(() => requireRate(db, 'EUR')).toThrow(/no FX rate for EUR: add one with "pricectl fx set EUR RATE"/)
  })

  it('the snapshot is the floor when the clock is set before its date', () => {
    const db = storeWith([{date: '2026-09-29', rate: 0.88, source: SNAP}])
    expect(rateOn(db, 'EUR', undefined, '2026-03-01')?.rate).toBe(0.88)
    expect(ratesOn(db, undefined, '2026-03-01').get('EUR')?.rate).toBe(0.88)
  })

  it('USD is 1 whatever is on file', () => {
    const db = storeWith([])
    expect(rateOn(db, 'USD')?.rate).toBe(1)
    expect(ratesOn(db).get('USD')?.rate).toBe(1)
  })
})

describe('revenue on a created day', () => {
  const db = () =>
    storeWith([
      {date: '2020-01-01', rate: 0.8, source: 'ECB eurofxref (hist.csv)'},
      {date: '2024-01-01', rate: 0.9, source: 'ECB eurofxref (hist.csv)'},
      {date: '2025-01-01', rate: 0.95, source: SNAP},
      {date: '2026-06-01', rate: 0.7, source: 'manual'},
      {date: '2031-01-01', rate: 2, source: 'manual'},
    ])

  it.each([
    ['2024-06-01', 0.9, 'the operator\'s nearest earlier rate'],
    ['2025-06-01', 0.9, 'the operator\'s rate outranks a later snapshot rate'],
    ['2026-06-01', 0.7, 'a rate applies from its own date'],
    ['2019-01-01', 0.8, 'older than every rate: the operator\'s earliest'],
    ['2031-02-01', 2, 'a record dated after a scheduled rate converts at it'],
  ])('%s -> %s (%s)', (day, rate) => {
    expect(rateOn(db(), 'EUR', day, '2026-11-23')?.rate).toBe(rate)
  })

  it('the snapshot serves days before the operator\'s first rate when it is dated on or before them', () => {
    const d = storeWith([
      {date: '2025-01-01', rate: 0.95, source: SNAP},
      {date: '2026-06-01', rate: 0.7, source: 'manual'},
    ])
    expect(rateOn(d, 'EUR', '2025-06-01', '2026-11-23')?.rate).toBe(0.95)
    expect(rateOn(d, 'EUR', '2024-06-01', '2026-11-23')?.rate).toBe(0.7) // operator's earliest, dated before today
  })

  it('a future rate is no fallback for older days', () => {
    const d = storeWith([
      {date: '2025-01-01', rate: 0.95, source: SNAP},
      {date: '2031-01-01', rate: 2, source: 'manual'},
    ])
    expect(rateOn(d, 'EUR', '2020-01-01', '2026-11-23')?.rate).toBe(0.95)
  })
})

describe('one rule everywhere', () => {
  const day = fc.integer({max: 40, min: 0}).map((n) => new Date(Date.UTC(2026, 0, 1 + n * 5)).toISOString().slice(0, 10))
  const row = fc.record({date: day, rate: fc.integer({max: 1000, min: 1}), snapshot: fc.boolean()})

  it('rateOn, ratesOn and FxTable (imports) pick the same rate for any rates, day and today (property)', () => {
    const db = storeWith([])
    fc.assert(
      fc.property(fc.uniqueArray(row, {maxLength: 8, selector: (r) => r.date}), day, day, (rows, on, today) => {
        db.db.prepare('DELETE FROM fx_rates').run()
        for (const r of rows) setRate(db, {currency: 'EUR', date: r.date, rate: r.rate, source: r.snapshot ? SNAP : 'manual'})
        const one = rateOn(db, 'EUR', on, today)
        expect(ratesOn(db, on, today).get('EUR')).toEqual(one)
        const seconds = Date.parse(`${on}T12:00:00Z`) / 1000
        expect(new FxTable(new SqliteRevenue(db.db), today).rate('EUR', seconds)).toBe(one?.rate)
      }),
      {numRuns: 300},
    )
  })

  it('the SQL and the TypeScript read the same kind from a label (property)', () => {
    const s = openStore(tempStore())
    stores.push(s)
    const labels = fc.oneof(
      fc.string(),
      fc.constantFrom('manual', 'ECB eurofxref (x.csv)', 'csv (a.csv)', 'json (usd.json)', 'csv (', 'json x)', 'ecb eurofxref (x)', SNAP, 'Default snapshot (x)'),
      fc.tuple(fc.constantFrom('csv (', 'json (', 'ECB eurofxref (', 'default snapshot ('), fc.string(), fc.constantFrom(')', '', ') ')).map((p) => p.join('')),
    )
    const stmt = s.db.prepare(`SELECT ${kindSql()} AS kind FROM (SELECT ? AS source)`)
    fc.assert(
      fc.property(labels, (label) => {
        expect((stmt.get(label) as {kind: string}).kind).toBe(fxKind(label))
      }),
    )
  })
})

describe('labels', () => {
  it('the bundled snapshot is labelled as such; operators cannot use that label', () => {
    expect(fxKind(defaultFxSnapshot().source)).toBe('snapshot')
    const r = FxSetInput.safeParse({currency: 'EUR', date: '2026-01-01', rate: 1, source: 'Default Snapshot (mine)'})
    expect(r.success).toBe(false)
    expect(r.error?.issues[0].message).toContain('"default snapshot" labels the bundled snapshot')
    expect(fxKind('manual')).toBe('manual')
    expect(fxKind('treasury desk')).toBe('manual')
    expect(fxKind('ECB eurofxref (eurofxref-hist.zip:eurofxref-hist.csv)')).toBe('import')
  })

  it('fx list: kind and status today of each rate', () => {
    const db = storeWith([
      {date: '2026-04-10', rate: 0.86, source: 'ECB eurofxref (h.csv)'},
      {date: '2026-04-13', rate: 0.85, source: 'ECB eurofxref (h.csv)'},
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2031-01-01', rate: 2, source: 'manual'},
      {currency: 'GBP', date: '2026-09-29', rate: 0.75, source: SNAP},
    ])
    const today = '2026-11-23'
    expect(listRates(db, {today}).filter((r) => r.currency !== 'USD')).toEqual([
      {currency: 'EUR', date: '2026-04-13', kind: 'import', rate: 0.85, source: 'ECB eurofxref (h.csv)', status: 'current'},
      {currency: 'EUR', date: '2031-01-01', kind: 'manual', rate: 2, source: 'manual', status: 'scheduled'},
      {currency: 'GBP', date: '2026-09-29', kind: 'snapshot', rate: 0.75, source: SNAP, status: 'current'},
    ])
    expect(listRates(db, {currency: 'EUR', history: true, today}).map((r) => `${r.date} ${r.status}`)).toEqual([
      '2031-01-01 scheduled',
      '2026-09-29 outranked',
      '2026-04-13 current',
      '2026-04-10 past',
    ])
    expect(listRates(db, {currency: 'EUR', date: '2031-06-01', today})).toEqual([expect.objectContaining({date: '2031-01-01', rate: 2})])
  })
})

describe('a long-lived pricing context (the server\'s)', () => {
  it('is replaced when the day changes, so a rate scheduled for today is used from today', () => {
    const db = storeWith([
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2026-11-24', rate: 2, source: 'manual'},
    ])
    process.env.PRICECTL_NOW = '2026-11-23T23:59:00Z'
    const contexts = new PricingContexts(db)
    expect(contexts.current().rate('EUR')?.rate).toBe(0.88)
    expect(contexts.current().ratesStale()).toBe(false)
    process.env.PRICECTL_NOW = '2026-11-24T00:00:30Z'
    expect(contexts.current().rate('EUR')?.rate).toBe(2)
    expect(contexts.builds).toBe(2)
  })
})
