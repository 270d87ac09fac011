import Table from 'cli-table3'
import {createRequire} from 'node:module'
import stringWidth from 'string-width'

import {cellText, safeCell} from '../csv-cell.js'
import {InvalidInputError} from '../errors.js'
import {listOptions} from './list-options.js'

export {safeCell}

export type Column<R> = {header: string; value: (row: R) => unknown}

const cell = cellText

/**
 * The width tables fit: the terminal's; without a terminal, $COLUMNS when set, else no
 * limit (output piped to a file or a tool keeps whole lines).
 */
export function outputWidth(): number {
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns
  const columns = Number.parseInt(process.env.COLUMNS ?? '', 10)
  return columns > 0 ? columns : Number.POSITIVE_INFINITY
}

/** Narrowest a column is squeezed to; a table that cannot fit even then runs over. */
const MIN_COLUMN = 6

/**
 * Column widths that fit `budget`: columns narrower than a common cap keep their width,
 * wider ones are cut to the largest cap that fits (their cells wrap). A column keeps at
 * least `floor` (its header's longest word) while the floors fit.
 */
export function fitWidths(natural: number[], budget: number, floor: number[] = []): number[] {
  if (natural.reduce((a, b) => a + b, 0) <= budget) return natural
  const floors = natural.map((w, i) => Math.min(w, Math.max(MIN_COLUMN, floor[i] ?? 0)))
  const lows = floors.reduce((a, b) => a + b, 0) <= budget ? floors : natural.map((w) => Math.min(w, MIN_COLUMN))
  const widths = (cap: number) => natural.map((w, i) => Math.max(lows[i], Math.min(w, cap)))
  const total = (cap: number) => widths(cap).reduce((a, b) => a + b, 0)
  let lo = MIN_COLUMN
  let hi = Math.max(MIN_COLUMN, ...natural)
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (total(mid) <= budget) lo = mid
    else hi = mid - 1
  }
  return widths(lo)
}

/**
 * Wrap text to `width` columns: at spaces, or after _ - / : , ; (identifiers and lists
 * break where a reader expects); a word longer than the width is cut. Nothing is dropped.
 */
export function wrapText(text: string, width: number): string {
  const out: string[] = []
  for (const line of text.split('\n')) {
    if (stringWidth(line) <= width) {
      out.push(line)
      continue
    }
    let current = ''
    const flush = () => {
      if (current.trimEnd()) out.push(current.trimEnd())
      current = ''
    }
    for (const token of line.split(/(?<=[ _\-/:,;])/)) {
      if (stringWidth((current + token).trimEnd()) <= width) {
        current += token
        continue
      }
      flush()
      let rest = token.trimStart()
      while (stringWidth(rest.trimEnd()) > width) {
        let piece = ''
        for (const ch of rest) {
          if (stringWidth(piece + ch) > width) break
          piece += ch
        }
        out.push(piece)
        rest = rest.slice(piece.length)
      }
      current = rest
    }
    flush()
  }
  return out.join('\n')
}

const widthOf = (text: string) => Math.max(0, ...text.split('\n').map((l) => stringWidth(l)))

/** The widest word of a text: a cell is never split inside one (a number, an identifier). */
const widestWord = (text: string) => Math.max(0, ...text.split(/\s+/).map((w) => stringWidth(w)))

/**
 * Wrap text to `width` at whitespace only, so no word (number, identifier) is split; a word
 * wider than the width (only when the whole terminal is narrower) falls back to wrapText.
 */
export function wrapWords(text: string, width: number): string {
  const out: string[] = []
  for (const line of text.split('\n')) {
    let current = ''
    for (const word of line.split(/\s+/).filter((w) => w !== '')) {
      if (stringWidth(word) > width) {
        if (current) out.push(current)
        current = ''
        out.push(wrapText(word, width))
        continue
      }
      if (current && stringWidth(current) + 1 + stringWidth(word) > width) {
        out.push(current)
        current = word
      } else current = current ? `${current} ${word}` : word
    }
    if (current || line.trim() === '') out.push(current)
  }
  return out.join('\n')
}

/** A sentence for people, wrapped between words to the output width (whole without a limit). */
export function paragraph(text: string): string {
  const width = outputWidth()
  return Number.isFinite(width) ? wrapWords(text, width) : text
}

/**
 * A table for people (cli-table3): no rule between rows, no colours (it reads the same
 * piped), and as wide as the output allows, long cells wrapped between words. A table that
 * cannot fit without splitting a word (a number, an identifier) is printed as records
 * instead, one "key │ value" block per row (as psql's \x), every value whole.
 */
function render(head: string[] | undefined, body: string[][], keys: string[] | undefined = head): string {
  const n = Math.max(head?.length ?? 0, ...body.map((r) => r.length))
  const natural = Array.from({length: n}, (_, i) => Math.max(1, widthOf(head?.[i] ?? ''), ...body.map((r) => widthOf(r[i] ?? ''))))
  // Each column: a space either side and one border; plus the closing border.
  const budget = outputWidth() - (3 * n + 1)
  const floors = Array.from({length: n}, (_, i) => Math.max(widestWord(head?.[i] ?? ''), ...body.map((r) => widestWord(r[i] ?? ''))))
  if (natural.reduce((a, b) => a + b, 0) > budget && floors.reduce((a, b) => a + b, 0) > budget) {
    return keys ? records(keys, body) : records([], body.map((r) => r.slice(1)), body.map((r) => r[0] ?? ''))
  }
  const widths = fitWidths(natural, budget, floors)
  const fit = (row: string[]) => row.map((c, i) => (widthOf(c) > widths[i] ? wrapWords(c, widths[i]) : c))
  const t = new Table({
    colWidths: widths.map((w) => w + 2),
    head: head ? fit(head) : [],
    style: {border: [], compact: true, head: []},
  })
  for (const row of body) t.push(fit(row))
  return t.toString()
}

