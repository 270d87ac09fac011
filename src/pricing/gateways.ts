import {nowIso} from '../clock.js'
import {convertMinor, minorDigits, minorToDecimalString} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import {GATEWAYS} from '../schemas/common.js'
import {GatewaySettingsInput} from '../schemas/gateways.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {type GatewayRule, gatewayRule, type ResolvedRule, type RuleOverride} from '../money/gateway-tables.js'
import {type Constraint, displayStep, gatewayDecimal, gatewayStep, nearestPoints, representablePrice, toGatewayUnits} from '../money/representable.js'
import {formatMoney} from './display.js'

/**
 * Gateway price objects (DESIGN "The price calculation", step 8): what to pass to each
 * payment gateway. The arithmetic is pure; the store section at the end reads and writes
 * the gateways table.
 */

export type GatewayId = (typeof GATEWAYS)[number]

export function isGateway(id: string): id is GatewayId {
  return (GATEWAYS as readonly string[]).includes(id)
}
export type AmountFormat = 'decimal' | 'minor'

export type GatewaySettings = {
  /** Currency codes the gateway charges in, or "*" for any. */
  accepted_currencies: '*' | string[]
  amount_format: AmountFormat
  /** Currency used when the gateway does not accept the local one. */
  fallback_currency: string
  gateway: GatewayId
}

/**
 * Settings when nothing is stored: every gateway accepts any currency and falls back to
 * USD. gateway_a and gateway_d take integer minor units (smallest-unit APIs);
 * gateway_b and gateway_c take decimal amounts.
 */
