import {parse} from 'csv-parse/sync'
import {stringify} from 'csv-stringify/sync'
import {extname} from 'node:path'

import {decodeUtf8, parseJsonValue, readInput} from '../input.js'
import {safeCell} from '../csv-cell.js'
import {InvalidInputError, OperationalError} from '../errors.js'
import type {ProductExport} from '../schemas/catalog.js'
import type {Item} from './products.js'
import {nullableNumberish, numberish, parseCountryPrice, parseIntegration, parseListCell, parseTrial} from './shortforms.js'

/**
 * Product files for `products import` / `products export`.
 *
 * JSON: `{"products": [...]}` (what export writes) or a bare array; each element is a
 * product body. CSV: one product per row with the columns below; nested values are
 * compact forms separated by `;` or JSON arrays. Cells are neutralised against
 * spreadsheet formulas on export (a leading `'`), and the quote is removed on import.
 */

export const CSV_COLUMNS = ['api_id', 'name', 'base_px', 'interval', 'interval_count', 'min_px', 'max_px', 'baseline', 'country_prices', 'integrations', 'features', 'product_trials'] as const
const REQUIRED_COLUMNS = ['api_id', 'name', 'base_px', 'interval', 'interval_count']

export type FileFormat = 'csv' | 'json'

/** By extension, else by content (JSON starts with `[` or `{`). */
export function detectFormat(path: string, text: string): FileFormat {
  const ext = extname(path).toLowerCase()
  if (ext === '.json') return 'json'
  if (ext === '.csv') return 'csv'
  return /^\s*[[{]/.test(text) ? 'json' : 'csv'
}

/**
 * Largest products file: the whole file is validated in memory before anything is
 * written, so it is bounded (64 MiB is some 100,000 products).
 */
export const MAX_PRODUCTS_FILE_BYTES = 64 * 1024 * 1024

/** Read a products file (`-` for stdin) into items labelled by row; UTF-8 only, bounded. */
export function readProductsFile(path: string): {format: FileFormat; items: Item[]} {
  const bytes = readInput(path, {hint: 'split the catalog into several files', limit: MAX_PRODUCTS_FILE_BYTES})
  const text = decodeUtf8(bytes, path === '-' ? 'stdin' : path)
  const format = detectFormat(path, text)
  return {format, items: format === 'json' ? jsonItems(text, path) : csvItems(text, path)}
}

function label(n: number, value: unknown, line?: number): string {
  const id = value && typeof value === 'object' && typeof (value as {api_id?: unknown}).api_id === 'string' ? (value as {api_id: string}).api_id : undefined
  const extra = [line === undefined ? undefined : `line ${line}`, id === undefined ? undefined : `api_id ${JSON.stringify(id)}`].filter(Boolean)
  return `row ${n}${extra.length ? ` (${extra.join(', ')})` : ''}`
}

export function jsonItems(text: string, path = 'input'): Item[] {
  const doc = parseJsonValue(text, path)
  const list = Array.isArray(doc) ? doc : doc && typeof doc === 'object' && Array.isArray((doc as {products?: unknown}).products) ? (doc as {products: unknown[]}).products : undefined
  if (!list) throw new InvalidInputError(`${path}: expected a JSON array of products or {"products": [...]}`)
  return list.map((value, i) => ({label: label(i + 1, value), value}))
}

/** Undo export's formula neutralisation: `'=x` was `=x` (and `''=x` was `'=x`). */
function unquote(cell: string): string {
  return /^'+[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell
}

export function csvItems(text: string, path = 'input'): Item[] {
  let records: {info: {lines: number}; record: string[]}[]
  try {
    records = parse(text, {info: true, relax_quotes: false, skip_empty_lines: true}) as unknown as typeof records
  } catch (error) {
    throw new InvalidInputError(`${path}: not a readable CSV file: ${(error as Error).message}`)
  }
  if (records.length === 0) throw new InvalidInputError(`${path}: empty file (expected a header row: ${CSV_COLUMNS.join(',')})`)
  const header = records[0].record.map((h) => h.trim().toLowerCase())
  const unknown = header.filter((h) => !(CSV_COLUMNS as readonly string[]).includes(h))
  if (unknown.length) throw new InvalidInputError(`${path}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u)).join(', ')} (expected ${CSV_COLUMNS.join(', ')})`)
  const missing = REQUIRED_COLUMNS.filter((c) => !header.includes(c))
  if (missing.length) throw new InvalidInputError(`${path}: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (expected ${CSV_COLUMNS.join(', ')})`)
  const dup = header.find((h, i) => header.indexOf(h) !== i)
  if (dup) throw new InvalidInputError(`${path}: column ${JSON.stringify(dup)} appears twice`)

  return records.slice(1).map(({info, record}, i) => {
    const cells = Object.fromEntries(header.map((h, j) => [h, unquote(record[j] ?? '')]))
    const n = i + 1
    try {
      const value = csvRow(cells)
      return {label: label(n, value, info.lines), value}
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error
      // A cell that cannot even be read still gets listed with the others.
      return {error: error.message, label: label(n, cells, info.lines), value: undefined}
    }
  })
}

/** One CSV row into a product body; empty optional cells mean "none". */
function csvRow(c: Record<string, string>): Record<string, unknown> {
  const opt = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v)
  const row: Record<string, unknown> = {
    api_id: opt(c.api_id),
    base_px: opt(c.base_px) === undefined ? undefined : numberish(c.base_px),
    interval: opt(c.interval)?.trim(),
    interval_count: opt(c.interval_count) === undefined ? undefined : numberish(c.interval_count),
    name: opt(c.name),
  }
  if ('min_px' in c) row.min_px = nullableNumberish(c.min_px)
  if ('max_px' in c) row.max_px = nullableNumberish(c.max_px)
  if ('baseline' in c) row.baseline = opt(c.baseline) ?? null
  // An empty cell is no country prices: the field left out (a given list holds one or more).
  if ('country_prices' in c && c.country_prices.trim() !== '') row.country_prices = parseListCell(c.country_prices, parseCountryPrice, 'country_prices')
  if ('integrations' in c) row.integrations = parseListCell(c.integrations, parseIntegration, 'integrations')
  if ('features' in c) row.features = parseListCell(c.features, (t, what) => parseJsonValue(t, what), 'features')
  if ('product_trials' in c) row.product_trials = parseListCell(c.product_trials, parseTrial, 'product_trials')
  return row
}

// ---------------------------------------------------------------- export

/** safeCell, plus a quote before text that already starts with quotes then a formula character, so import can undo it exactly. */
function exportCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v)
  return /^'+[=+\-@\t\r]/.test(s) ? `'${s}` : safeCell(s)
}

const compactId = (id: string) => id !== '' && id.trim() === id && !/[:;]/.test(id) && !id.startsWith('[') && !id.startsWith('{')

function integrationsCell(list: ProductExport['integrations']): string {
  if (list.length === 0) return ''
  const parts: string[] = []
  for (const i of list) {
    const id = i.type === 'gateway_c' ? i.gateway_c_plan_id : i.type === 'gateway_d' ? i.gateway_d_plan_id : i.gateway_a_product_id
    if (!compactId(id)) return JSON.stringify(list)
    parts.push(i.type === 'gateway_a_with_interval' ? `${i.type}:${id}:${i.interval}:${i.interval_count}` : i.type === 'gateway_d' ? `${i.type}:${id}:${i.currency}` : `${i.type}:${id}`)
  }
  return parts.join(';')
}

export function productsCsv(products: ProductExport[]): string {
  const rows = products.map((p) => [
    p.api_id,
    p.name,
    p.base_px,
    p.interval,
    p.interval_count,
    p.min_px,
    p.max_px,
    p.baseline,
    (p.country_prices ?? []).map((c) => `${c.country}=${c.amount}:${c.currency}`).join(';'),
    integrationsCell(p.integrations),
    p.features.length ? JSON.stringify(p.features) : '',
    p.product_trials.map((t) => `${t.interval}:${t.interval_count}`).join(';'),
  ])
  return stringify([[...CSV_COLUMNS], ...rows.map((r) => r.map((v) => exportCell(v)))])
}

export function productsJson(products: ProductExport[]): string {
  return JSON.stringify({products}, null, 2) + '\n'
}
