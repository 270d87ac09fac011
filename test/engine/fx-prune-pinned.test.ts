import {afterEach, describe, expect, it} from 'vitest'

import {NotFoundError, OperationalError} from '../../src/errors.js'
import {currenciesInUse, deleteRates, describeRemoval, type RemovalSummary, removeRates} from '../../src/fx/prune.js'
import {setRate, storedRate} from '../../src/fx/repository.js'
import {defaultFxSnapshot} from '../../src/fx/snapshot.js'
import {parseSourceFilter} from '../../src/fx/sources.js'
import {clearFactors, setFactor} from '../../src/localization/factors.js'
import {DEFAULT_COUNTRY_SETTING} from '../../src/settings.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from '../../src/store/db.js'
import {tempStore} from '../helpers/run.js'

/**
 * What `fx delete` and `fx prune` tell the operator, word for word: the sentence on stdout,
 * the notes on stderr, the refusal and the not-found errors; and which snapshot rates come
 * back. The store is a fresh one (the bundled snapshot seeded), "today" fixed after it.
 */

const stores: {close(): Promise<void>}[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
})

const SNAP = defaultFxSnapshot()
const TODAY = '2099-01-01'
const SNAPSHOT = parseSourceFilter('snapshot')

function fresh(): Store {
  const s = openStore(tempStore())
  stores.push(s)
  return s
}

/** A fresh store without the bundled snapshot (nothing uses a currency yet, so nothing refuses). */
async function withoutSnapshot(): Promise<Store> {
  const s = fresh()
  await removeRates(s, {source: SNAPSHOT}, {today: TODAY})
  expect(await s.config.hasFxSource(SNAP.source)).toBe(false)
  return s
}

function countryPrice(s: Store, country: string, currency: string): void {
  if (!s.db.prepare(`SELECT 1 FROM products WHERE api_id = 'p'`).get()) {
    s.db.prepare(`INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES ('p', 'P', 1000, 'month', 1, 'x', 'x')`).run()
  }
  s.db.prepare(`INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (1, ?, ?, 900, 0)`).run(country, currency)
}

function fixedCoupon(s: Store, currency: string): void {
  s.db.prepare(`INSERT INTO coupons (api_id, name, coupon_type, amount_minor, currency, status, created_at, updated_at) VALUES ('C', 'C', 'fixed_amount', 500, ?, 'ACTIVE', 'x', 'x')`).run(currency)
}

