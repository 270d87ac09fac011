import {parse} from 'csv-parse/sync'

import {countryCurrency, upperCode} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import {decodeText, RowErrors} from '../fx/files.js'
import {rateOn} from '../fx/rates.js'
import {yearAverageRate} from '../fx/repository.js'
import {Factor, LOCALIZATION_FORMATS, type LocalizationFormat, MAX_FACTOR, MIN_FACTOR} from '../schemas/localization.js'
import type {StorePort} from '../store/port.js'
import {toCountry} from './countries.js'
import type {LocalizationFactor} from './factors.js'

/**
 * `pricectl localization import`: per-country factors from World Bank files or a plain
 * CSV. Parsing is pure; turning PPP conversion factors into factors reads FX rates from
 * the store (`resolveFactors`); writing is `writeFactors` (one transaction).
 */

/**
 * What a file's values are: `ratio` is the price level ratio itself (the factor);
 * `ppp` is a PPP conversion factor in local currency per international $, which becomes a
 * factor once divided by the market rate of that currency per USD.
 */
export type ValueKind = 'ppp' | 'ratio'

export type ParsedFactors = {
  /** Country (ISO alpha-2) -> the latest year's value. Year is null when the file has none. */
  entries: Map<string, {line: number; value: number; year: null | number}>
  format: LocalizationFormat
  kind: ValueKind
  /** Codes that name no country (regions, income groups), skipped. */
  aggregates: string[]
  /** Countries with no value in any year, skipped. */
  noValue: string[]
  rowsRead: number
  source: string
}

/** World Bank indicators the wide layout may carry, and what their values are. */
const INDICATORS: Record<string, {kind: ValueKind; label: string}> = {
  'PA.NUS.PPP': {kind: 'ppp', label: 'PPP conversion factor, GDP'},
  'PA.NUS.PPPC.RF': {kind: 'ratio', label: 'price level ratio'},
  'PA.NUS.PRVT.PP': {kind: 'ppp', label: 'PPP conversion factor, private consumption'},
}

type Row = {line: number; record: string[]}

function readCsv(text: string, name: string, fromLine = 1): Row[] {
  try {
    const rows = parse(text, {bom: true, from_line: fromLine, info: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true}) as unknown as {
      info: {lines: number}
      record: string[]
    }[]
    return rows.map((r) => ({line: r.info.lines, record: r.record.map((c) => c.trim())}))
  } catch (error) {
    throw new InvalidInputError(`${name}: not a readable CSV (${(error as Error).message})`)
  }
}

/** Line (1-based) of the World Bank header `"Country Name","Country Code",...`, or undefined. */
function wideHeaderLine(lines: string[]): number | undefined {
  for (let i = 0; i < Math.min(lines.length, 20); i++) {
    if (/^"?Country Name"?\s*,\s*"?Country Code"?\s*,/i.test(lines[i].trim())) return i + 1
  }
  return undefined
}

function splitHeader(line: string): string[] {
  return line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1').toLowerCase())
}

export function detectLocalizationFormat(text: string): LocalizationFormat | undefined {
  const lines = text.replace(/^\uFEFF/, '').split('\n', 21)
  if (wideHeaderLine(lines) !== undefined) return 'wide'
  const head = splitHeader(lines[0] ?? '')
  if ((head.includes('country id') || head.includes('country code')) && head.includes('year')) return 'long'
  if (head[0] === 'country' && head[1] === 'factor') return 'csv'
  if (head.length >= 2 && /^[a-z]{2}$/.test(head[0]) && head[1] !== '' && Number.isFinite(Number(head[1]))) return 'csv'
  return undefined
}

export function parseLocalizationFile(bytes: Uint8Array, options: {format?: LocalizationFormat; name: string}): ParsedFactors {
  const text = decodeText(bytes, options.name)
  const format = options.format ?? detectLocalizationFormat(text)
  if (!format) {
    throw new InvalidInputError(
      `${options.name}: cannot tell the layout; expected a World Bank wide CSV ("Country Name","Country Code",...,"1960",...), the long "Country,Country ID,Year,PPP" layout, or a plain "country,factor" CSV (or pass --format ${LOCALIZATION_FORMATS.join('|')})`,
    )
  }
  const parsed = format === 'wide' ? parseWide(text, options.name) : format === 'long' ? parseLong(text, options.name) : parsePlain(text, options.name)
  if (parsed.entries.size === 0) {
    throw new InvalidInputError(
      `${options.name}: no country values to import (${parsed.rowsRead} rows read as ${format}: ${parsed.aggregates.length} aggregates, ${parsed.noValue.length} countries without a value)`,
    )
  }
  return parsed
}

/** A value cell: blank is "no value"; anything else must be a positive number. */
function readNumber(cell: string | undefined, where: string, errors: RowErrors): number | undefined {
  const t = (cell ?? '').trim()
  if (t === '' || t === '..' || t.toUpperCase() === 'N/A') return undefined // ".." is the World Bank's "no data"
  const v = Number(t)
  if (!Number.isFinite(v) || v <= 0) {
    errors.add(`${where}: ${JSON.stringify(t)} is not a positive number`)
    return undefined
  }
  return v
}