export const DEFAULT_GATEWAY_SETTINGS: Readonly<Record<GatewayId, GatewaySettings>> = {
  gateway_a: {accepted_currencies: '*', amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_a'},
  gateway_b: {accepted_currencies: '*', amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_b'},
  gateway_c: {accepted_currencies: '*', amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_c'},
  gateway_d: {accepted_currencies: '*', amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_d'},
}

export type GatewayPrice = {amount: number; currency: string; formatted: string}

export function acceptsCurrency(settings: GatewaySettings, currency: string): boolean {
  return settings.accepted_currencies === '*' || settings.accepted_currencies.includes(currency)
}

export type GatewayPriceInput = {
  /** Buyer's country: the locale of `formatted`. */
  country: string
  /** Currency of the price (the quote's currency). */
  currency: string
  /** The price in integer minor units of `currency` (storage exponent). */
  priceMinor: number
  /** FX rate of a currency in units per 1 USD; undefined when none is on file. */
  rateOf: (currency: string) => number | undefined
  /** The gateway's rule for a currency (stored overrides included); default: its shipped table. */
  ruleOf?: (currency: string) => GatewayRule
  settings: GatewaySettings
  /**
   * Currencies of the product's plans on this gateway (gateway_d plans carry one): the
   * amount is in the local currency when a plan has it, else in the first plan's currency.
   */
  plans?: readonly string[]
}

/**
 * The gateway's currency and the price in it, in storage minor units: the local currency
 * when the gateway accepts it, else its fallback, converted by FX and moved to the nearest
 * amount the gateway can charge exactly in that currency.
 */
export function gatewayAmountMinor(input: Omit<GatewayPriceInput, 'country'>): {currency: string; minor: number} {
  const {currency, plans, priceMinor, rateOf, settings} = input
  const planned = plans !== undefined && plans.length > 0
  if (planned ? plans.includes(currency) : acceptsCurrency(settings, currency)) return {currency, minor: priceMinor}
  const target = planned ? plans[0] : settings.fallback_currency
  const fromRate = rateOf(currency)
  const toRate = rateOf(target)
  for (const [code, rate] of [
    [currency, fromRate],
    [target, toRate],
  ] as const) {
    if (rate === undefined || !(rate > 0)) {
      throw new InvalidInputError(
        `${settings.gateway} ${planned ? `has no ${currency} plan for this product and charges its ${target} plan` : `does not accept ${currency} and falls back to ${target}`}, but there is no FX rate for ${code}: add one with "pricectl fx set ${code} RATE"`,
      )
    }
  }
  const converted = convertMinor(priceMinor, currency, fromRate!, target, toRate!)
  const rule = (input.ruleOf ?? ((c: string) => gatewayRule(settings.gateway, c)))(target)
  return {currency: target, minor: representablePrice(converted, target, [{gateway: settings.gateway, rule}]).minor}
}

/**
 * The spec's gateway price object. `amount` is the gateway's integer amount in its own
 * exponent for `minor` gateways (Stripe ISK 2400 kr -> 240000), the decimal number for
 * `decimal` ones; `formatted` is the same amount in the buyer's locale. A price that is
 * not a point the gateway can charge exactly (a lock made before the rule) is rounded half
 * up to the gateway's unit.
 */
export function gatewayPrice(input: GatewayPriceInput): GatewayPrice {
  const {currency, minor} = gatewayAmountMinor(input)
  const rule = (input.ruleOf ?? ((c: string) => gatewayRule(input.settings.gateway, c)))(currency)
  const units = toGatewayUnits(minor, currency, rule) ?? roundToUnits(minor, currency, rule)
  return {
    amount: input.settings.amount_format === 'minor' ? units : gatewayDecimal(units, rule),
    currency,
    formatted: formatMoney(minor, currency, input.country),
  }
}

function roundToUnits(minor: number, currency: string, rule: GatewayRule): number {
  const scale = 10 ** (minorDigits(currency) - rule.exponent)
  return Math.sign(minor) * Math.floor((Math.abs(minor) + scale / 2) / scale)
}

/** The constraint a gateway puts on price points in a currency it accepts; none when it falls back. */
export function gatewayConstraint(settings: GatewaySettings, currency: string, ruleOf?: (currency: string) => GatewayRule): Constraint | undefined {
  if (!acceptsCurrency(settings, currency)) return undefined
  return {gateway: settings.gateway, rule: ruleOf ? ruleOf(currency) : gatewayRule(settings.gateway, currency)}
}

// ---------------------------------------------------------------------------------------
// Store: table gateways (settings; accepted_currencies is a JSON array or "*")

export type GatewaySettingsEntry = GatewaySettings & {source: 'default' | 'store'}

type Row = {accepted_currencies: string; amount_format: 'decimal' | 'minor'; fallback_currency: string; gateway: GatewayId}

function fromRow(row: Row): GatewaySettings {
  return {
    accepted_currencies: row.accepted_currencies === '*' ? '*' : (JSON.parse(row.accepted_currencies) as string[]),
    amount_format: row.amount_format,
    fallback_currency: row.fallback_currency,
    gateway: row.gateway,
  }
}

/** Settings of every gateway (stored, else the default), in gateway order. */
export function listGatewaySettings(db: DB): GatewaySettingsEntry[] {
  const rows = db.prepare('SELECT gateway, accepted_currencies, fallback_currency, amount_format FROM gateways').all() as Row[]
  const stored = new Map(rows.map((r) => [r.gateway, fromRow(r)]))
  return GATEWAYS.map((g) => {
    const s = stored.get(g)
    return s ? {...s, source: 'store' as const} : {...DEFAULT_GATEWAY_SETTINGS[g], source: 'default' as const}
  })
}

/** Settings of all gateways read once, for pricing (one query, not one per gateway). */
export function gatewaySettingsMap(db: DB): Record<GatewayId, GatewaySettings> {
  const out = {} as Record<GatewayId, GatewaySettings>
  for (const {source: _source, ...s} of listGatewaySettings(db)) out[s.gateway] = s
  return out
}

/** Settings of one gateway (stored, else the default); an unknown gateway id is an input error. */
export function gatewaySettings(db: DB, gateway: string): GatewaySettingsEntry {
  if (!isGateway(gateway)) throw new InvalidInputError(`unknown gateway ${JSON.stringify(gateway)} (expected one of ${GATEWAYS.join(', ')})`)
  const row = db.prepare('SELECT gateway, accepted_currencies, fallback_currency, amount_format FROM gateways WHERE gateway = ?').get(gateway) as Row | undefined
  return row ? {...fromRow(row), source: 'store'} : {...DEFAULT_GATEWAY_SETTINGS[gateway], source: 'default'}
}

/** Store a gateway's settings (validated by the caller with schemas/gateways.ts). */
export function saveGatewaySettings(db: DB, s: GatewaySettings): void {
  db.prepare(
    `INSERT INTO gateways (gateway, accepted_currencies, fallback_currency, amount_format) VALUES (?, ?, ?, ?)
     ON CONFLICT (gateway) DO UPDATE SET accepted_currencies = excluded.accepted_currencies,
       fallback_currency = excluded.fallback_currency, amount_format = excluded.amount_format`,
  ).run(s.gateway, s.accepted_currencies === '*' ? '*' : JSON.stringify(s.accepted_currencies), s.fallback_currency, s.amount_format)
}

/** Drop stored settings so the gateway uses its defaults again; false when none were stored. */
export function resetGatewaySettings(db: DB, gateway: GatewayId): boolean {
  return db.prepare('DELETE FROM gateways WHERE gateway = ?').run(gateway).changes > 0
}

/** A gateway's settings as `gateways list/set --json` prints them: "*" becomes ["*"] so the field is always a list. */
export type GatewayEntryJson = {
  accepted_currencies: string[]
  amount_format: AmountFormat
  fallback_currency: string
  gateway: GatewayId
  source: 'default' | 'store'
}

export function gatewayEntryJson(s: GatewaySettingsEntry): GatewayEntryJson {
  return {
    accepted_currencies: s.accepted_currencies === '*' ? ['*'] : [...s.accepted_currencies],
    amount_format: s.amount_format,
    fallback_currency: s.fallback_currency,
    gateway: s.gateway,
    source: s.source,
  }
}

const SETTABLE = ['accepted_currencies', 'fallback_currency', 'amount_format'] as const

/**
 * `gateways set`: merge the given fields over the gateway's current settings, validate
 * the result and store it; or, with "default", drop the stored settings.
 */
export function configureGateway(db: DB, gateway: string, changes: 'default' | Record<string, unknown>): {reset: boolean; settings: GatewaySettingsEntry} {
  const current = gatewaySettings(db, gateway)
  if (changes === 'default') {
    resetGatewaySettings(db, current.gateway)
    return {reset: true, settings: gatewaySettings(db, gateway)}
  }
  const unknown = Object.keys(changes).filter((k) => !(SETTABLE as readonly string[]).includes(k))
  if (unknown.length > 0) throw new InvalidInputError(`unknown field ${unknown.map((k) => JSON.stringify(k)).join(', ')} (expected ${SETTABLE.join(', ')})`)
  const {source: _source, ...base} = current
  const valid = validate(GatewaySettingsInput, {...base, ...changes, gateway: current.gateway}, `settings of ${current.gateway}`)
  saveGatewaySettings(db, valid)
  return {reset: false, settings: {...valid, source: 'store'}}
}

// ---------------------------------------------------------------------------------------
// Store: table gateway_currency_rules (overrides of the shipped currency tables)

type RuleRow = {currency: string; divisible_by: number; exponent: number; gateway: GatewayId; max_amount: null | number; min_amount: null | number}

/** Every stored override, keyed `gateway|currency`. */
export function ruleOverrides(db: DB): Map<string, RuleOverride> {
  const rows = db.prepare('SELECT gateway, currency, exponent, divisible_by, min_amount, max_amount FROM gateway_currency_rules').all() as RuleRow[]
  return new Map(rows.map((r) => [`${r.gateway}|${r.currency}`, r]))
}

/** A gateway's rule for a currency with where it comes from (stored override, table entry, table default). */
export function resolveRule(db: DB, gateway: GatewayId, currency: string): ResolvedRule {
  return gatewayRule(gateway, currency, ruleOverrides(db).get(`${gateway}|${currency}`))
}

export const RULE_FIELDS = ['exponent', 'divisible_by', 'min_amount', 'max_amount'] as const

/**
 * `gateways set GATEWAY --currency CODE`: merge the given fields over the rule in force
 * and store the whole rule; "default" drops the override.
 */
export function configureRule(db: DB, gateway: GatewayId, currency: string, changes: 'default' | Partial<GatewayRule>): {reset: boolean; rule: ResolvedRule} {
  if (changes === 'default') {
    const reset = db.prepare('DELETE FROM gateway_currency_rules WHERE gateway = ? AND currency = ?').run(gateway, currency).changes > 0
    return {reset, rule: resolveRule(db, gateway, currency)}
  }
  const current = resolveRule(db, gateway, currency)
  const rule = {...pickRule(current), ...changes}
  if (!Number.isInteger(rule.exponent) || rule.exponent < 0 || rule.exponent > 6) throw new InvalidInputError(`exponent: expected a whole number from 0 to 6, got ${rule.exponent}`)
  if (!Number.isSafeInteger(rule.divisible_by) || rule.divisible_by < 1) throw new InvalidInputError(`divisible_by: expected a whole number >= 1, got ${rule.divisible_by}`)
  for (const k of ['min_amount', 'max_amount'] as const) {
    const v = rule[k]
    if (v !== null && (!Number.isSafeInteger(v) || v < 0)) throw new InvalidInputError(`${k}: expected a whole number of ${gateway} units (or none), got ${v}`)
  }
  if (rule.min_amount !== null && rule.max_amount !== null && rule.min_amount > rule.max_amount) {
    throw new InvalidInputError(`min_amount ${rule.min_amount} is above max_amount ${rule.max_amount}`)
  }
  db.prepare(
    `INSERT INTO gateway_currency_rules (gateway, currency, exponent, divisible_by, min_amount, max_amount, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (gateway, currency) DO UPDATE SET exponent = excluded.exponent, divisible_by = excluded.divisible_by,
       min_amount = excluded.min_amount, max_amount = excluded.max_amount, updated_at = excluded.updated_at`,
  ).run(gateway, currency, rule.exponent, rule.divisible_by, rule.min_amount, rule.max_amount, nowIso())
  return {reset: false, rule: resolveRule(db, gateway, currency)}
}

export function pickRule(r: GatewayRule): GatewayRule {
  return {divisible_by: r.divisible_by, exponent: r.exponent, max_amount: r.max_amount, min_amount: r.min_amount}
}

/** Gateway ids of a product's integration objects (gateway_a_with_interval charges through gateway_a). */
export function integrationGateways(integrations: readonly {type: string}[]): GatewayId[] {
  const out = new Set<GatewayId>()
  for (const i of integrations) {
    const g = i.type === 'gateway_a_with_interval' ? 'gateway_a' : i.type
    if (isGateway(g)) out.add(g)
  }
  return [...out]
}

/**
 * Why a fixed price (a country price) cannot be shown and charged exactly, or undefined
 * when it can: every gateway the product charges through that takes the currency must
 * represent it, inside its minimum and maximum, and the display must show it as it is.
 * A product that names no integration may be charged through any gateway (or a custom
 * one): every gateway's exactness rules apply, not their minimums. The message names the
 * gateway, the rule and the nearest valid amounts.
 */
export function unchargeableReason(db: DB, amountMinor: number, currency: string, gateways: readonly GatewayId[]): string | undefined {
  const settings = gatewaySettingsMap(db)
  const overrides = ruleOverrides(db)
  const constraints: Constraint[] = []
  for (const g of gateways.length > 0 ? gateways : GATEWAYS) {
    if (acceptsCurrency(settings[g], currency)) constraints.push({gateway: g, rule: gatewayRule(g, currency, overrides.get(`${g}|${currency}`))})
  }
  const text = (m: number) => minorToDecimalString(m, minorDigits(currency))
  const reasons: string[] = []
  if (amountMinor % displayStep(currency) !== 0) reasons.push(`${currency} is shown in steps of ${text(displayStep(currency))}`)
  for (const {gateway, rule} of constraints) {
    if (amountMinor % gatewayStep(currency, rule) !== 0) {
      reasons.push(`${gateway} takes ${currency} with ${rule.exponent} decimals${rule.divisible_by > 1 ? `, amounts divisible by ${rule.divisible_by}` : ''}`)
    }
  }
  if (reasons.length > 0) {
    const [lo, hi] = nearestPoints(amountMinor, currency, constraints)
    return `${text(amountMinor)} ${currency} cannot be shown and charged exactly (${reasons.join('; ')}): use ${text(lo)}${hi === lo ? '' : ` or ${text(hi)}`}`
  }
  if (amountMinor === 0 || gateways.length === 0) return undefined
  try {
    const r = representablePrice(amountMinor, currency, constraints)
    if (r.minor !== amountMinor) return `${text(amountMinor)} ${currency} cannot be charged (${r.moves.map((m) => m.reason).join('; ')}): use ${text(r.minor)} or more`
  } catch (error) {
    if (error instanceof InvalidInputError) return error.message
    throw error
  }
  return undefined
}
