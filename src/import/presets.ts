import {readFileSync, statSync} from 'node:fs'

import {parseJsonObject} from '../input.js'
import {resolveZone} from '../dates.js'
import {InvalidInputError} from '../errors.js'
import {CHARGE_FIELDS, ImportMapping, SUBSCRIPTION_FIELDS} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'

/**
 * Layouts of gateway exports. A preset is a mapping (the `--mapping FILE` shape) plus the
 * headers that identify it; the first preset of the command's kind whose headers are all
 * present is used, `--preset NAME` forces one. docs/revenue.md has the table.
 */

export type ImportKind = 'charges' | 'subscriptions'

export type Preset = ImportMapping & {
  /** Header groups that must all be present (any name of a group will do). */
  detect: string[][]
  kind: ImportKind
  name: string
}

export const PRESETS: Preset[] = [
  {
    amount_unit: 'major',
    columns: {
      amount: 'Amount',
      amount_refunded: 'Amount Refunded',
      // What the gateway settled in the account's currency: kept as the USD amount when that is USD.
      converted_amount: 'Converted Amount',
      converted_amount_refunded: 'Converted Amount Refunded',
      converted_currency: 'Converted Currency',
      country: ['country (metadata)', 'Card Issue Country'],
      created: ['Created date (UTC)', 'Created (UTC)'],
      currency: 'Currency',
      origin_id: 'id',
      // Tells apart the products one gateway product id names (a monthly and a yearly price).
      price: ['price_id (metadata)', 'price (metadata)', 'plan_id (metadata)', 'plan (metadata)', 'interval (metadata)', 'Price ID', 'Plan ID'],
      product: ['product (metadata)', 'product_id (metadata)', 'api_id (metadata)'],
      status: 'Status',
      // The tax the customer paid, part of Amount (docs/revenue.md, "Tax"): a payments export
      // carries it only as metadata the seller set. Its "Tax" (older layouts) and "Taxes On
      // Fee" columns are the tax on the gateway's own fee, a cost of the seller: never read as tax.
      tax: ['tax (metadata)', 'tax_amount (metadata)', 'amount_tax (metadata)'],
      user_id: ['user_id (metadata)', 'Customer ID'],
    },
    // The dashboard's exports write plain numbers ("1234.56", "0.00"; JPY "1500"), never grouped.
    decimal_separator: '.',
    description: 'gateway_a payments export (unified payments; new "Created date (UTC)" and older "Created (UTC)" layouts, and connected accounts\' exports without a customer column)',
    // No customer column here: a connected account's export has none (its user id then comes from --user-id-column or --user-id).
    detect: [['id'], ['Created date (UTC)', 'Created (UTC)'], ['Amount'], ['Amount Refunded'], ['Currency'], ['Status']],
    event_timestamp: ['Created date (UTC)', 'Created (UTC)', 'Refunded date (UTC)'],
    kind: 'charges',
    metadata_suffix: ' (metadata)',
    name: 'gateway_a_payments',
    origin: 'gateway_a',
    product_types: ['gateway_a', 'gateway_a_with_interval'],
    refunded_statuses: ['Refunded', 'Dispute lost'],
    // docs/revenue.md has the table and why each status maps where it does.
    statuses: {
      blocked: 'failed',
      canceled: 'failed',
      cancelled: 'failed',
      disputed: 'succeeded',
      'dispute lost': 'succeeded',
      'dispute won': 'succeeded',
      expired: 'failed',
      failed: 'failed',
      incomplete: 'pending',
      paid: 'succeeded',
      'partially refunded': 'succeeded',
      pending: 'pending',
      refunded: 'succeeded',
      succeeded: 'succeeded',
      uncaptured: 'pending',
    },
    thousands_separator: null,
  },
  {
    amount_unit: 'major',
    columns: {
      amount: 'Amount',
      cancel_at: ['Ended At (UTC)', 'Current Period End (UTC)'],
      canceled_at: 'Canceled At (UTC)',
      country: 'country (metadata)',
      created: ['Created (UTC)', 'Start (UTC)'],
      currency: 'Currency',
      interval: 'Interval',
      origin_id: 'id',
      product: 'Product',
      quantity: 'Quantity',
      status: 'Status',
      trial_end: 'Trial End (UTC)',
      trial_start: 'Trial Start (UTC)',
      user_id: ['user_id (metadata)', 'Customer ID'],
    },
    decimal_separator: '.',
    description: 'gateway_a subscriptions export',
    detect: [['id'], ['Customer ID'], ['Status'], ['Amount'], ['Currency'], ['Interval'], ['Product'], ['Created (UTC)'], ['Current Period Start (UTC)']],
    event_timestamp: ['Created (UTC)', 'Start (UTC)', 'Current Period Start (UTC)', 'Trial Start (UTC)', 'Canceled At (UTC)', 'Ended At (UTC)'],
    kind: 'subscriptions',
    name: 'gateway_a_subscriptions',
    origin: 'gateway_a',
    product_types: ['gateway_a', 'gateway_a_with_interval'],
    statuses: {
      active: 'active',
      canceled: 'canceled',
      incomplete: 'pending',
      incomplete_expired: 'canceled',
      past_due: 'active',
      paused: 'pending',
      trialing: 'trialing',
      unpaid: 'pending',
    },
    thousands_separator: null,
  },
  {
    amount_unit: 'major',
    columns: {
      amount: 'subscriptions.plan_unit_price',
      cancel_at: 'subscriptions.cancelled_at',
      canceled_at: 'subscriptions.cancelled_at',
      country: 'country (metadata)',
      created: ['subscriptions.created_at', 'subscriptions.start_date'],
      currency: 'subscriptions.currency_code',
      origin_id: 'subscriptions.id',
      product: 'subscriptions.plan_id',
      quantity: 'subscriptions.plan_quantity',
      status: 'subscriptions.status',
      trial_end: 'subscriptions.trial_end',
      trial_start: 'subscriptions.trial_start',
      user_id: ['user_id (metadata)', 'customers.id'],
    },
    // Plain numbers ("9.99", "1200.00"), never grouped.
    decimal_separator: '.',
    description: 'gateway_c subscriptions export',
    detect: [['subscriptions.id'], ['subscriptions.plan_id'], ['subscriptions.status'], ['subscriptions.currency_code'], ['customers.id']],
    event_timestamp: ['subscriptions.created_at', 'subscriptions.started_at', 'subscriptions.current_term_start', 'subscriptions.trial_start', 'subscriptions.cancelled_at'],
    kind: 'subscriptions',
    name: 'gateway_c_subscriptions',
    origin: 'gateway_c',
    product_types: ['gateway_c'],
    statuses: {
      active: 'active',
      cancelled: 'canceled',
      future: 'pending',
      in_trial: 'trialing',
      non_renewing: 'active',
      paused: 'pending',
    },
    thousands_separator: null,
  },
]