async function thrown(fn: () => unknown): Promise<Error> {
  try {
    await fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected an error')
}

const summary = (over: Partial<RemovalSummary>): RemovalSummary => ({currencies: [], dryRun: false, inUseWithoutRate: [], removed: 0, restored: [], sources: [], today: TODAY, withoutRate: [], ...over})

describe('the sentence and the notes of a removal', () => {
  it('nothing matched', () => {
    expect(describeRemoval(summary({}))).toEqual({message: 'no rates matched; nothing removed', notes: []})
    expect(describeRemoval(summary({dryRun: true}))).toEqual({message: 'dry run: no rates matched; nothing removed', notes: []})
  })

  it('one rate of one currency from one source', () => {
    const s = summary({currencies: [{currency: 'EUR', from: '2026-01-01', removed: 1, to: '2026-01-01'}], removed: 1, sources: [{kind: 'manual', removed: 1, source: 'manual'}]})
    expect(describeRemoval(s)).toEqual({message: 'removed 1 rate of EUR, dated 2026-01-01, from manual', notes: []})
    expect(describeRemoval({...s, dryRun: true}).message).toBe('dry run: would remove 1 rate of EUR, dated 2026-01-01, from manual')
  })

  it('several currencies: the span runs from the earliest date to the latest, whichever currency has them; several sources are counted', () => {
    const s = summary({
      currencies: [
        {currency: 'CHF', from: '2026-02-01', removed: 2, to: '2026-03-01'},
        {currency: 'EUR', from: '2026-01-01', removed: 3, to: '2026-05-01'},
        {currency: 'JPY', from: '2026-01-15', removed: 1, to: '2026-04-01'},
      ],
      removed: 6,
      sources: [
        {kind: 'import', removed: 4, source: 'csv (a.csv)'},
        {kind: 'manual', removed: 2, source: 'manual'},
      ],
    })
    expect(describeRemoval(s).message).toBe('removed 6 rates of 3 currencies, dated 2026-01-01..2026-05-01, from csv (a.csv) (4), manual (2)')
    expect(describeRemoval({...s, dryRun: true}).message).toBe('dry run: would remove 6 rates of 3 currencies, dated 2026-01-01..2026-05-01, from csv (a.csv) (4), manual (2)')
  })

  it('the notes: snapshot rates put back, currencies in use left without a rate, then the others', () => {
    const s = summary({
      currencies: [{currency: 'CHF', from: SNAP.date, removed: 4, to: SNAP.date}],
      inUseWithoutRate: [
        {currency: 'CHF', uses: ['country prices']},
        {currency: 'EUR', uses: ['fixed-amount coupons', 'the default country']},
      ],
      removed: 4,
      restored: [
        {currency: 'GBP', date: SNAP.date, rate: 0.75, source: SNAP.source},
        {currency: 'JPY', date: SNAP.date, rate: 157, source: SNAP.source},
      ],
      sources: [{kind: 'manual', removed: 4, source: 'manual'}],
      withoutRate: ['CHF', 'EUR', 'NOK', 'SEK'],
    })
    expect(describeRemoval(s).notes).toEqual([
      `put back the bundled snapshot's rate of ${SNAP.date} for GBP, JPY (the removed rate had replaced it)`,
      'warning: CHF is used by country prices and has no FX rate usable today: prices and writes in it fail until you add one',
      'warning: EUR is used by fixed-amount coupons, the default country and has no FX rate usable today: prices and writes in it fail until you add one',
      'note: 2 currencies are now without a rate (NOK, SEK); requests priced in them fail until you add one',
    ])
    expect(describeRemoval({...s, dryRun: true}).notes).toEqual([
      `would put back the bundled snapshot's rate of ${SNAP.date} for GBP, JPY (the removed rate had replaced it)`,
      'warning: CHF is used by country prices and has no FX rate usable today: prices and writes in it fail until you add one',
      'warning: EUR is used by fixed-amount coupons, the default country and has no FX rate usable today: prices and writes in it fail until you add one',
      'note: 2 currencies would be without a rate (NOK, SEK); requests priced in them fail until you add one',
    ])
  })

  it('one other currency is one; twelve are listed, more end in "..."', () => {
    const note = (withoutRate: string[], dryRun = false) => describeRemoval(summary({dryRun, withoutRate})).notes
    expect(note(['NOK'])).toEqual(['note: 1 currency is now without a rate (NOK); requests priced in it fail until you add one'])
    expect(note(['NOK'], true)).toEqual(['note: 1 currency would be without a rate (NOK); requests priced in it fail until you add one'])
    const codes = ['AED', 'AUD', 'BRL', 'CAD', 'CHF', 'CNY', 'CZK', 'DKK', 'EUR', 'GBP', 'HKD', 'HUF', 'ILS']
    expect(note(codes.slice(0, 12))).toEqual([`note: 12 currencies are now without a rate (${codes.slice(0, 12).join(', ')}); requests priced in them fail until you add one`])
    expect(note(codes)).toEqual([`note: 13 currencies are now without a rate (${codes.slice(0, 12).join(', ')}, ...); requests priced in them fail until you add one`])
  })
})

describe('what uses a currency (a removal keeps it a rate)', () => {
  it('each currency once per use: the currency of a country with a factor, and of the default country', async () => {
    const s = fresh()
    countryPrice(s, 'CH', 'CHF')
    await setFactor(s, {country: 'DE', factor: 0.9, source: 'manual', year: null})
    await setFactor(s, {country: 'FR', factor: 0.8, source: 'manual', year: null})
    // No default country set: the fallback's (US), which never needs a rate.
    expect(Object.fromEntries(await currenciesInUse(s))).toEqual({CHF: ['country prices'], EUR: ['localization factors'], USD: ['the default country']})
    await s.config.saveSetting(DEFAULT_COUNTRY_SETTING, 'GB')
    expect(Object.fromEntries(await currenciesInUse(s))).toEqual({CHF: ['country prices'], EUR: ['localization factors'], GBP: ['the default country']})
    // A default country without a known currency adds nothing.
    await s.config.saveSetting(DEFAULT_COUNTRY_SETTING, 'XX')
    expect([...(await currenciesInUse(s)).keys()].sort()).toEqual(['CHF', 'EUR'])
  })

  it('a factor removed is a use gone: clearing one country keeps the others, clearing all removes them', async () => {
    const s = fresh()
    for (const country of ['DE', 'FR', 'IT']) await setFactor(s, {country, factor: 0.9, source: 'manual', year: null})
    expect(await clearFactors(s, ['DE', 'NL'])).toBe(1)
    expect((await currenciesInUse(s)).get('EUR')).toEqual(['localization factors'])
    expect((await s.config.localizationFactors()).map((f) => f.country)).toEqual(['FR', 'IT'])
    expect(await clearFactors(s)).toBe(2)
    expect((await currenciesInUse(s)).has('EUR')).toBe(false)
  })
})

describe('the refusal', () => {
  it('names the one rate, the currency, what uses it and the ways out', async () => {
    const s = await withoutSnapshot()
    await setRate(s, {currency: 'CHF', date: '2020-01-01', rate: 0.9, source: 'manual'})
    countryPrice(s, 'CH', 'CHF')
    const error = await thrown(async () => await deleteRates(s, 'CHF', undefined, {today: TODAY}))
    expect(error).toBeInstanceOf(OperationalError)
    expect(error.message).toBe(
      'refusing to remove 1 rate: CHF (country prices) would have no FX rate usable today (2099-01-01); add one first ("pricectl fx set CHF RATE" or "pricectl fx import FILE"), narrow the removal (--currency, --before), or pass --force',
    )
    expect((await storedRate(s, 'CHF', '2020-01-01'))?.rate).toBe(0.9)
  })

  it('several currencies in use, one with two uses; --force removes them and the notes say so', async () => {
    const s = fresh()
    countryPrice(s, 'CH', 'CHF')
    fixedCoupon(s, 'EUR')
    await s.config.saveSetting(DEFAULT_COUNTRY_SETTING, 'DE')
    const filter = {currencies: ['CHF', 'EUR', 'GBP'], source: SNAPSHOT}
    const error = await thrown(async () => await removeRates(s, filter, {today: TODAY}))
    expect(error.message).toBe(
      'refusing to remove 3 rates: CHF (country prices), EUR (fixed-amount coupons, the default country) would have no FX rate usable today (2099-01-01); add one first ("pricectl fx set CHF RATE" or "pricectl fx import FILE"), narrow the removal (--currency, --before), or pass --force',
    )
    const forced = await removeRates(s, filter, {force: true, today: TODAY})
    expect(forced).toMatchObject({
      inUseWithoutRate: [
        {currency: 'CHF', uses: ['country prices']},
        {currency: 'EUR', uses: ['fixed-amount coupons', 'the default country']},
      ],
      removed: 3,
      withoutRate: ['CHF', 'EUR', 'GBP'],
    })
    expect(describeRemoval(forced)).toEqual({
      message: `removed 3 rates of 3 currencies, dated ${SNAP.date}, from ${SNAP.source}`,
      notes: [
        'warning: CHF is used by country prices and has no FX rate usable today: prices and writes in it fail until you add one',
        'warning: EUR is used by fixed-amount coupons, the default country and has no FX rate usable today: prices and writes in it fail until you add one',
        'note: 1 currency is now without a rate (GBP); requests priced in it fail until you add one',
      ],
    })
  })

  it('currencies without a rate are listed in order of their codes', async () => {
    const s = await withoutSnapshot()
    for (const currency of ['SEK', 'CHF', 'NOK', 'AUD']) await setRate(s, {currency, date: '2020-01-01', rate: 2, source: 'manual'})
    expect((await removeRates(s, {source: parseSourceFilter('manual')}, {today: TODAY})).withoutRate).toEqual(['AUD', 'CHF', 'NOK', 'SEK'])
  })
})

describe('fx delete', () => {
  it('takes the named currency only', async () => {
    const s = fresh()
    await setRate(s, {currency: 'EUR', date: '2026-01-01', rate: 0.9, source: 'manual'})
    await setRate(s, {currency: 'GBP', date: '2026-01-01', rate: 0.7, source: 'manual'})
    expect(await deleteRates(s, 'EUR', undefined, {today: TODAY})).toMatchObject({currencies: [{currency: 'EUR', from: '2026-01-01', removed: 1, to: '2026-01-01'}], removed: 1})
    expect((await storedRate(s, 'GBP', '2026-01-01'))?.rate).toBe(0.7)
  })

  it('nothing of yours: the error says what is on file and what to run', async () => {
    const s = fresh()
    const cases: [string, string | undefined, string][] = [
      ['EUR', '2020-01-01', 'no rate of yours for EUR dated 2020-01-01: see "pricectl fx list --currency EUR --history"'],
      ['EUR', SNAP.date, `no rate of yours for EUR dated ${SNAP.date}: the rate of that day is the bundled snapshot's, which "pricectl fx prune --source snapshot --currency EUR" removes`],
      ['EUR', undefined, `no rate of yours for EUR: EUR only has the bundled snapshot's, which "pricectl fx prune --source snapshot --currency EUR" removes`],
      // XSU is a currency the bundled snapshot has no rate of.
      ['XSU', undefined, 'no rate of yours for XSU: see "pricectl fx list --currency XSU --history"'],
    ]
    for (const [currency, date, message] of cases) {
      const error = await thrown(async () => await deleteRates(s, currency, date, {today: TODAY}))
      expect(error).toBeInstanceOf(NotFoundError)
      expect(error.message).toBe(message)
    }
  })
})

describe('snapshot rates put back', () => {
  it('only for currencies the snapshot has a rate of', async () => {
    const s = fresh()
    await setRate(s, {currency: 'EUR', date: SNAP.date, rate: 0.5, source: 'manual'})
    await setRate(s, {currency: 'XSU', date: SNAP.date, rate: 3, source: 'manual'})
    const r = await removeRates(s, {source: parseSourceFilter('manual')}, {today: TODAY})
    expect(r.restored).toEqual([{currency: 'EUR', date: SNAP.date, rate: SNAP.rates.EUR, source: SNAP.source}])
    expect(r.withoutRate).toEqual(['XSU'])
    expect(await storedRate(s, 'XSU', SNAP.date)).toBeUndefined()
  })

  it('not when the same removal takes the snapshot\'s row of that day too', async () => {
    const s = fresh()
    await setRate(s, {currency: 'EUR', date: SNAP.date, rate: 0.5, source: 'manual'})
    const r = await removeRates(s, {currencies: ['EUR'], date: SNAP.date}, {today: TODAY})
    expect(r).toMatchObject({removed: 1, restored: [], withoutRate: ['EUR']})
    expect(await storedRate(s, 'EUR', SNAP.date)).toBeUndefined()
  })

  it('not once the snapshot itself was pruned', async () => {
    const s = await withoutSnapshot()
    await setRate(s, {currency: 'EUR', date: SNAP.date, rate: 0.5, source: 'manual'})
    expect((await deleteRates(s, 'EUR', SNAP.date, {today: TODAY})).restored).toEqual([])
    expect(await storedRate(s, 'EUR', SNAP.date)).toBeUndefined()
  })
})
