import {parse} from 'csv-parse/sync'
import {unzipSync} from 'fflate'

import {parseJson} from '../input.js'
import {isoDay, nowSeconds} from '../clock.js'
import {isCurrency, upperCode} from '../currency.js'
import {duplicateColumn} from '../csv-header.js'
import {InvalidInputError} from '../errors.js'
import {FX_FORMATS, type FxFormat, isIsoDay, MAX_FX_RATE, MIN_FX_RATE} from '../schemas/fx.js'
import type {StorePort} from '../store/port.js'
import {decodeText, RowErrors} from './files.js'

/**
 * `pricectl fx import`: read rate files in the layouts operators download and store them
 * as units per 1 USD. Parsing is pure (bytes in, rows out) so it is tested without a
 * store; writing is one transaction with one prepared statement.
 */

/** One rate to store: units of `currency` per 1 USD on `date`. */
export type RateRow = {currency: string; date: string; rate: number}

export type ParsedRates = {
  format: FxFormat
  /** Data lines (ECB: days; csv: rows; json: entries of the rate table). */
  rowsRead: number
  rows: RateRow[]
  /** Codes a known feed carries that are not ISO 4217 (retired currencies, crypto), skipped. */
  skippedCodes: string[]
  /** How many values those skipped codes had. */
  skippedValues: number
  /** What to record as the rates' source unless the operator names one. */
  source: string
}

export type ParseOptions = {
  /** Date for rows that carry none (csv without a date column, json without "date"). */
  date?: string
  /** Force a format instead of detecting it from the content. */
  format?: FxFormat
  /** File name, for messages and the default source label. */
  name: string
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]
/** Refuse zip entries that inflate past this (a zip bomb, not a rate file). */
const MAX_UNZIPPED_BYTES = 64 * 1024 * 1024

export function isZip(bytes: Uint8Array): boolean {
  return ZIP_MAGIC.every((b, i) => bytes[i] === b)
}

/**
 * The one .csv or .json file inside a zip (the ECB ships eurofxref-hist.csv zipped).
 */
export function unzipSingle(bytes: Uint8Array, name: string): {bytes: Uint8Array; entry: string} {
  let files: Record<string, Uint8Array>
  try {
    files = unzipSync(bytes, {
      filter(f) {
        if (!/\.(csv|json)$/i.test(f.name) || f.name.startsWith('__MACOSX/')) return false
        if (f.originalSize > MAX_UNZIPPED_BYTES) throw new InvalidInputError(`${name}: ${f.name} inflates to ${f.originalSize} bytes; the limit is ${MAX_UNZIPPED_BYTES}`)
        return true
      },
    })
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    throw new InvalidInputError(`${name}: not a readable zip file (${(error as Error).message})`)
  }
  const entries = Object.keys(files)
  if (entries.length === 0) throw new InvalidInputError(`${name}: the zip holds no .csv or .json file`)
  if (entries.length > 1) throw new InvalidInputError(`${name}: the zip holds several files (${entries.join(', ')}); unzip it and import one`)
  return {bytes: files[entries[0]], entry: entries[0]}
}

/** Guess the layout from the first line: `{` json, `Date,` ECB, `currency,` or a code csv. */
export function detectFxFormat(text: string): FxFormat | undefined {
  const t = text.replace(/^\uFEFF/, '').trimStart()
  if (t.startsWith('{')) return 'json'
  const first = t.split('\n', 1)[0].replace(/\r$/, '')
  const cells = first.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'))
  const lower = cells.map((c) => c.toLowerCase())
  if (lower.includes('currency') && lower.includes('rate')) return 'csv'
  if (lower[0] === 'date') return 'ecb'
  if (cells.length >= 2 && /^[A-Za-z]{3}$/.test(cells[0])) return 'csv'
  return undefined
}