export const PRESET_NAMES = PRESETS.map((p) => p.name)

export function normHeader(h: string): string {
  return h.replace(/^\uFEFF/, '').trim().toLowerCase()
}

function matches(p: Preset, headers: Set<string>): boolean {
  return p.detect.every((group) => group.some((h) => headers.has(normHeader(h))))
}

/** The preset for a header row, forced by name or detected; errors say what to pass instead. */
export function choosePreset(kind: ImportKind, header: string[], forced?: string): Preset {
  const headers = new Set(header.map((h) => normHeader(h)))
  if (forced) {
    const p = PRESETS.find((x) => x.name === forced)
    if (!p) throw new InvalidInputError(`--preset: unknown preset ${JSON.stringify(forced)} (expected one of ${PRESET_NAMES.join(', ')})`)
    if (p.kind !== kind) throw new InvalidInputError(`--preset ${forced} is a ${p.kind} layout: run "pricectl ${p.kind} import" instead`)
    const missing = p.detect.filter((group) => !group.some((h) => headers.has(normHeader(h)))).map((g) => g.join(' or '))
    if (missing.length > 0) throw new InvalidInputError(`the file lacks columns of preset ${forced}: ${missing.join(', ')} (pass --mapping FILE for another layout)`)
    return p
  }
  const found = PRESETS.find((p) => p.kind === kind && matches(p, headers))
  if (found) return found
  const other = PRESETS.find((p) => p.kind !== kind && matches(p, headers))
  if (other) throw new InvalidInputError(`this file looks like a ${other.description}: run "pricectl ${other.kind} import FILE" instead`)
  const names = PRESETS.filter((p) => p.kind === kind).map((p) => p.name)
  // A layout of a known export with a column or two missing: say which, not just "unrecognised".
  const near = PRESETS.filter((p) => p.kind === kind)
    .map((p) => ({missing: p.detect.filter((group) => !group.some((h) => headers.has(normHeader(h)))), p}))
    .filter((x) => x.missing.length <= Math.floor(x.p.detect.length / 3))
    .sort((a, b) => a.missing.length - b.missing.length)[0]
  if (near) {
    const cols = near.missing.map((g) => g.map((h) => JSON.stringify(h)).join(' or '))
    throw new InvalidInputError(
      `this file looks like a ${near.p.name} export but has no ${cols.join(', ')} column${cols.length === 1 ? '' : 's'}: add ${cols.length === 1 ? 'it' : 'them'} to the export, or describe the layout with --mapping FILE (docs/revenue.md, "--mapping FILE")`,
    )
  }
  throw new InvalidInputError(
    `unrecognised header (${header.slice(0, 6).map((h) => JSON.stringify(h)).join(', ')}${header.length > 6 ? ', ...' : ''}): not a known ${kind} export (${names.join(', ')}); pass --preset NAME or describe the layout with --mapping FILE`,
  )
}

