import fc from 'fast-check'
import {deserialize, serialize} from 'node:v8'
import {describe, expect, it} from 'vitest'

import {type PackedRows, RowPacker, RowUnpacker} from '../../src/import/packed-rows.js'
import {CHARGE_COLUMNS, SUBSCRIPTION_COLUMNS} from '../../src/revenue/store.js'

/**
 * The import worker posts its rows packed (src/import/packed-rows.ts) and the writing thread
 * unpacks them: every message, through a structured clone as postMessage makes it, must give
 * back the very rows that were packed, whatever their cells.
 */

/** Pack messages of rows in one packer, clone each as postMessage would, unpack them in order. */
function roundTrip(columns: readonly string[], messages: unknown[][][], rowsHint = 4): unknown[][][] {
  const packer = new RowPacker(columns, rowsHint)
  const unpacker = new RowUnpacker()
  const scratch = new Array<unknown>(columns.length)
  return messages.map((rows) => {
    for (const row of rows) {
      // The worker reuses one array for every row: the packer must copy what it needs.
      for (let c = 0; c < columns.length; c++) scratch[c] = row[c]
      packer.add(scratch)
    }
    const packed = deserialize(serialize(packer.take())) as PackedRows
    return unpacker.unpack(packed)
  })
}

const cell = fc.oneof(
  fc.string(),
  fc.string({unit: 'grapheme'}),
  fc.string({unit: 'binary'}),
  fc.constantFrom('', 'USD', 'EUR', 'succeeded', 'gateway_a', 'month', 'US'),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constant(null),
  fc.constant(undefined),
)

describe('packed import rows', () => {
  it('give back the rows packed, message after message, for any cells', () => {
    for (const columns of [CHARGE_COLUMNS, SUBSCRIPTION_COLUMNS]) {
      const row = fc.array(cell, {maxLength: columns.length, minLength: columns.length})
      fc.assert(
        fc.property(fc.array(fc.array(row, {maxLength: 12}), {maxLength: 5}), (messages) => {
          expect(roundTrip(columns, messages)).toEqual(messages)
        }),
      )
    }
  })

  it('keep long and empty strings apart across joined texts', () => {
    const big = 'x'.repeat(100_000)
    const wide = '\u00e9\u4e2d'.repeat(30_000)
    const rows: unknown[][] = []
    for (let i = 0; i < 40; i++) {
      const row: unknown[] = CHARGE_COLUMNS.map((c, k) => `${c}-${i}-${k}`)
      row[0] = i % 7 === 0 ? big : i % 5 === 0 ? '' : `user_${i}`.repeat(i * 300)
      row[2] = i % 3 === 0 ? wide : ''
      row[12] = i % 4 === 0 ? null : `{"k":"${'v'.repeat(i * 1000)}"}`
      rows.push(row)
    }
    const [back] = roundTrip(CHARGE_COLUMNS, [rows])
    expect(back).toEqual(rows)
  })

  it('codes repeated values once for the whole import, and more than the dictionary holds as text', () => {
    const columns = ['status', 'currency']
    const messages = [0, 1, 2].map((m) => Array.from({length: 30_000}, (_, i) => [`s${(m * 30_000 + i) % 70_000}`, 'USD']))
    expect(roundTrip(columns, messages, 2)).toEqual(messages)
  })

  it('number cells come back as the same numbers, -0 and integers beyond 32 bits included', () => {
    const rows = [[-0, 0, 2 ** 53 - 1, -(2 ** 53 - 1), 0.1, 1e300, Number.NaN, Number.POSITIVE_INFINITY]]
    const [back] = roundTrip(rows[0].map((_, i) => `n${i}`), [rows])
    expect(back).toEqual(rows)
    expect(Object.is(back[0][0], -0)).toBe(true)
  })

  it('other values are cloned as they are', () => {
    const rows = [[{a: 1}, 5n, true, new Date(0)]]
    const [back] = roundTrip(['a', 'b', 'c', 'd'], [rows])
    expect(back).toEqual(rows)
  })
})
