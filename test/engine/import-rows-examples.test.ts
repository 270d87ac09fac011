import {describe, expect, it} from 'vitest'

import {parseInterval} from '../../src/import/intervals.js'
import {countReason, reasonKind, sortedReasons} from '../../src/import/reasons.js'

/**
 * Fixed examples of the import's row rules (docs/revenue.md, "Imports"): reject reasons and
 * their kinds, and the mapping of export rows, at the edges mutation testing
 * (`npm run mutate`, docs/hardening.md) showed no other test pinned.
 */

describe('reject reason kinds (the summary\'s rejected_by_reason)', () => {
  it.each([
    ['unknown product "prod_x" in Product (no api_id matches; ...)', 'unknown product'],
    ['ambiguous product "prod_x" in Product: ...', 'ambiguous product (a price of several products)'],
    ['no price matches product "prod_x" ...', 'no price of the product matches the amount'],
    ['missing product: Product is empty (pass --product API_ID for rows without one)', 'missing product'],
    ['bad date "2026-13-45" in Created date (UTC) (month 13; ...)', 'bad date'],
    ['missing date: Created is empty', 'missing date'],
    ['bad amount "1,5" in Amount: has ","...', 'bad amount'],
    ['currency: unknown currency "XYZ" in Currency (expected an ISO 4217 code such as USD)', 'unknown currency'],
    ['unknown status "odd" in Status (expected one of paid, failed)', 'unknown status'],
    ['missing status: Status is empty', 'missing status'],
    ['missing id: id is empty', 'missing id'],
    ['missing user id: Customer ID is empty', 'missing user id'],
    ['no FX rate for JPY (add one with "pricectl fx set JPY RATE")', 'no FX rate for JPY'],
    ['expected 12 columns, got 11', 'wrong number of columns'],
    ['unreadable CSV record: unclosed quote', 'unreadable CSV record'],
    ['not valid UTF-8 at byte 17', 'not valid UTF-8'],
    ['record is longer than 1 MiB', 'record too long'],
    ['amount_refunded: 12.00 is more than the amount 10.00', 'refund larger than the amount'],
    ['bad interval count "0" in Interval count', 'bad interval count'],
    ['bad interval "fortnight" in Interval (expected day, week, month or year ...)', 'bad interval'],
    ['bad quantity "x" in Quantity', 'bad quantity'],
  ])('%s -> %s', (reason, kind) => {
    expect(reasonKind(reason)).toBe(kind)
  })

  it('an unknown reason is its text up to its first value or note, numbers as N, without trailing punctuation', () => {
    expect(reasonKind('amount 12.50 x quantity 3 is too large')).toBe('amount N x quantity N is too large')
    expect(reasonKind('origin_id: "x" is too long')).toBe('origin_id')
    expect(reasonKind('status: expected one of a, b (got c)')).toBe('status: expected one of a, b')
    expect(reasonKind('country: must be a code; got "Narnia"')).toBe('country: must be a code')
    expect(reasonKind('amount: expected a number, got -3.5')).toBe('amount: expected a number')
    expect(reasonKind('value -7 is odd')).toBe('value N is odd')
    expect(reasonKind('')).toBe('other')
    expect(reasonKind('"quoted first')).toBe('other')
    const long = `${'x'.repeat(100)} (note)`
    expect(reasonKind(long)).toBe(`${'x'.repeat(79)}…`)
    expect(reasonKind('y'.repeat(80))).toBe('y'.repeat(80))
  })

  it('counts add up per kind; the summary lists the most frequent first, ties by name', () => {
    const counts: Record<string, number> = {}
    for (const r of ['missing id: a', 'bad date "1"', 'missing id: b', 'bad amount "2"', 'bad date "3"', 'bad amount "4"', 'missing date: c']) countReason(counts, r)
    expect(counts).toEqual({'bad amount': 2, 'bad date': 2, 'missing date': 1, 'missing id': 2})
    expect(Object.entries(sortedReasons(counts))).toEqual([
      ['bad amount', 2],
      ['bad date', 2],
      ['missing id', 2],
      ['missing date', 1],
    ])
  })
})

describe('interval cells', () => {
  it.each([
    ['month', {count: 1, interval: 'month'}],
    ['Months', {count: 1, interval: 'month'}],
    [' 3 months ', {count: 3, interval: 'month'}],
    ['3-month', {count: 3, interval: 'month'}],
    ['3month', {count: 3, interval: 'month'}],
    ['every 2 weeks', {count: 2, interval: 'week'}],
    ['Every week', {count: 1, interval: 'week'}],
    ['12 year', {count: 12, interval: 'year'}],
    ['day', {count: 1, interval: 'day'}],
    ['Quarterly', {count: 3, interval: 'month'}],
    ['annually', {count: 1, interval: 'year'}],
    ['annual', {count: 1, interval: 'year'}],
    ['yearly', {count: 1, interval: 'year'}],
    ['weekly', {count: 1, interval: 'week'}],
    ['daily', {count: 1, interval: 'day'}],
    ['monthly', {count: 1, interval: 'month'}],
    ['every  2 weeks', {count: 2, interval: 'week'}],
    ['3 - months', {count: 3, interval: 'month'}],
  ])('%j is %j', (cell, interval) => {
    expect(parseInterval(cell)).toEqual(interval)
  })

  it.each(['0 months', 'fortnight', 'every', 'months 3', '2.5 months', 'every2 weeks', 'x month', 'monthsly', ''])('%j is no interval', (cell) => {
    expect(parseInterval(cell)).toBeUndefined()
  })
})
