import {afterEach, describe, expect, it} from 'vitest'

import {NotFoundError, OperationalError} from '../../src/errors.js'
import {currenciesInUse, deleteRates, removeRates} from '../../src/fx/prune.js'
import {rateOn} from '../../src/fx/rates.js'
import {setRate, storedRate} from '../../src/fx/repository.js'
import {parseSourceFilter} from '../../src/fx/sources.js'
import {type DB, openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {defaultFxSnapshot} from '../../src/fx/snapshot.js'
import {tempStore} from '../helpers/run.js'

/** fx delete and fx prune on a real store seeded with the bundled snapshot; "today" fixed. */

const stores: {close(): Promise<void>}[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
})

const SNAP = defaultFxSnapshot()
// A day after the bundled snapshot's, so its rates are usable.
const TODAY = '2099-01-01'

function fresh(): Store {
  const s = openStore(tempStore())
  stores.push(s)
  return s
}

const count = (db: DB, where = '1', ...params: string[]) => (db.prepare(`SELECT count(*) AS n FROM fx_rates WHERE ${where}`).get(...params) as {n: number}).n

/** The rows of a table, to prove a refused or dry run wrote nothing. */
const dump = (db: DB) => JSON.stringify(db.prepare('SELECT * FROM fx_rates ORDER BY currency, date').all())