/** A `--mapping FILE`: validated, fields checked against the command's kind. */
export function loadMapping(kind: ImportKind, path: string): Preset {
  let text: string
  try {
    if (statSync(path).size > 1024 * 1024) throw new InvalidInputError(`--mapping: ${path} is over 1 MB; a mapping is a small JSON object`)
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    throw new InvalidInputError(`--mapping: cannot read ${path}: ${(error as Error).message}`)
  }
  const m = validate(ImportMapping, parseJsonObject(text.replace(/^\uFEFF/, ''), '--mapping'), 'mapping')
  resolveZone(m.time_zone, '--mapping: time_zone')
  if (m.thousands_separator === m.decimal_separator) {
    throw new InvalidInputError(`--mapping: thousands_separator and decimal_separator are both ${JSON.stringify(m.decimal_separator)}: amounts could not be read unambiguously (declare different separators, or thousands_separator null)`)
  }
  if (m.kind && m.kind !== kind) throw new InvalidInputError(`--mapping: ${path} is a ${m.kind} mapping: run "pricectl ${m.kind} import" instead`)
  const allowed: readonly string[] = kind === 'charges' ? CHARGE_FIELDS : SUBSCRIPTION_FIELDS
  const unknown = Object.keys(m.columns).filter((k) => !allowed.includes(k))
  if (unknown.length > 0) throw new InvalidInputError(`--mapping: columns: unknown field${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} (a ${kind} mapping has ${allowed.join(', ')})`)
  const unknownConstants = Object.keys(m.constants ?? {}).filter((k) => !allowed.includes(k))
  if (unknownConstants.length > 0) throw new InvalidInputError(`--mapping: constants: unknown field${unknownConstants.length === 1 ? '' : 's'} ${unknownConstants.join(', ')} (a ${kind} mapping has ${allowed.join(', ')})`)
  if (m.statuses) {
    const statuses: readonly string[] = kind === 'charges' ? ['pending', 'succeeded', 'failed'] : ['pending', 'trialing', 'active', 'canceled']
    for (const [from, to] of Object.entries(m.statuses)) {
      if (!statuses.includes(to)) throw new InvalidInputError(`--mapping: statuses.${from}: ${JSON.stringify(to)} is not a ${kind} status (expected one of ${statuses.join(', ')})`)
    }
  }
  return {...m, detect: [], kind, name: `mapping ${path}`}
}

/** What the command line changes in a layout: dates' zone, where user ids come from. */
export type LayoutOverrides = {
  /** IANA zone of dates without an offset (--tz). */
  tz?: string
  /** One user id for rows without one (--user-id), e.g. a connected account's id. */
  userId?: string
  /** The column holding user ids (--user-id-column), instead of the layout's. */
  userIdColumn?: string
}

/** The layout with the command line's overrides; a --user-id-column the header lacks is refused with the header's columns. */
export function withOverrides(layout: Preset, o: LayoutOverrides, header: string[]): Preset {
  let out = layout
  if (o.tz !== undefined) out = {...out, time_zone: o.tz}
  if (o.userIdColumn !== undefined) {
    const wanted = normHeader(o.userIdColumn)
    if (!header.some((h) => normHeader(h) === wanted)) {
      const shown = header.slice(0, 20).map((h) => JSON.stringify(h.replace(/^\uFEFF/, '').trim()))
      throw new InvalidInputError(`--user-id-column: the file has no column ${JSON.stringify(o.userIdColumn)} (its columns: ${shown.join(', ')}${header.length > 20 ? ', ...' : ''}); or pass --user-id VALUE for one user id on every row`)
    }
    out = {...out, columns: {...out.columns, user_id: o.userIdColumn}}
  }
  if (o.userId !== undefined) {
    if (o.userId.trim() === '') throw new InvalidInputError('--user-id: expected a user id, got an empty value')
    out = {...out, constants: {...out.constants, user_id: o.userId.trim()}}
  }
  return out
}