/** Read a rate file (csv, json, or either zipped) into USD-based rows; throws InvalidInputError on bad input. */
export function parseFxFile(bytes: Uint8Array, options: ParseOptions): ParsedRates {
  let name = options.name
  if (isZip(bytes)) {
    const inner = unzipSingle(bytes, name)
    bytes = inner.bytes
    name = `${name}:${inner.entry}`
  }
  const text = decodeText(bytes, name)
  const format = options.format ?? detectFxFormat(text)
  if (!format) {
    throw new InvalidInputError(
      `${name}: cannot tell the layout from the first line; expected an ECB eurofxref CSV ("Date, USD, JPY, ..."), a "currency,rate[,date]" CSV or {"date": ..., "usd": {...}} JSON (or pass --format ${FX_FORMATS.join('|')})`,
    )
  }
  if (options.date !== undefined && !isIsoDay(options.date)) throw new InvalidInputError(`--date: expected a date YYYY-MM-DD, got ${JSON.stringify(options.date)}`)
  const parsed = format === 'ecb' ? parseEcb(text, name) : format === 'csv' ? parseRateCsv(text, name, options.date) : parseRateJson(text, name, options.date)
  if (parsed.rows.length === 0) throw new InvalidInputError(`${name}: no rates to import (${parsed.rowsRead} rows read as ${format})`)
  const implausible = new RowErrors(name)
  for (const r of parsed.rows) {
    if (!(r.rate >= MIN_FX_RATE && r.rate <= MAX_FX_RATE)) implausible.add(`${r.currency} on ${r.date}: ${r.rate} per USD is outside ${MIN_FX_RATE}..${MAX_FX_RATE}`)
  }
  implausible.throwIfAny()
  return parsed
}

const MONTHS: Record<string, number> = {
  apr: 4, april: 4, aug: 8, august: 8, dec: 12, december: 12, feb: 2, february: 2, jan: 1, january: 1, jul: 7, july: 7, jun: 6, june: 6,
  mar: 3, march: 3, may: 5, nov: 11, november: 11, oct: 10, october: 10, sep: 9, sept: 9, september: 9,
}

/** ECB dates: `2026-04-13` (history) or `13 April 2026` (latest). */
export function parseEcbDate(s: string): string | undefined {
  const t = s.trim()
  if (isIsoDay(t)) return t
  const m = /^(\d{1,2})\s+([A-Za-z]+)\.?\s+(\d{4})$/.exec(t)
  if (!m) return undefined
  const month = MONTHS[m[2].toLowerCase()]
  if (!month) return undefined
  const day = `${m[3]}-${String(month).padStart(2, '0')}-${m[1].padStart(2, '0')}`
  return isIsoDay(day) ? day : undefined
}

/**
 * Rates per 1 EUR on a date into rates per 1 USD: X per USD = X per EUR / USD per EUR,
 * and EUR per USD = 1 / USD per EUR. USD itself is the base and is not returned.
 */
export function eurToUsdRates(perEur: Record<string, number>, usdPerEur: number): Record<string, number> {
  const out: Record<string, number> = {EUR: 1 / usdPerEur}
  for (const [code, v] of Object.entries(perEur)) if (code !== 'USD' && code !== 'EUR') out[code] = v / usdPerEur
  return out
}

/**
 * The ECB eurofxref layout, one day (latest) or many (history): header `Date, USD, JPY, ...`,
 * values per 1 EUR, `N/A` or empty for a currency not quoted that day, a trailing comma.
 * Codes that are not ISO 4217 today (the history's retired CYP, DEM-era codes) are skipped.
 */
