import fc from 'fast-check'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {type FxRate, rateOn, ratesOn, requireRate} from '../../src/fx/rates.js'
import {listRates, setRate} from '../../src/fx/repository.js'
import {fxKind, SNAPSHOT_PREFIX, type SourceFilter} from '../../src/fx/sources.js'
import {FxTable} from '../../src/revenue/money.js'
import type {StorePort} from '../../src/store/port.js'
import type {FxRateFilter} from '../../src/store/port/config.js'
import {ADAPTERS} from '../helpers/adapters.js'

/**
 * The rules of fx_rates that the adapters implement in SQL, on every adapter: which rate
 * converts a currency on a day (docs/fx-localization-geoip.md, "Which rate is used"), the
 * neighbouring lookups (the next scheduled rate, the latest snapshot rate, histories in
 * their documented order), the removal filters of fx delete and fx prune, and the upsert.
 * The properties compare the port with plain reference models over random sets of rates:
 * a query that sorts the wrong way, or reads a label's kind differently from fxKind(),
 * fails here on the adapter that has it.
 */

const SNAP = `${SNAPSHOT_PREFIX}@fawazahmed0/currency-api 9.9.9)`

/** Labels by kind, with LIKE and GLOB metacharacters and near misses of the kind patterns. */
const LABELS = {
  import: ['ECB eurofxref (hist.csv)', 'csv (rates.csv)', 'json (usd.json)', 'csv ()'],
  manual: ['manual', 'treasury desk', 'csv (', 'json x)', 'ecb eurofxref (x)', 'Default snapshot (x)', 'desk_50%', 'desk [a]', 'desk?', 'back\\slash'],
  snapshot: [SNAP, `${SNAPSHOT_PREFIX}older 1.0)`],
}
const ALL_LABELS = [...LABELS.snapshot, ...LABELS.import, ...LABELS.manual]

const CURRENCIES = ['CHF', 'EUR', 'JPY']
/** Asked about too, never stored. */
const ABSENT = 'GBP'

const DAY0 = Date.UTC(2026, 0, 1)
const dayOf = (n: number) => new Date(DAY0 + n * 86_400_000).toISOString().slice(0, 10)
/** Rates are dated every 5th day, so a day asked about is often a rate's own day (the tie). */
const rateDay = fc.integer({max: 30, min: 0}).map((n) => dayOf(n * 5))
/** Days asked about: before, on, between and after the rates' dates. */
const anyDay = fc.integer({max: 160, min: -10}).map(dayOf)
/** Quarters: sums and means of them are exact doubles on every adapter. */
const rateValue = fc.integer({max: 4000, min: 1}).map((n) => n / 4)
const label = fc.oneof(fc.constantFrom(...LABELS.snapshot), fc.constantFrom(...LABELS.import), fc.constantFrom(...LABELS.manual))

const row: fc.Arbitrary<FxRate> = fc.record({currency: fc.constantFrom(...CURRENCIES), date: rateDay, rate: rateValue, source: label})
/** A store's rows: one per currency and day (the primary key). */
const rows = fc.uniqueArray(row, {maxLength: 14, selector: (r) => `${r.currency} ${r.date}`})

const isSnapshot = (r: FxRate) => fxKind(r.source) === 'snapshot'
const byDate = (a: FxRate, b: FxRate) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0)
const byCurrency = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const ofCurrency = (all: FxRate[], currency: string) => all.filter((r) => r.currency === currency).sort(byDate)

/** The reference of the rule (src/fx/rates.ts), step by step over plain arrays. */
function expectedRate(all: FxRate[], currency: string, day: string, today: string): FxRate | undefined {
  const mine = ofCurrency(all, currency)
  const operator = mine.filter((r) => !isSnapshot(r))
  const snapshot = mine.filter((r) => isSnapshot(r))
  const latestOnOrBefore = (xs: FxRate[]) => xs.filter((r) => r.date <= day).at(-1)
  return latestOnOrBefore(operator) ?? latestOnOrBefore(snapshot) ?? operator.find((r) => r.date <= today) ?? snapshot[0]
}

