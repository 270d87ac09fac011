import Table from 'cli-table3'
import {stringify} from 'csv-stringify/sync'

export type Column<R> = {header: string; value: (row: R) => unknown}

function cell(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** A table for people (cli-table3); no colours so it reads the same piped. */
export function table<R>(rows: R[], columns: Column<R>[]): string {
  const t = new Table({head: columns.map((c) => c.header), style: {border: [], head: []}})
  for (const r of rows) t.push(columns.map((c) => cell(c.value(r))))
  return t.toString()
}

/** Key/value table for one record. */
export function recordTable(entries: [string, unknown][]): string {
  const t = new Table({style: {border: [], head: []}})
  for (const [k, v] of entries) t.push({[k]: cell(v)})
  return t.toString()
}

/**
 * Neutralise spreadsheet formulas: a cell starting with = + - @ tab or CR gets a leading
 * quote, unless it is a plain number (negative amounts stay numbers).
 */
export function safeCell(v: unknown): string {
  const s = cell(v)
  if (/^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s)) return `'${s}`
  return s
}

export function csv<R>(rows: R[], columns: Column<R>[]): string {
  return stringify([columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => safeCell(c.value(r))))])
}
