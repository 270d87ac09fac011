import {parse} from 'csv-parse/sync'
import {stringify} from 'csv-stringify/sync'
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {CSV_OPTIONS, CsvReader} from '../../src/import/csv-reader.js'

type Out = {records: [string[], number][]; unreadable: number[]}

/** Read `text` with CsvReader, fed in pieces cut at `cuts` (byte offsets). */
function read(text: string, cuts: number[] = []): Out {
  const out: Out = {records: [], unreadable: []}
  const reader = new CsvReader({record: (r, line) => out.records.push([r, line]), unreadable: (line) => out.unreadable.push(line)})
  const bytes = Buffer.from(text)
  let at = 0
  for (const c of [...new Set(cuts.map((x) => Math.min(bytes.length, x)))].sort((a, b) => a - b)) {
    reader.write(bytes.subarray(at, c))
    at = c
  }
  reader.write(bytes.subarray(at))
  reader.end()
  return out
}

/**
 * What csv-parse alone makes of it: its records, each with the line (as an editor counts
 * them, by line feeds) on which the record ends.
 */
function reference(text: string): Out {
  const out: Out = {records: [], unreadable: []}
  const bytes = Buffer.from(text)
  const onSkip = (e: unknown) => {
    out.unreadable.push((e as {lines?: number} | undefined)?.lines ?? -1)
    return undefined
  }
  const rows = parse(text, {...CSV_OPTIONS, info: true, on_skip: onSkip, skip_records_with_error: true}) as unknown as {
    info: {bytes: number}
    record: string[]
  }[]
  const lineAt = (end: number) => {
    let n = 1
    for (let i = bytes.indexOf(10); i !== -1 && i < end; i = bytes.indexOf(10, i + 1)) n++
    return n
  }
  out.records = rows.map((r) => [r.record, lineAt(bytes[r.info.bytes - 1] === 10 ? r.info.bytes - 1 : r.info.bytes)])
  return out
}

const cell = fc.oneof(
  {weight: 6, arbitrary: fc.stringMatching(/^[\w .@:/-]{0,12}$/)},
  {weight: 1, arbitrary: fc.string({maxLength: 8, unit: fc.constantFrom('a', ',', '"', '\n', '\r\n', ' ', 'é', '€', '🙂')})},
  {weight: 1, arbitrary: fc.constant('')},
)

const rowsArb = fc.array(fc.array(cell, {maxLength: 6, minLength: 1}), {maxLength: 40, minLength: 1})

describe('CsvReader', () => {
  it('reads what csv-parse reads: records and their end lines, whatever the quoting, line ends and chunking', () => {
    fc.assert(
      fc.property(rowsArb, fc.boolean(), fc.boolean(), fc.boolean(), fc.array(fc.nat(2000), {maxLength: 6}), (rows, crlf, bom, quoteAll, cuts) => {
        let text = stringify(rows, {quoted: quoteAll, record_delimiter: crlf ? '\r\n' : '\n'})
        if (bom) text = `\uFEFF${text}`
        const got = read(text, cuts)
        const want = reference(text)
        expect(got.records).toEqual(want.records)
        expect(got.unreadable).toEqual(want.unreadable)
      }),
      {numRuns: 300},
    )
  })

  it('agrees with csv-parse on arbitrary text too (stray quotes, lone CRs, mixed line ends)', () => {
    const text = fc.string({maxLength: 200, unit: fc.constantFrom('a', 'b', ',', '"', '\r', '\n', '\r\n', ' ')})
    fc.assert(
      fc.property(text, fc.array(fc.nat(220), {maxLength: 4}), (t, cuts) => {
        const got = read(t, cuts)
        const want = reference(t)
        expect(got.records.map(([r]) => r)).toEqual(want.records.map(([r]) => r))
        expect(got.unreadable.length).toBe(want.unreadable.length)
      }),
      {numRuns: 1000},
    )
  })

  it('keeps stray quotes inside unquoted fields, empty lines and a last line without a line break', () => {
    const text = 'h1,h2,h3\n\nplain,5" screen,z\n=HYPERLINK("x"),"quoted, comma",w\n\nlast,line,nobreak'
    const got = read(text, [3, 17, 40])
    expect(got).toEqual(reference(text))
    expect(got.records.map(([, l]) => l)).toEqual([1, 3, 4, 6])
    expect(got.records[1][0]).toEqual(['plain', '5" screen', 'z'])
  })

  it('reports a record with an unclosed quote as unreadable, and goes on', () => {
    const text = 'a,b\n1,2\n"open,3\n4,5\n'
    const got = read(text)
    expect(got).toEqual(reference(text))
    expect(got.unreadable.length).toBeGreaterThan(0)
  })

  it('streams the rest through csv-parse when most lines are quoted, with the same result', () => {
    const rows = Array.from({length: 3000}, (_, i) => [`id${i}`, i % 3 === 0 ? `note, ${i}` : `n${i}`, i % 7 === 0 ? 'two\nlines' : 'x'])
    const text = stringify(rows)
    expect(read(text, [1000, 50_000])).toEqual(reference(text))
    const allQuoted = stringify(rows, {quoted: true, record_delimiter: '\r\n'})
    expect(read(allQuoted, [77])).toEqual(reference(allQuoted))
  })

  it('a quoted field over 1,000 lines is still read like csv-parse reads it', () => {
    const long = Array.from({length: 1500}, (_, i) => `line ${i}`).join('\n')
    const text = stringify([['a', 'b'], ['1', long], ['2', 'x']])
    expect(read(text)).toEqual(reference(text))
  })
})