export function parseEcb(text: string, name: string): ParsedRates {
  const lines = text.split('\n')
  const header = lines[0].replace(/\r$/, '').split(',').map((c) => c.trim().toUpperCase())
  if (header[0] !== 'DATE') throw new InvalidInputError(`${name}: line 1: expected the ECB header "Date, USD, JPY, ...", got ${JSON.stringify(lines[0].slice(0, 60))}`)
  const usdCol = header.indexOf('USD')
  if (usdCol < 0) throw new InvalidInputError(`${name}: the ECB file has no USD column, so its EUR-based rates cannot be turned into USD-based ones`)
  const errors = new RowErrors(name)
  // Columns worth reading: ISO codes other than USD (USD is the divisor).
  const cols: {code: string; i: number}[] = []
  const skippedCodes: string[] = []
  const dup = duplicateColumn(header, (h) => h)
  if (dup) throw new InvalidInputError(`${name}: line 1: ${dup}; keep one`)
  for (let i = 1; i < header.length; i++) {
    const code = header[i]
    if (code === '') continue // the trailing comma
    if (code === 'USD') continue
    if (!/^[A-Z]{3}$/.test(code)) errors.add(`line 1: column ${JSON.stringify(code)} is not a currency code`)
    else if (isCurrency(code)) cols.push({code, i})
    else skippedCodes.push(code)
  }
  errors.throwIfAny()
  const skipped = new Set(skippedCodes.map((c) => header.indexOf(c)))
  const rows: RateRow[] = []
  const dates = new Map<string, number>()
  let rowsRead = 0
  let skippedValues = 0
  for (let n = 1; n < lines.length; n++) {
    const line = lines[n].replace(/\r$/, '')
    if (line.trim() === '') continue
    rowsRead++
    const lineNo = n + 1
    const cells = line.split(',')
    const date = parseEcbDate(cells[0] ?? '')
    if (!date) {
      errors.add(`line ${lineNo}: date ${JSON.stringify(cells[0]?.trim())} is not a date (expected 2026-04-13 or 13 April 2026)`)
      continue
    }
    if (dates.has(date)) {
      errors.add(`line ${lineNo}: date ${date} appears twice (also line ${dates.get(date)})`)
      continue
    }
    dates.set(date, lineNo)
    const usd = readValue(cells[usdCol], lineNo, 'USD', errors)
    if (usd === undefined) continue // USD not quoted that day: nothing can be converted
    rows.push({currency: 'EUR', date, rate: 1 / usd})
    for (const {code, i} of cols) {
      const v = readValue(cells[i], lineNo, code, errors)
      if (v !== undefined) rows.push({currency: code, date, rate: v / usd})
    }
    for (const i of skipped) {
      const cell = cells[i]?.trim()
      if (cell && cell !== 'N/A') skippedValues++
    }
  }
  errors.throwIfAny()
  return {format: 'ecb', rows, rowsRead, skippedCodes, skippedValues, source: `ECB eurofxref (${name})`}
}

/** A positive rate from a cell; blank and N/A mean "not quoted" (undefined), anything else bad is an error. */
function readValue(cell: string | undefined, lineNo: number, code: string, errors: RowErrors): number | undefined {
  const t = (cell ?? '').trim()
  if (t === '' || t.toUpperCase() === 'N/A') return undefined
  const v = Number(t)
  if (!Number.isFinite(v) || v <= 0) {
    errors.add(`line ${lineNo}: ${code} rate ${JSON.stringify(t)} is not a positive number`)
    return undefined
  }
  return v
}

/**
 * Plain `currency,rate[,date]` CSV, rates per 1 USD, optional header (`currency,rate,date`
 * in any order). Every code must be ISO 4217: an unknown one is an error naming the line.
 */