/**
 * World Bank wide layout (API_<indicator>_DS2_*.csv): preamble lines, then
 * `"Country Name","Country Code","Indicator Name","Indicator Code","1960",...,"2024",`.
 * Per country the latest year with a value wins.
 */
export function parseWide(text: string, name: string): ParsedFactors {
  const headerLine = wideHeaderLine(text.split('\n', 21))
  if (headerLine === undefined) throw new InvalidInputError(`${name}: no World Bank header line ("Country Name","Country Code",...) in the first 20 lines`)
  const rows = readCsv(text, name, headerLine)
  const header = rows.shift()!.record.map((h) => h.toLowerCase())
  const codeCol = header.indexOf('country code')
  const indicatorCol = header.indexOf('indicator code')
  const years = header.flatMap((h, i) => (/^\d{4}$/.test(h) ? [{i, year: Number(h)}] : [])).sort((a, b) => b.year - a.year)
  if (years.length === 0) throw new InvalidInputError(`${name}: line ${headerLine}: the header has no year columns ("1960", ...)`)
  const errors = new RowErrors(name)
  const indicators = new Set(rows.map((r) => (indicatorCol >= 0 ? r.record[indicatorCol] : '')).filter(Boolean))
  if (indicators.size > 1) throw new InvalidInputError(`${name}: holds several indicators (${[...indicators].join(', ')}); export one indicator per file`)
  const indicator = [...indicators][0]
  if (indicator === undefined) throw new InvalidInputError(`${name}: no "Indicator Code" column or value; expected PA.NUS.PPPC.RF (price level ratio)`)
  const known = INDICATORS[indicator]
  if (!known) {
    throw new InvalidInputError(`${name}: indicator ${indicator} is not one pricectl can turn into factors; expected ${Object.keys(INDICATORS).join(', ')} (PA.NUS.PPPC.RF is the price level ratio)`)
  }
  const result = newParsed('wide', known.kind, `World Bank ${indicator} (${name})`)
  for (const {line, record} of rows) {
    result.rowsRead++
    const code = record[codeCol] ?? ''
    if (code === '') {
      errors.add(`line ${line}: no country code`)
      continue
    }
    const country = toCountry(code)
    if (!country) {
      result.aggregates.push(code)
      continue
    }
    let found = false
    for (const {i, year} of years) {
      const v = readNumber(record[i], `line ${line}: ${code} ${year}`, errors)
      if (v !== undefined) {
        addEntry(result, country, {line, value: v, year}, errors, code)
        found = true
        break
      }
    }
    if (!found) result.noValue.push(country)
  }
  errors.throwIfAny()
  return result
}

/**
 * Long layout `Country,Country ID,Year,PPP` (PPP conversion factor, LCU per international $),
 * one row per country and year; Country ID is alpha-2 or alpha-3.
 */
export function parseLong(text: string, name: string): ParsedFactors {
  const rows = readCsv(text, name)
  const header = (rows.shift()?.record ?? []).map((h) => h.toLowerCase())
  const codeCol = header.includes('country id') ? header.indexOf('country id') : header.indexOf('country code')
  const yearCol = header.indexOf('year')
  const valueCol = header.includes('ppp') ? header.indexOf('ppp') : header.indexOf('value')
  if (codeCol < 0 || yearCol < 0 || valueCol < 0) {
    throw new InvalidInputError(`${name}: line 1: expected the header Country,Country ID,Year,PPP, got ${JSON.stringify(header.join(','))}`)
  }
  const errors = new RowErrors(name)
  const result = newParsed('long', 'ppp', `World Bank PPP / FX (${name})`)
  const best = new Map<string, {code: string; line: number; value: number; year: number}>()
  const seenYears = new Map<string, number>()
  const aggregates = new Set<string>()
  const countries = new Set<string>()
  for (const {line, record} of rows) {
    result.rowsRead++
    const code = record[codeCol] ?? ''
    const country = toCountry(code)
    if (!country) {
      if (code === '') errors.add(`line ${line}: no country code`)
      else aggregates.add(code)
      continue
    }
    countries.add(country)
    const yearText = record[yearCol] ?? ''
    const year = Number(yearText)
    if (!/^\d{4}$/.test(yearText)) {
      errors.add(`line ${line}: year ${JSON.stringify(yearText)} is not a year such as 2024`)
      continue
    }
    const key = `${country} ${year}`
    if (seenYears.has(key)) {
      errors.add(`line ${line}: ${code} ${year} is given twice (also line ${seenYears.get(key)})`)
      continue
    }
    seenYears.set(key, line)
    const v = readNumber(record[valueCol], `line ${line}: ${code} ${year} PPP`, errors)
    if (v === undefined) continue
    const b = best.get(country)
    if (!b || year > b.year) best.set(country, {code, line, value: v, year})
  }
  errors.throwIfAny()
  for (const [country, b] of best) result.entries.set(country, {line: b.line, value: b.value, year: b.year})
  result.aggregates.push(...aggregates)
  result.noValue.push(...[...countries].filter((c) => !best.has(c)))
  return result
}

