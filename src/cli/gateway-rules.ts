import type {GatewayTableJson, RuleJson} from '../pricing/gateways.js'
import {type Column, recordTable, table} from './render.js'

/** Human text for gateway currency rules (`gateways show`, `gateways set --currency`). */

const SOURCE_LABEL: Record<RuleJson['source'], string> = {default: 'table default', store: 'stored override', table: 'table entry'}

function amount(decimal: null | string, units: null | number, currency: string): string {
  return decimal === null ? 'none' : `${decimal} ${currency} (${units} units)`
}

/** How the gateway's `amount` is written: "integers in 1/100 HUF (1234.00 HUF is 123400)". */
function unitText(r: RuleJson): string {
  const example = `1234${r.exponent > 0 ? '.' + '0'.repeat(r.exponent) : ''} ${r.currency}`
  return r.amount_format === 'minor'
    ? `amounts are sent as integers in 1/${10 ** r.exponent} ${r.currency}: ${example} is ${1234 * 10 ** r.exponent}`
    : `amounts are sent as decimal numbers with at most ${r.exponent} decimal${r.exponent === 1 ? '' : 's'}: ${example} is 1234`
}

/** One line: "exponent 2, divisible by 100, min none, max 999999.99 ISK (table entry)". */
export function describeRule(r: RuleJson): string {
  const min = r.min === null ? 'no minimum' : `min ${r.min} ${r.currency}`
  const max = r.max === null ? 'no maximum' : `max ${r.max} ${r.currency}`
  return `exponent ${r.exponent}, divisible by ${r.divisible_by}, ${min}, ${max} (${SOURCE_LABEL[r.source]})`
}

/** Key/value table of one rule with where it comes from and the table's sources. */
export function ruleRecord(r: RuleJson, sources: readonly string[]): string {
  const rows: [string, unknown][] = [
    ['gateway', `${r.gateway} (follows ${r.model})`],
    ['currency', r.currency + (r.listed === false ? ` (not in ${r.model}'s published list)` : '')],
    ['accepted', r.accepted ? `yes: ${r.currency} prices are sent in ${r.currency}` : `no: ${r.currency} prices are sent in the fallback currency`],
    ['exponent', `${r.exponent} (${unitText(r)})`],
    ['divisible by', r.divisible_by],
    ['minimum', amount(r.min, r.min_amount, r.currency)],
    ['maximum', amount(r.max, r.max_amount, r.currency)],
    ['note', r.note ?? ''],
    ['source', `${SOURCE_LABEL[r.source]}: ${r.source_text}`],
  ]
  if (r.source === 'store') {
    const t = r.table
    rows.push(['table', `exponent ${t.exponent}, divisible by ${t.divisible_by}, min ${t.min_amount ?? 'none'}, max ${t.max_amount ?? 'none'} units (${SOURCE_LABEL[t.source]}; restore with --default)`])
  }
  rows.push(['sources', sources.join('\n')])
  return recordTable(rows)
}

/** The table's entries (and stored overrides), one row per currency, after a row for the default. */
export function tableListing(t: GatewayTableJson): string {
  type Row = {currency: string; divisible_by: number; exponent: number | string; max: string; min: string; note: string; source: string}
  const d = t.default
  const rows: Row[] = [
    {
      currency: '(any other)',
      divisible_by: d.divisible_by,
      exponent: d.exponent === 'iso' ? 'ISO 4217' : d.exponent,
      max: d.max_amount === null ? 'none' : `${d.max_amount} units`,
      min: d.min_amount === null ? 'none' : `${d.min_amount} units`,
      note: '',
      source: 'table default',
    },
    ...t.entries.map((e) => ({
      currency: e.currency,
      divisible_by: e.divisible_by,
      exponent: e.exponent,
      max: e.max ?? 'none',
      min: e.min ?? 'none',
      note: e.note ?? '',
      source: SOURCE_LABEL[e.source],
    })),
  ]
  const columns: Column<Row>[] = [
    {header: 'currency', value: (r) => r.currency},
    {header: 'exponent', value: (r) => r.exponent},
    {header: 'divisible by', value: (r) => r.divisible_by},
    {header: 'min', value: (r) => r.min},
    {header: 'max', value: (r) => r.max},
    {header: 'source', value: (r) => r.source},
    {header: 'note', value: (r) => r.note},
  ]
  return table(rows, columns)
}