describe('fx prune', () => {
  it('removes imported rates and says what it removed; the snapshot rates they had replaced come back', async () => {
    const db = fresh()
    const src = 'ECB eurofxref (hist.csv)'
    await setRate(db, {currency: 'EUR', date: '2026-04-13', rate: 0.85, source: src})
    await setRate(db, {currency: 'EUR', date: SNAP.date, rate: 0.86, source: src}) // replaces the snapshot's EUR row
    await setRate(db, {currency: 'JPY', date: '2026-04-13', rate: 160, source: src})
    await setRate(db, {currency: 'GBP', date: '2026-01-01', rate: 0.7, source: 'manual'})
    expect((await storedRate(db, 'EUR', SNAP.date))?.source).toBe(src)
    const r = await removeRates(db, {source: parseSourceFilter('import')}, {today: TODAY})
    expect(r).toMatchObject({
      currencies: [
        {currency: 'EUR', from: '2026-04-13', removed: 2, to: SNAP.date},
        {currency: 'JPY', from: '2026-04-13', removed: 1, to: '2026-04-13'},
      ],
      removed: 3,
      restored: [{currency: 'EUR', date: SNAP.date, rate: SNAP.rates.EUR, source: SNAP.source}],
      sources: [{kind: 'import', removed: 3, source: src}],
      withoutRate: [],
    })
    expect(await storedRate(db, 'EUR', SNAP.date)).toEqual({currency: 'EUR', date: SNAP.date, rate: SNAP.rates.EUR, source: SNAP.source})
    expect((await rateOn(db, 'GBP', undefined, TODAY))?.source).toBe('manual') // other kinds untouched
  })

  it('by label, exact or with *; ? and [ are literal', async () => {
    const db = fresh()
    await setRate(db, {currency: 'EUR', date: '2026-01-01', rate: 0.9, source: 'desk [a]'})
    await setRate(db, {currency: 'EUR', date: '2026-01-02', rate: 0.9, source: 'desk b'})
    await setRate(db, {currency: 'EUR', date: '2026-01-03', rate: 0.9, source: 'desk?'})
    expect((await removeRates(db, {source: parseSourceFilter('desk [a]')}, {today: TODAY})).removed).toBe(1)
    expect((await removeRates(db, {source: parseSourceFilter('desk?')}, {today: TODAY})).removed).toBe(1)
    expect((await removeRates(db, {source: parseSourceFilter('desk*')}, {today: TODAY})).removed).toBe(1)
    expect((await removeRates(db, {source: parseSourceFilter('desk*')}, {today: TODAY})).removed).toBe(0)
  })

  it('--before and --currency narrow it; a dry run reports and writes nothing', async () => {
    const db = fresh()
    for (const d of ['2001-01-01', '2010-01-01', '2020-01-01']) {
      await setRate(db, {currency: 'JPY', date: d, rate: 100, source: 'manual'})
      await setRate(db, {currency: 'CHF', date: d, rate: 1, source: 'manual'})
    }
    const before = dump(db.db)
    const dry = await removeRates(db, {before: '2015-01-01', currencies: ['JPY']}, {dryRun: true, today: TODAY})
    expect(dry).toMatchObject({currencies: [{currency: 'JPY', from: '2001-01-01', removed: 2, to: '2010-01-01'}], dryRun: true, removed: 2})
    expect(dump(db.db)).toBe(before)
    expect((await removeRates(db, {before: '2015-01-01', currencies: ['JPY']}, {today: TODAY})).removed).toBe(2)
    expect(count(db.db, "currency = 'JPY' AND source = 'manual'")).toBe(1)
    expect(count(db.db, "currency = 'CHF' AND source = 'manual'")).toBe(3)
  })

  it('refuses to leave a currency the store prices with without a rate usable today; --force does it and says so', async () => {
    const db = fresh()
    db.db.prepare(`INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES ('p', 'P', 1000, 'month', 1, 'x', 'x')`).run()
    db.db.prepare(`INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (1, 'CH', 'CHF', 900, 0)`).run()
    expect((await currenciesInUse(db)).get('CHF')).toEqual(['country prices'])
    const before = dump(db.db)
    let error: unknown
    try {
      await removeRates(db, {source: parseSourceFilter('snapshot')}, {today: TODAY})
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(OperationalError)
    expect((error as Error).message).toMatch(/refusing to remove \d+ rates: CHF \(country prices\) would have no FX rate usable today \(2099-01-01\); add one first \("pricectl fx set CHF RATE"/)
    expect((error as Error).message).toContain('--force')
    expect(dump(db.db)).toBe(before)
    // With a rate of the operator for CHF the snapshot can go; the others are listed.
    await setRate(db, {currency: 'CHF', date: '2020-01-01', rate: 0.9, source: 'manual'})
    const r = await removeRates(db, {source: parseSourceFilter('snapshot')}, {today: TODAY})
    expect(r.inUseWithoutRate).toEqual([])
    expect(r.withoutRate).toContain('EUR')
    expect(r.withoutRate).not.toContain('CHF')
    expect(count(db.db)).toBe(1)
    // --force: the last CHF rate goes, and the summary names what uses CHF.
    const forced = await removeRates(db, {source: parseSourceFilter('manual')}, {force: true, today: TODAY})
    expect(forced).toMatchObject({inUseWithoutRate: [{currency: 'CHF', uses: ['country prices']}], removed: 1, withoutRate: ['CHF']})
  })

  it('counts a rate dated after today as no rate (it is not usable yet)', async () => {
    const db = fresh()
    db.db.prepare(`INSERT INTO coupons (api_id, name, coupon_type, amount_minor, currency, status, created_at, updated_at) VALUES ('C', 'C', 'fixed_amount', 500, 'GBP', 'ACTIVE', 'x', 'x')`).run()
    await setRate(db, {currency: 'GBP', date: '2100-01-01', rate: 0.7, source: 'manual'})
    await expect(async () => await removeRates(db, {currencies: ['GBP'], source: parseSourceFilter('snapshot')}, {today: TODAY})).rejects.toThrow(/GBP \(fixed-amount coupons\)/)
  })
})

describe('fx delete', () => {
  it('deletes the operator\'s rates of a currency, never the snapshot\'s', async () => {
    const db = fresh()
    await setRate(db, {currency: 'EUR', date: '2031-01-01', rate: 2, source: 'manual'})
    await setRate(db, {currency: 'EUR', date: '2026-01-01', rate: 0.9, source: 'ECB eurofxref (x.csv)'})
    const one = await deleteRates(db, 'EUR', '2031-01-01', {today: TODAY})
    expect(one).toMatchObject({currencies: [{currency: 'EUR', removed: 1}], removed: 1, sources: [{kind: 'manual', removed: 1, source: 'manual'}]})
    const all = await deleteRates(db, 'EUR', undefined, {today: TODAY})
    expect(all.removed).toBe(1)
    expect(await rateOn(db, 'EUR', undefined, TODAY)).toMatchObject({rate: SNAP.rates.EUR, source: SNAP.source})
  })

  it('a rate of the operator on the snapshot\'s day: deleting it brings the snapshot\'s back', async () => {
    const db = fresh()
    await setRate(db, {currency: 'EUR', date: SNAP.date, rate: 0.5, source: 'manual'})
    const r = await deleteRates(db, 'EUR', SNAP.date, {today: TODAY})
    expect(r.restored).toEqual([{currency: 'EUR', date: SNAP.date, rate: SNAP.rates.EUR, source: SNAP.source}])
    expect((await storedRate(db, 'EUR', SNAP.date))?.source).toBe(SNAP.source)
  })

  it('nothing to delete is "not found", saying what is on file', async () => {
    const db = fresh()
    await expect(async () => await deleteRates(db, 'EUR', '2020-01-01', {today: TODAY})).rejects.toThrow(NotFoundError)
    await expect(async () => await deleteRates(db, 'EUR', SNAP.date, {today: TODAY})).rejects.toThrow(/the rate of that day is the bundled snapshot's, which "pricectl fx prune --source snapshot --currency EUR" removes/)
    await expect(async () => await deleteRates(db, 'EUR', undefined, {today: TODAY})).rejects.toThrow(/EUR only has the bundled snapshot's/)
  })
})
