import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {copyLine, fullCharge, leanLine} from '../../src/store/postgres/imports.js'
import type {ChargeValues} from '../../src/store/port/revenue.js'
import {charge, chargeRow} from '../helpers/contract-fixtures.js'

/**
 * A charges stage on PostgreSQL holds the rows' COPY lines, made by the reading thread; the
 * writer reads the key, the product and the event of each from its line, copies the line as
 * it is, and parses all of it only where a merge needs every value (src/store/postgres/imports.ts,
 * COPY_LINES). The line must give back each value exactly.
 */
describe('charges as COPY lines (PostgreSQL import stages)', () => {
  // Text with what COPY escapes (backslash, tab, newline, carriage return), a literal \N, digits and the empty string.
  const text = fc.oneof(fc.string(), fc.constantFrom('', '\\N', '\\', '\t', '\n\r', '123', 'a\\tb', '{"note":"x\ty\\\\z"}'), fc.string({unit: 'binary'}))
  const int = fc.integer({max: Number.MAX_SAFE_INTEGER, min: 0})
  const values = fc.record({
    amount_minor: fc.option(int),
    amount_refunded_minor: int,
    amount_refunded_usd_minor: int,
    amount_usd_minor: fc.option(int),
    country: fc.option(text),
    created: fc.option(int),
    currency: fc.option(text),
    latest_event_id: text,
    latest_event_timestamp: int,
    metadata_json: fc.option(text),
    origin: text,
    origin_id: text,
    product_id: fc.option(int),
    status: text,
    tax_minor: int,
    tax_refunded_usd_minor: int,
    tax_usd_minor: int,
    user_id: text,
  }) as fc.Arbitrary<ChargeValues>

  it('a line gives back every value of the row, types included', () => {
    fc.assert(
      fc.property(values, (v) => {
        const row = chargeRow(v)
        expect(fullCharge(copyLine(row))).toEqual(row)
      }),
      {numRuns: 500},
    )
  })

  it('the writer reads the key, the product and the event of a line as the row has them', () => {
    fc.assert(
      fc.property(values, (v) => {
        expect(leanLine(copyLine(chargeRow(v)))).toEqual([v.user_id, v.origin, v.origin_id, v.product_id, v.latest_event_timestamp, v.latest_event_id])
      }),
      {numRuns: 500},
    )
    const line = copyLine(chargeRow(charge({latest_event_id: 'import:9', latest_event_timestamp: 9, metadata_json: 'a\tb\\c\nd', product_id: 4, user_id: 'u\t1'})))
    expect(leanLine(line)).toEqual(['u\t1', 'gateway_a', 'ch_1', 4, 9, 'import:9'])
    expect(line).toContain('a\\tb\\\\c\\nd')
  })
})