export function parseRateCsv(text: string, name: string, defaultDate: string | undefined): ParsedRates {
  let records: {info: {lines: number}; record: string[]}[]
  try {
    records = parse(text, {bom: true, comment: '#', info: true, relax_column_count: true, skip_empty_lines: true, trim: true}) as unknown as {info: {lines: number}; record: string[]}[]
  } catch (error) {
    throw new InvalidInputError(`${name}: not a readable CSV (${(error as Error).message})`)
  }
  let col = {currency: 0, date: 2, rate: 1}
  let width = 3
  if (records.length > 0 && records[0].record.some((c) => /^currency$/i.test(c))) {
    const head = records.shift()!.record.map((h) => h.toLowerCase())
    const dup = duplicateColumn(head, (h) => h)
    if (dup) throw new InvalidInputError(`${name}: line 1: ${dup}; keep one (expected currency,rate[,date])`)
    col = {currency: head.indexOf('currency'), date: head.indexOf('date'), rate: head.indexOf('rate')}
    width = head.length
    if (col.rate < 0 || col.currency < 0) throw new InvalidInputError(`${name}: line 1: the header has no "rate" column (expected currency,rate[,date])`)
  }
  const errors = new RowErrors(name)
  const rows: RateRow[] = []
  const seen = new Map<string, number>()
  for (const {info, record} of records) {
    const line = info.lines
    // More cells than columns: a shifted row (an unquoted comma), not one to guess at.
    if (record.length > width) {
      errors.add(`line ${line}: ${record.length} cells, expected at most ${width} (currency,rate[,date])`)
      continue
    }
    const raw = record[col.currency] ?? ''
    const code = upperCode(raw)
    if (!isCurrency(code)) {
      errors.add(`line ${line}: unknown currency ${JSON.stringify(raw)} (expected an ISO 4217 code such as EUR)`)
      continue
    }
    const rateText = record[col.rate] ?? ''
    const rate = rateText === '' ? Number.NaN : Number(rateText)
    if (!Number.isFinite(rate) || rate <= 0) {
      errors.add(`line ${line}: ${code} rate ${JSON.stringify(rateText)} is not a positive number`)
      continue
    }
    const dateText = col.date >= 0 ? (record[col.date] ?? '') : ''
    const date = dateText === '' ? (defaultDate ?? today()) : dateText
    if (!isIsoDay(date)) {
      errors.add(`line ${line}: date ${JSON.stringify(dateText)} is not a date YYYY-MM-DD`)
      continue
    }
    if (code === 'USD') {
      if (rate !== 1) errors.add(`line ${line}: USD is the base of every rate, so its rate must be 1, got ${rateText}`)
      continue
    }
    const key = `${code} ${date}`
    if (seen.has(key)) {
      errors.add(`line ${line}: ${code} on ${date} is given twice (also line ${seen.get(key)})`)
      continue
    }
    seen.set(key, line)
    rows.push({currency: code, date, rate})
  }
  errors.throwIfAny()
  return {format: 'csv', rows, rowsRead: records.length, skippedCodes: [], skippedValues: 0, source: `csv (${name})`}
}

/**
 * `{date, usd: {eur: 0.92, ...}}` as the @fawazahmed0/currency-api package ships it
 * (lower-case codes). Another base table (`{date, eur: {...}}`) is converted through its
 * usd entry. That feed also lists crypto and metals: non-ISO codes are skipped and counted.
 */
export function parseRateJson(text: string, name: string, defaultDate: string | undefined): ParsedRates {
  const data = parseJson(text, name)
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new InvalidInputError(`${name}: expected a JSON object {"date": "YYYY-MM-DD", "usd": {...}}`)
  const obj = data as Record<string, unknown>
  const tables = Object.keys(obj).filter((k) => k !== 'date' && obj[k] !== null && typeof obj[k] === 'object' && !Array.isArray(obj[k]))
  if (tables.length !== 1) {
    throw new InvalidInputError(`${name}: expected one rate table beside "date" such as "usd": {...}, found ${tables.length === 0 ? 'none' : tables.map((t) => JSON.stringify(t)).join(', ')}`)
  }
  const base = upperCode(tables[0])
  if (!isCurrency(base)) throw new InvalidInputError(`${name}: rate table ${JSON.stringify(tables[0])} is not named after an ISO 4217 currency`)
  const date = obj.date === undefined ? (defaultDate ?? today()) : obj.date
  if (typeof date !== 'string' || !isIsoDay(date)) throw new InvalidInputError(`${name}: "date" must be YYYY-MM-DD, got ${JSON.stringify(obj.date)}`)
  const table = obj[tables[0]] as Record<string, unknown>
  const errors = new RowErrors(name)
  const perBase = new Map<string, number>()
  const skippedCodes: string[] = []
  for (const [key, value] of Object.entries(table)) {
    const code = upperCode(key)
    if (!isCurrency(code)) {
      skippedCodes.push(code)
      continue
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      errors.add(`${tables[0]}.${key}: rate ${JSON.stringify(value)} is not a positive number`)
      continue
    }
    if (perBase.has(code)) {
      errors.add(`${tables[0]}.${key}: ${code} is given twice`)
      continue
    }
    perBase.set(code, value)
  }
  errors.throwIfAny()
  let usdPerBase = 1
  if (base !== 'USD') {
    const u = perBase.get('USD')
    if (u === undefined) throw new InvalidInputError(`${name}: the ${tables[0]} table has no usd entry, so its rates cannot be turned into USD-based ones`)
    usdPerBase = u
  } else if (perBase.has('USD') && perBase.get('USD') !== 1) {
    throw new InvalidInputError(`${name}: usd.usd must be 1 (USD is the base), got ${perBase.get('USD')}`)
  }
  perBase.set(base, 1)
  const rows: RateRow[] = []
  for (const [code, v] of perBase) if (code !== 'USD') rows.push({currency: code, date, rate: v / usdPerBase})
  return {format: 'json', rows, rowsRead: Object.keys(table).length, skippedCodes, skippedValues: skippedCodes.length, source: `json (${name})`}
}