/** Plain `country,factor[,year]` CSV, optional header; every row must be valid. */
export function parsePlain(text: string, name: string): ParsedFactors {
  const rows = readCsv(text, name)
  let col = {country: 0, factor: 1, year: 2}
  let width = 3
  if (rows.length > 0 && /^country$/i.test(rows[0].record[0] ?? '')) {
    const head = rows.shift()!.record.map((h) => h.toLowerCase())
    col = {country: head.indexOf('country'), factor: head.indexOf('factor'), year: head.indexOf('year')}
    width = head.length
    if (col.factor < 0) throw new InvalidInputError(`${name}: line 1: the header has no "factor" column (expected country,factor[,year])`)
  }
  const errors = new RowErrors(name)
  const result = newParsed('csv', 'ratio', `csv (${name})`)
  for (const {line, record} of rows) {
    result.rowsRead++
    // More cells than columns: a shifted row (an unquoted comma), not one to guess at.
    if (record.length > width) {
      errors.add(`line ${line}: ${record.length} cells, expected at most ${width} (country,factor[,year])`)
      continue
    }
    const raw = record[col.country] ?? ''
    const country = upperCode(raw)
    if (!/^[A-Z]{2}$/.test(country) || !toCountry(country)) {
      errors.add(`line ${line}: unknown country ${JSON.stringify(raw)} (expected a two-letter ISO 3166 code such as DE)`)
      continue
    }
    const factorText = record[col.factor] ?? ''
    const parsed = Factor.safeParse(factorText === '' ? Number.NaN : Number(factorText))
    if (!parsed.success) {
      errors.add(`line ${line}: ${country} factor ${JSON.stringify(factorText)}: ${factorText === '' || Number.isNaN(Number(factorText)) ? 'is not a number' : parsed.error.issues[0].message}`)
      continue
    }
    const yearText = col.year >= 0 ? (record[col.year] ?? '') : ''
    if (yearText !== '' && !/^\d{4}$/.test(yearText)) {
      errors.add(`line ${line}: year ${JSON.stringify(yearText)} is not a year such as 2024`)
      continue
    }
    addEntry(result, country, {line, value: parsed.data, year: yearText === '' ? null : Number(yearText)}, errors, raw)
  }
  errors.throwIfAny()
  return result
}

function newParsed(format: LocalizationFormat, kind: ValueKind, source: string): ParsedFactors {
  return {aggregates: [], entries: new Map(), format, kind, noValue: [], rowsRead: 0, source}
}

function addEntry(result: ParsedFactors, country: string, entry: {line: number; value: number; year: null | number}, errors: RowErrors, code: string): void {
  const prev = result.entries.get(country)
  if (prev) errors.add(`line ${entry.line}: ${code} is country ${country} again (also line ${prev.line})`)
  else result.entries.set(country, entry)
}

export type ResolvedFactors = {
  factors: LocalizationFactor[]
  /** How PPP values were converted: at the year's average rate, or the latest when that year has none. */
  fx: {latest: number; yearAverage: number}
  implausible: string[]
  noFxRate: string[]
}

/**
 * Factors from parsed values. A price level ratio is the factor. A PPP conversion factor
 * (LCU per international $) becomes PPP / market rate (LCU per USD) of the country's
 * currency: the mean of that year's rates on file, else the latest rate. Factors outside
 * [MIN_FACTOR, MAX_FACTOR] are skipped as implausible (usually a PPP in a currency unit
 * since redenominated).
 */
export async function resolveFactors(store: StorePort, parsed: ParsedFactors, source = parsed.source): Promise<ResolvedFactors> {
  const out: ResolvedFactors = {factors: [], fx: {latest: 0, yearAverage: 0}, implausible: [], noFxRate: []}
  for (const [country, {value, year}] of [...parsed.entries].sort(([a], [b]) => a.localeCompare(b))) {
    let factor = value
    if (parsed.kind === 'ppp') {
      const currency = countryCurrency(country)
      const avg = currency && year !== null ? await yearAverageRate(store, currency, year) : undefined
      const rate = avg?.rate ?? (currency ? (await rateOn(store, currency))?.rate : undefined)
      if (rate === undefined) {
        out.noFxRate.push(country)
        continue
      }
      if (currency !== 'USD') {
        if (avg) out.fx.yearAverage++
        else out.fx.latest++
      }
      factor = value / rate
    }
    if (!(factor >= MIN_FACTOR && factor <= MAX_FACTOR)) {
      out.implausible.push(country)
      continue
    }
    out.factors.push({country, factor, source, year})
  }
  return out
}