/** Whether a removal filter takes a row (FxRateFilter's documentation), `*` the only wildcard of a label. */
function filterTakes(filter: FxRateFilter, r: FxRate): boolean {
  if (filter.currencies?.length && !filter.currencies.includes(r.currency)) return false
  if (filter.date && r.date !== filter.date) return false
  if (filter.before && !(r.date < filter.before)) return false
  if (filter.operatorOnly && isSnapshot(r)) return false
  if (filter.source) {
    if ('kind' in filter.source) return fxKind(r.source) === filter.source.kind
    const {label: text} = filter.source
    if (!text.includes('*')) return r.source === text
    const pattern = text
      .split('*')
      .map((part) => part.replaceAll(/[$()*+.?[\\\]^{|}]/g, '\\$&'))
      .join('.*')
    return new RegExp(`^${pattern}$`, 's').test(r.source)
  }
  return true
}

const noon = (day: string) => Date.parse(`${day}T12:00:00Z`) / 1000

describe.each(ADAPTERS)('fx rates contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeAll(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterAll(() => cleanup())
  afterEach(() => {
    delete process.env.PRICECTL_NOW
  })

  /** Only these rates on file (the bundled snapshot removed). */
  async function only(rates: readonly FxRate[]): Promise<void> {
    await store.transaction(
      async () => {
        await store.config.deleteFxRates({})
        await store.config.saveFxRates(rates)
      },
      {write: true},
    )
  }

  /** Only these rates, written one by one through fx/repository.ts as `fx set` does. */
  async function storeWith(rates: {currency?: string; date: string; rate: number; source: string}[]): Promise<StorePort> {
    await only([])
    for (const r of rates) await setRate(store, {currency: r.currency ?? 'EUR', date: r.date, rate: r.rate, source: r.source})
    return store
  }

  describe('which rate is used: pricing today', () => {
    it('an operator rate older than the snapshot outranks it (the ECB import case)', async () => {
      const db = await storeWith([
        {date: '2026-04-13', rate: 0.85, source: 'ECB eurofxref (eurofxref.csv)'},
        {date: '2026-09-29', rate: 0.88, source: SNAP},
      ])
      expect(await rateOn(db, 'EUR', undefined, '2026-11-23')).toMatchObject({date: '2026-04-13', rate: 0.85})
      expect((await ratesOn(db, undefined, '2026-11-23')).get('EUR')).toMatchObject({date: '2026-04-13', rate: 0.85})
    })

    it('a rate dated after today is not used before its date, and is from it (fx set EUR 2 --date 2031-01-01)', async () => {
      const db = await storeWith([
        {date: '2026-09-29', rate: 0.88, source: SNAP},
        {date: '2026-05-01', rate: 0.9, source: 'manual'},
        {date: '2031-01-01', rate: 2, source: 'manual'},
      ])
      expect((await rateOn(db, 'EUR', undefined, '2026-11-23'))?.rate).toBe(0.9)
      expect((await rateOn(db, 'EUR', undefined, '2030-12-31'))?.rate).toBe(0.9)
      expect((await rateOn(db, 'EUR', undefined, '2031-01-01'))?.rate).toBe(2)
      expect((await ratesOn(db, undefined, '2026-11-23')).get('EUR')?.rate).toBe(0.9)
      expect((await ratesOn(db, undefined, '2031-01-01')).get('EUR')?.rate).toBe(2)
      expect(await db.config.nextOperatorRate('EUR', '2026-11-23')).toEqual({currency: 'EUR', date: '2031-01-01', rate: 2, source: 'manual'})
      expect(await db.config.nextOperatorRate('EUR', '2031-01-01')).toBeUndefined()
    })

    it('only a future rate of the operator beside the snapshot: the snapshot prices until that date', async () => {
      const db = await storeWith([
        {date: '2026-09-29', rate: 0.88, source: SNAP},
        {date: '2031-01-01', rate: 2, source: 'manual'},
      ])
      expect((await rateOn(db, 'EUR', undefined, '2026-11-23'))?.rate).toBe(0.88)
    })

    it('only future rates: none usable today (an error naming the currency and the fix)', async () => {
      const db = await storeWith([{date: '2031-01-01', rate: 2, source: 'manual'}])
      expect(await rateOn(db, 'EUR', undefined, '2026-11-23')).toBeUndefined()
      expect((await ratesOn(db, undefined, '2026-11-23')).has('EUR')).toBe(false)
      process.env.PRICECTL_NOW = '2026-11-23T00:00:00Z'
      await expect(async () => await requireRate(db, 'EUR')).rejects.toThrow(/no FX rate for EUR: add one with "pricectl fx set EUR RATE"/)
    })

    it('the snapshot is the floor when the clock is set before its date', async () => {
      const db = await storeWith([{date: '2026-09-29', rate: 0.88, source: SNAP}])
      expect((await rateOn(db, 'EUR', undefined, '2026-03-01'))?.rate).toBe(0.88)
      expect((await ratesOn(db, undefined, '2026-03-01')).get('EUR')?.rate).toBe(0.88)
    })

    it('the latest of several snapshot rates, and the earliest as the floor', async () => {
      const db = await storeWith([
        {date: '2026-01-01', rate: 0.8, source: `${SNAPSHOT_PREFIX}older 1.0)`},
        {date: '2026-06-01', rate: 0.85, source: SNAP},
        {date: '2026-09-01', rate: 0.9, source: SNAP},
      ])
      expect((await rateOn(db, 'EUR', undefined, '2026-07-01'))?.rate).toBe(0.85)
      expect((await rateOn(db, 'EUR', undefined, '2026-09-01'))?.rate).toBe(0.9)
      expect((await rateOn(db, 'EUR', undefined, '2025-01-01'))?.rate).toBe(0.8)
      expect((await db.config.latestSnapshotRate('EUR'))?.rate).toBe(0.9)
    })

    it('USD is 1 whatever is on file', async () => {
      const db = await storeWith([])
      expect((await rateOn(db, 'USD'))?.rate).toBe(1)
      expect((await ratesOn(db)).get('USD')?.rate).toBe(1)
    })
  })

  describe('which rate is used: revenue on a created day', () => {
    const history = [
      {date: '2020-01-01', rate: 0.8, source: 'ECB eurofxref (hist.csv)'},
      {date: '2024-01-01', rate: 0.9, source: 'ECB eurofxref (hist.csv)'},
      {date: '2025-01-01', rate: 0.95, source: SNAP},
      {date: '2026-06-01', rate: 0.7, source: 'manual'},
      {date: '2031-01-01', rate: 2, source: 'manual'},
    ]

    it.each([
      ['2024-06-01', 0.9, 'the operator\'s nearest earlier rate'],
      ['2025-06-01', 0.9, 'the operator\'s rate outranks a later snapshot rate'],
      ['2026-06-01', 0.7, 'a rate applies from its own date'],
      ['2026-05-31', 0.9, 'and not the day before it'],
      ['2019-01-01', 0.8, 'older than every rate: the operator\'s earliest'],
      ['2031-02-01', 2, 'a record dated after a scheduled rate converts at it'],
    ])('%s -> %s (%s)', async (day, rate) => {
      const db = await storeWith(history)
      expect((await rateOn(db, 'EUR', day, '2026-11-23'))?.rate).toBe(rate)
      const table = new FxTable(db.revenue, '2026-11-23')
      await table.load('EUR')
      expect(table.rate('EUR', noon(day))).toBe(rate)
    })

    it('the snapshot serves days before the operator\'s first rate when it is dated on or before them', async () => {
      const d = await storeWith([
        {date: '2025-01-01', rate: 0.95, source: SNAP},
        {date: '2026-06-01', rate: 0.7, source: 'manual'},
      ])
      expect((await rateOn(d, 'EUR', '2025-06-01', '2026-11-23'))?.rate).toBe(0.95)
      expect((await rateOn(d, 'EUR', '2024-06-01', '2026-11-23'))?.rate).toBe(0.7) // operator's earliest, dated before today
    })

    it('a future rate is no fallback for older days', async () => {
      const d = await storeWith([
        {date: '2025-01-01', rate: 0.95, source: SNAP},
        {date: '2031-01-01', rate: 2, source: 'manual'},
      ])
      expect((await rateOn(d, 'EUR', '2020-01-01', '2026-11-23'))?.rate).toBe(0.95)
    })

    it('the operator\'s earliest rate is the fallback only when dated on or before today (today itself included)', async () => {
      const d = await storeWith([{date: '2026-11-23', rate: 0.7, source: 'manual'}])
      expect((await rateOn(d, 'EUR', '2020-01-01', '2026-11-23'))?.rate).toBe(0.7)
      expect(await rateOn(d, 'EUR', '2020-01-01', '2026-11-22')).toBeUndefined()
    })
  })

  describe('fx list', () => {
    it('kind and status today of each rate', async () => {
      const db = await storeWith([
        {date: '2026-04-10', rate: 0.86, source: 'ECB eurofxref (h.csv)'},
        {date: '2026-04-13', rate: 0.85, source: 'ECB eurofxref (h.csv)'},
        {date: '2026-09-29', rate: 0.88, source: SNAP},
        {date: '2031-01-01', rate: 2, source: 'manual'},
        {currency: 'GBP', date: '2026-09-29', rate: 0.75, source: SNAP},
      ])
      const today = '2026-11-23'
      expect((await listRates(db, {today})).filter((r) => r.currency !== 'USD')).toEqual([
        {currency: 'EUR', date: '2026-04-13', kind: 'import', rate: 0.85, source: 'ECB eurofxref (h.csv)', status: 'current'},
        {currency: 'EUR', date: '2031-01-01', kind: 'manual', rate: 2, source: 'manual', status: 'scheduled'},
        {currency: 'GBP', date: '2026-09-29', kind: 'snapshot', rate: 0.75, source: SNAP, status: 'current'},
      ])
      expect((await listRates(db, {currency: 'EUR', history: true, today})).map((r) => `${r.date} ${r.status}`)).toEqual([
        '2031-01-01 scheduled',
        '2026-09-29 outranked',
        '2026-04-13 current',
        '2026-04-10 past',
      ])
      expect(await listRates(db, {currency: 'EUR', date: '2031-06-01', today})).toEqual([expect.objectContaining({date: '2031-01-01', rate: 2})])
    })
  })

  describe('properties against reference models', () => {
    it('rateOn, ratesOn (port and fx/rates.ts) and FxTable (revenue) follow the rule for any rates, day and today', async () => {
      await fc.assert(
        fc.asyncProperty(rows, anyDay, anyDay, async (all, day, today) => {
          await only(all)
          const expected = [...CURRENCIES, ABSENT].map((c) => expectedRate(all, c, day, today))
          const table = new FxTable(store.revenue, today)
          await table.load(...CURRENCIES, ABSENT)
          for (const [i, currency] of [...CURRENCIES, ABSENT].entries()) {
            expect(await store.config.rateOn(currency, day, today), currency).toEqual(expected[i])
            expect(await rateOn(store, currency, day, today)).toEqual(expected[i])
            expect(table.rate(currency, noon(day)), currency).toBe(expected[i]?.rate)
          }
          const wanted = expected.filter((r): r is FxRate => r !== undefined)
          expect(await store.config.ratesOn(day, today)).toEqual(wanted)
          const map = await ratesOn(store, day, today)
          for (const r of wanted) expect(map.get(r.currency)).toEqual(r)
          expect(map.has(ABSENT)).toBe(false)
        }),
        {numRuns: 100},
      )
    })

    it('the lookups beside the rule: next scheduled rate, latest snapshot rate, latest stored rate, histories in order', async () => {
      await fc.assert(
        fc.asyncProperty(rows, anyDay, anyDay, async (all, day, other) => {
          await only(all)
          const sorted = [...all].sort((a, b) => byCurrency(a.currency, b.currency) || byDate(a, b))
          for (const currency of [...CURRENCIES, ABSENT]) {
            const mine = ofCurrency(all, currency)
            const operator = mine.filter((r) => !isSnapshot(r))
            const snapshot = mine.filter((r) => isSnapshot(r))
            expect(await store.config.nextOperatorRate(currency, day), currency).toEqual(operator.find((r) => r.date > day))
            expect(await store.config.latestSnapshotRate(currency)).toEqual(snapshot.at(-1))
            expect(await store.config.latestStoredRate(currency, day)).toEqual(mine.filter((r) => r.date <= day).at(-1))
            expect(await store.config.fxScheduled(day, currency)).toEqual(operator.filter((r) => r.date > day))
            expect(await store.config.fxHistory({currency})).toEqual([...mine].reverse())
            expect(await store.config.fxHistory({currency, onOrBefore: day})).toEqual(mine.filter((r) => r.date <= day).reverse())
            expect(await store.revenue.fxHistory(currency)).toEqual(mine.map((r) => ({date: r.date, rate: r.rate, snapshot: isSnapshot(r)})))
            for (const r of mine) expect(await store.config.storedRate(currency, r.date)).toEqual(r)
            expect(await store.config.storedRate(currency, day)).toEqual(mine.find((r) => r.date === day))
            const [from, to] = day <= other ? [day, other] : [other, day]
            const inRange = mine.filter((r) => r.date >= from && r.date <= to)
            expect(await store.config.fxAverage(currency, from, to)).toEqual(
              inRange.length === 0 ? undefined : {days: inRange.length, rate: inRange.reduce((s, r) => s + r.rate, 0) / inRange.length},
            )
            expect(await store.config.hasOperatorRateBetween(currency, from, to)).toBe(operator.some((r) => r.date > from && r.date <= to))
            const snapshotDay = await store.config.snapshotDate(currency)
            if (snapshot.length === 0) expect(snapshotDay).toBeUndefined()
            else expect(snapshot.map((r) => r.date)).toContain(snapshotDay)
            expect(await store.config.snapshotDate(currency, day)).toBe(snapshot.find((r) => r.date === day)?.date)
          }
          expect(await store.config.fxScheduled(day)).toEqual(sorted.filter((r) => !isSnapshot(r) && r.date > day))
          const newestFirst = [...all].sort((a, b) => byCurrency(a.currency, b.currency) || byDate(b, a))
          expect(await store.config.fxHistory({})).toEqual(newestFirst)
          expect(await store.config.fxHistory({onOrBefore: day})).toEqual(newestFirst.filter((r) => r.date <= day))
          expect(await store.config.hasFxSource(SNAP)).toBe(all.some((r) => r.source === SNAP))
        }),
        {numRuns: 50},
      )
    })

    const sourceFilter: fc.Arbitrary<SourceFilter> = fc.oneof(
      fc.constantFrom('snapshot' as const, 'manual' as const, 'import' as const).map((kind) => ({kind})),
      fc.constantFrom(...ALL_LABELS).map((l) => ({label: l})),
      // Wildcard patterns: pieces of the labels (with their LIKE and GLOB metacharacters) around `*`.
      fc
        .tuple(fc.constantFrom(...ALL_LABELS), fc.nat(12), fc.nat(12), fc.constantFrom('prefix', 'suffix', 'inside', 'around'))
        .map(([l, a, b, where]) => {
          const [i, j] = a <= b ? [a, b] : [b, a]
          const piece = l.slice(Math.min(i, l.length), Math.min(j, l.length))
          const label = where === 'prefix' ? `${piece}*` : where === 'suffix' ? `*${piece}` : where === 'inside' ? `${l.slice(0, i)}*${l.slice(j)}` : `*${piece}*`
          return {label}
        }),
    )
    const removal: fc.Arbitrary<FxRateFilter> = fc.record(
      {
        before: anyDay,
        currencies: fc.subarray([...CURRENCIES, ABSENT]),
        date: rateDay,
        operatorOnly: fc.boolean(),
        source: sourceFilter,
      },
      {requiredKeys: []},
    )

    it('removal filters (fx delete, fx prune): what matches, what the filter takes, what is removed', async () => {
      await fc.assert(
        fc.asyncProperty(rows, removal, rateDay, async (all, filter, day) => {
          await only(all)
          const taken = all.filter((r) => filterTakes(filter, r))
          const kept = all.filter((r) => !filterTakes(filter, r))
          const currencies = [...new Set(taken.map((r) => r.currency))].sort(byCurrency).map((currency) => {
            const dates = taken.filter((r) => r.currency === currency).map((r) => r.date).sort()
            return {currency, from: dates[0], removed: dates.length, to: dates.at(-1)}
          })
          const sources = [...new Set(taken.map((r) => r.source))].sort(byCurrency).map((source) => ({removed: taken.filter((r) => r.source === source).length, source}))
          expect(await store.config.fxMatching(filter)).toEqual({currencies, sources})
          for (const r of all) expect(await store.config.fxFilterTakes(filter, r), `${JSON.stringify(filter)} ${r.source}`).toBe(filterTakes(filter, r))
          expect([...await store.config.fxOperatorCurrenciesOn(filter, day)].sort(byCurrency)).toEqual(
            [...new Set(taken.filter((r) => r.date === day && !isSnapshot(r)).map((r) => r.currency))].sort(byCurrency),
          )
          let removed = 0
          await store.transaction(async () => (removed = await store.config.deleteFxRates(filter)), {write: true})
          expect(removed).toBe(taken.length)
          expect(await store.config.fxHistory({})).toEqual(kept.sort((a, b) => byCurrency(a.currency, b.currency) || byDate(b, a)))
        }),
        {numRuns: 100},
      )
    })

    it('the SQL and the TypeScript read the same kind from any label', async () => {
      const labels = fc.oneof(
        fc.string(),
        fc.constantFrom('manual', 'ECB eurofxref (x.csv)', 'csv (a.csv)', 'json (usd.json)', 'csv (', 'json x)', 'ecb eurofxref (x)', SNAP, 'Default snapshot (x)', 'csv (a)\n', 'csv (a)\nb'),
        fc.tuple(fc.constantFrom('csv (', 'json (', 'ECB eurofxref (', 'default snapshot ('), fc.string(), fc.constantFrom(')', '', ') ', ')\n')).map((p) => p.join('')),
      )
      await fc.assert(
        fc.asyncProperty(labels, async (source) => {
          const r = {currency: 'EUR', date: '2026-01-01', rate: 1, source}
          const kind = fxKind(source)
          for (const k of ['snapshot', 'manual', 'import'] as const) expect(await store.config.fxFilterTakes({source: {kind: k}}, r), `${JSON.stringify(source)} ${k}`).toBe(k === kind)
          expect(await store.config.fxFilterTakes({operatorOnly: true}, r)).toBe(kind !== 'snapshot')
        }),
        {numRuns: 200},
      )
    })

    it('saving rates: the row of a currency and day is replaced, the last write wins, unchanged rows are not counted', async () => {
      const write = fc.record({currency: fc.constantFrom(...CURRENCIES), date: fc.integer({max: 4, min: 0}).map((n) => dayOf(n * 5)), rate: fc.constantFrom(0.5, 1, 2), source: fc.constantFrom('manual', SNAP, 'csv (a.csv)')})
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(write, {maxLength: 8, selector: (r) => `${r.currency} ${r.date}`}), fc.array(write, {maxLength: 10}), async (before, batch) => {
          await only(before)
          const model = new Map(before.map((r) => [`${r.currency} ${r.date}`, r]))
          let changed = 0
          for (const r of batch) {
            const key = `${r.currency} ${r.date}`
            const old = model.get(key)
            if (!old || old.rate !== r.rate || old.source !== r.source) changed++
            model.set(key, r)
          }
          let written = 0
          await store.transaction(async () => (written = await store.config.saveFxRates(batch)), {write: true})
          expect(written).toBe(changed)
          expect(await store.config.fxHistory({})).toEqual([...model.values()].sort((a, b) => byCurrency(a.currency, b.currency) || byDate(b, a)))
        }),
        {numRuns: 60},
      )
    })
  })
})
