import {describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../src/errors.js'
import {describeRate, type FxRate, rateContext, rateOn, ratesOn, requireRate} from '../../src/fx/rates.js'
import {SNAPSHOT_PREFIX} from '../../src/fx/sources.js'
import type {SqliteStore as Store} from '../../src/store/db.js'
import {fxStores} from '../helpers/fx-stores.js'

/**
 * What `price explain` says of a rate (the "fx CUR" step: describeRate and rateContext) word
 * for word, the identity rate of USD, and requireRate's error (revenue writes in a currency
 * without a rate).
 */

const SNAP = `${SNAPSHOT_PREFIX}@fawazahmed0/currency-api 9.9.9)`
/** A store with only the given rates (the bundled snapshot removed). */
const storeWith = fxStores()

const used = async (s: Store, today: string, currency = 'EUR'): Promise<FxRate> => (await rateOn(s, currency, undefined, today))!

describe('USD', () => {
  it('is 1, labelled identity, dated the day asked, or the date of a USD row on file', async () => {
    const none = await storeWith([])
    expect(await rateOn(none, 'USD', '2026-05-01', '2026-06-01')).toEqual({currency: 'USD', date: '2026-05-01', rate: 1, source: 'identity'})
    expect((await ratesOn(none, '2026-05-01', '2026-06-01')).get('USD')).toEqual({currency: 'USD', date: '2026-05-01', rate: 1, source: 'identity'})
    const stored = await storeWith([{currency: 'USD', date: '2026-01-01', rate: 1, source: SNAP}])
    expect((await ratesOn(stored, '2026-05-01', '2026-06-01')).get('USD')).toEqual({currency: 'USD', date: '2026-01-01', rate: 1, source: 'identity'})
  })

  it('is the base in an explain step, with no notes beside it', async () => {
    const s = await storeWith([
      {currency: 'USD', date: '2026-01-01', rate: 1, source: SNAP},
      {currency: 'USD', date: '2031-01-01', rate: 1, source: 'manual'},
    ])
    const usd = await used(s, '2026-06-01', 'USD')
    expect(describeRate(usd)).toBe('1 USD/USD (the base)')
    expect(await rateContext(s, usd, '2026-06-01')).toEqual([])
  })
})

describe('requireRate', () => {
  it('returns the rate of the day; without one, the error names the currency, the day and the fix', async () => {
    process.env.PRICECTL_NOW = '2026-06-01T00:00:00Z'
    const s = await storeWith([{date: '2026-04-10', rate: 0.9, source: 'manual'}])
    expect(await requireRate(s, 'EUR', '2026-05-01')).toEqual({currency: 'EUR', date: '2026-04-10', rate: 0.9, source: 'manual'})
    expect(await requireRate(s, 'EUR')).toEqual({currency: 'EUR', date: '2026-04-10', rate: 0.9, source: 'manual'})
    let error: unknown
    try {
      await requireRate(s, 'GBP', '2026-05-01')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as Error).message).toBe('no FX rate for GBP usable on 2026-05-01: add one with "pricectl fx set GBP RATE" or "pricectl fx import FILE"')
  })
})

describe('the explain step of a rate', () => {
  it('value, currency, date, source and its kind', () => {
    expect(describeRate({currency: 'EUR', date: '2026-04-10', rate: 0.92, source: 'manual'})).toBe('0.92 EUR/USD dated 2026-04-10 from "manual" (operator rate)')
    expect(describeRate({currency: 'EUR', date: '2026-04-10', rate: 0.92, source: 'ECB eurofxref (hist.csv)'})).toBe('0.92 EUR/USD dated 2026-04-10 from "ECB eurofxref (hist.csv)" (operator import)')
    expect(describeRate({currency: 'EUR', date: '2026-04-10', rate: 0.92, source: SNAP})).toBe(`0.92 EUR/USD dated 2026-04-10 from "${SNAP}" (bundled snapshot)`)
  })

  it('an operator rate newer than the snapshot: what it outranks', async () => {
    const s = await storeWith([
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2026-10-01', rate: 0.9, source: 'manual'},
    ])
    expect(await rateContext(s, await used(s, '2026-11-23'), '2026-11-23')).toEqual(["outranks the bundled snapshot's 0.88 dated 2026-09-29"])
  })

  it('an operator rate older than the snapshot: it still wins, and the note says so', async () => {
    const s = await storeWith([
      {date: '2026-04-10', rate: 0.85, source: 'ECB eurofxref (hist.csv)'},
      {date: '2026-09-29', rate: 0.88, source: SNAP},
    ])
    expect(await rateContext(s, await used(s, '2026-11-23'), '2026-11-23')).toEqual(["outranks the bundled snapshot's 0.88 dated 2026-09-29 (operator rates win whatever their dates)"])
  })

  it('an operator rate of a currency the snapshot has no rate of: nothing it outranks', async () => {
    const s = await storeWith([{date: '2026-10-01', rate: 0.9, source: 'manual'}])
    expect(await rateContext(s, await used(s, '2026-11-23'), '2026-11-23')).toEqual([])
  })

  it('the snapshot used: nothing it outranks; a rate scheduled after today is named', async () => {
    const s = await storeWith([
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2031-01-01', rate: 2, source: 'manual'},
    ])
    const r = await used(s, '2026-11-23')
    expect(r.source).toBe(SNAP)
    expect(await rateContext(s, r, '2026-11-23')).toEqual(['2 from "manual" is scheduled from 2031-01-01, not used before then'])
  })

  it('the clock before the snapshot\'s date: the snapshot is the floor, and the note says why a later rate is used', async () => {
    const s = await storeWith([{date: '2026-09-29', rate: 0.88, source: SNAP}])
    expect(await rateContext(s, await used(s, '2026-03-01'), '2026-03-01')).toEqual(['dated after today (2026-03-01): no earlier rate is on file, so the bundled snapshot is used as the floor'])
    // Dated today itself is no "after today".
    expect(await rateContext(s, await used(s, '2026-09-29'), '2026-09-29')).toEqual([])
  })
})