/**
 * Rows as records fitting the output width: with `keys` (column headers) one block per row
 * under a "─[ RECORD n ]─" line; without, one block of key/value rows (`labels`). A value
 * goes beside its key when its words fit there, else under it, indented.
 */
function records(keys: string[], body: string[][], labels?: string[]): string {
  const width = outputWidth()
  const blocks = labels ? [body.map((r, i) => [labels[i], r.join(' ')] as const)] : body.map((r) => keys.map((k, i) => [k, r[i] ?? ''] as const))
  const keyWidth = Math.max(0, ...blocks.flat().map(([k]) => stringWidth(k)))
  const out: string[] = []
  for (const [b, block] of blocks.entries()) {
    if (!labels) {
      const title = `─[ RECORD ${b + 1} ]`
      out.push(title + '─'.repeat(Math.max(0, Math.min(width, keyWidth + 30) - stringWidth(title))))
    }
    for (const [key, value] of block) {
      const beside = width - keyWidth - 3
      if (beside >= 8 && widestWord(value) <= beside) {
        const lines = wrapWords(value, beside).split('\n')
        const pad = (k: string) => k + ' '.repeat(keyWidth - stringWidth(k))
        out.push(...lines.map((l, i) => `${pad(i === 0 ? key : '')} │ ${l}`.trimEnd()))
      } else {
        out.push(`${key}:`)
        out.push(...wrapWords(value, Math.max(1, width - 2)).split('\n').map((l) => `  ${l}`.trimEnd()))
      }
    }
  }
  return out.join('\n')
}

/**
 * Rows and columns as the running list command asked for them: --columns picks and orders
 * columns by header, --sort orders rows by one (numbers as numbers, empty cells last).
 */
function shape<R>(rows: R[], columns: Column<R>[]): {columns: Column<R>[]; header: boolean; rows: R[]} {
  const o = listOptions()
  if (!o) return {columns, header: true, rows}
  const find = (name: string, flag: string) => {
    const c = columns.find((c) => c.header.toLowerCase() === name.toLowerCase())
    if (!c) throw new InvalidInputError(`${flag}: no column ${JSON.stringify(name)} (columns: ${columns.map((c) => c.header).join(', ')})`)
    return c
  }
  const picked = o.columns?.length ? o.columns.map((name) => find(name, '--columns')) : columns
  let sorted = rows
  if (o.sort) {
    const by = find(o.sort.column, '--sort')
    const sign = o.sort.descending ? -1 : 1
    sorted = rows
      .map((row) => ({key: by.value(row), row}))
      .sort((a, b) => compareCells(a.key, b.key, sign))
      .map((e) => e.row)
  }
  return {columns: picked, header: o.header, rows: sorted}
}

function compareCells(a: unknown, b: unknown, sign: number): number {
  const blank = (v: unknown) => v === null || v === undefined || v === ''
  if (blank(a) || blank(b)) return blank(a) === blank(b) ? 0 : blank(a) ? 1 : -1
  const na = typeof a === 'number' ? a : Number(a)
  const nb = typeof b === 'number' ? b : Number(b)
  if (Number.isFinite(na) && Number.isFinite(nb) && typeof a !== 'boolean') return sign * (na - nb)
  return sign * cell(a).localeCompare(cell(b), 'en', {numeric: true})
}

/** A table of rows; a list command's --columns, --sort and --no-header apply. */
export function table<R>(rows: R[], columns: Column<R>[]): string {
  const s = shape(rows, columns)
  return render(
    s.header ? s.columns.map((c) => c.header) : undefined,
    s.rows.map((r) => s.columns.map((c) => cell(c.value(r)))),
    s.columns.map((c) => c.header),
  )
}

/** Key/value table for one record. */
export function recordTable(entries: [string, unknown][]): string {
  return render(
    undefined,
    entries.map(([k, v]) => [k, cell(v)]),
  )
}

/** CSV with a header row; a list command's --columns, --sort and --no-header apply. */
export function csv<R>(rows: R[], columns: Column<R>[]): string {
  const s = shape(rows, columns)
  const body = s.rows.map((r) => s.columns.map((c) => safeCell(c.value(r))))
  return csvStringify()(s.header ? [s.columns.map((c) => c.header), ...body] : body)
}

/** csv-stringify, loaded by the first CSV output: a table or JSON never needs it (docs/performance.md "Cold start"). */
let stringify: typeof import('csv-stringify/sync').stringify | undefined
function csvStringify(): typeof import('csv-stringify/sync').stringify {
  stringify ??= (createRequire(import.meta.url)('csv-stringify/sync') as typeof import('csv-stringify/sync')).stringify
  return stringify
}