/** Today (UTC), honouring PRICECTL_NOW so tests and reproducible runs can pin it. */
function today(): string {
  return isoDay(nowSeconds())
}

export type ImportSummary = {
  currencies: number
  dates: {count: number; from: null | string; to: null | string}
  dryRun: boolean
  format: FxFormat
  /**
   * Currencies of this import whose rate today is still another, later-dated rate of the
   * operator's (the bundled snapshot never counts: the import outranks it).
   */
  newerOnFile: {count: number; currencies: string[]}
  ratesUnchanged: number
  ratesWritten: number
  rowsRead: number
  /** Rates dated after today: kept, not used before their dates. */
  scheduled: number
  skippedCodes: string[]
  skippedValues: number
  source: string
}

/**
 * Store parsed rates in one transaction (all or nothing). A rate already on file with the
 * same value and source is left alone and counted as unchanged, so re-importing a file is
 * a no-op; a different value or source for the same currency and date replaces it.
 */
export async function importRates(store: StorePort, parsed: ParsedRates, options: {dryRun?: boolean; source?: string; today?: string} = {}): Promise<ImportSummary> {
  const source = options.source ?? parsed.source
  const today = options.today ?? isoDay(nowSeconds())
  const dates = new Set<string>()
  const currencies = new Set<string>()
  /** Per currency the latest imported date on or before today (what could price today). */
  const latestUsable = new Map<string, string>()
  let scheduled = 0
  for (const r of parsed.rows) {
    dates.add(r.date)
    currencies.add(r.currency)
    if (r.date > today) {
      scheduled++
      continue
    }
    const d = latestUsable.get(r.currency)
    if (d === undefined || r.date > d) latestUsable.set(r.currency, r.date)
  }
  const sorted = [...dates].sort()
  let written = 0
  let unchanged = 0
  if (options.dryRun) {
    for (const r of parsed.rows) {
      const cur = await store.config.storedRate(r.currency, r.date)
      if (cur && cur.rate === r.rate && cur.source === source) unchanged++
      else written++
    }
  } else {
    const rows = parsed.rows.map((r) => ({currency: r.currency, date: r.date, rate: r.rate, source}))
    written = await store.transaction(async () => await store.config.saveFxRates(rows), {write: true})
    unchanged = parsed.rows.length - written
  }
  // A later operator rate dated on or before today keeps pricing; one key lookup per currency.
  const newer: string[] = []
  for (const [currency, date] of latestUsable) if (await store.config.hasOperatorRateBetween(currency, date, today)) newer.push(currency)
  newer.sort()
  return {
    currencies: currencies.size,
    dates: {count: sorted.length, from: sorted[0] ?? null, to: sorted.at(-1) ?? null},
    dryRun: Boolean(options.dryRun),
    format: parsed.format,
    newerOnFile: {count: newer.length, currencies: newer},
    ratesUnchanged: unchanged,
    ratesWritten: written,
    rowsRead: parsed.rowsRead,
    scheduled,
    skippedCodes: parsed.skippedCodes,
    skippedValues: parsed.skippedValues,
    source,
  }
}
