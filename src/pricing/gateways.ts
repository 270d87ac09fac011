import {nowIso} from '../clock.js'
import {convertMinor, fromMinor, MAX_MINOR, minorDigits, minorToDecimalString} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import {GATEWAYS} from '../schemas/no-zod.js'
import type {StorePort} from '../store/port.js'
import {GATEWAY_TABLES, type GatewayId, type GatewayRule, gatewayRule, type ResolvedRule, type RuleOverride, type RuleSource} from '../money/gateway-tables.js'
import {type Constraint, displayStep, gatewayDecimal, gatewayStep, type Move, nearestPoints, representablePrice, toGatewayUnits} from '../money/representable.js'
import {formatMoney} from './display.js'

/**
 * Gateway price objects (DESIGN "The price calculation", step 8): what to pass to each
 * payment gateway. The arithmetic is pure; the store section at the end reads and writes
 * the gateways table.
 */

export type {GatewayId}

export function isGateway(id: string): id is GatewayId {
  return (GATEWAYS as readonly string[]).includes(id)
}
export type AmountFormat = 'decimal' | 'minor'

/**
 * Which currencies a gateway is sent: "listed", the published list of the real gateway its
 * table follows (any currency when the table records none); "*", any currency; or the
 * operator's own list.
 */
export type AcceptedCurrencies = '*' | 'listed' | string[]

export type GatewaySettings = {
  accepted_currencies: AcceptedCurrencies
  amount_format: AmountFormat
  /** Currency used when the gateway does not accept the local one. */
  fallback_currency: string
  gateway: GatewayId
}

/**
 * Settings when nothing is stored: every gateway accepts the currencies its real gateway
 * publishes (its table's list; gateway_c's table records none: any) and falls back to USD;
 * its amounts are in the format its real API takes (the table's `amount_format`):
 * integers in the smallest unit for gateway_a (Stripe), gateway_c (Chargebee) and
 * gateway_d (Paddle), decimal numbers for gateway_b (PayPal).
 */
export const DEFAULT_GATEWAY_SETTINGS: Readonly<Record<GatewayId, GatewaySettings>> = Object.fromEntries(
  GATEWAYS.map((g) => [g, {accepted_currencies: 'listed', amount_format: GATEWAY_TABLES[g].amount_format, fallback_currency: 'USD', gateway: g}]),
) as Record<GatewayId, GatewaySettings>

/** Each table's published list as a set (acceptsCurrency runs for every gateway object). */
const LISTED = Object.fromEntries(GATEWAYS.map((g) => [g, GATEWAY_TABLES[g].currencies ? new Set(GATEWAY_TABLES[g].currencies) : undefined])) as Record<
  GatewayId,
  ReadonlySet<string> | undefined
>

/** The spec's gateway price object; `adjusted_from` (the locked price) only when the gateway charges another amount of the same currency. */
export type GatewayPrice = {amount: number; currency: string; formatted: string; adjusted_from?: number}

export function acceptsCurrency(settings: GatewaySettings, currency: string): boolean {
  const accepted = settings.accepted_currencies
  if (accepted === '*') return true
  if (accepted === 'listed') return LISTED[settings.gateway]?.has(currency) ?? true
  return accepted.includes(currency)
}

/** The accepted currencies in words, for messages: "any currency", "PayPal's published list (25 currencies)", "EUR,USD". */
export function acceptedText(settings: Pick<GatewaySettings, 'accepted_currencies' | 'gateway'>): string {
  const accepted = settings.accepted_currencies
  if (accepted === '*') return 'any currency'
  if (accepted === 'listed') {
    const table = GATEWAY_TABLES[settings.gateway]
    return table.currencies ? `${table.models}'s published list (${table.currencies.length} currencies)` : `any currency (${table.models} publishes no list)`
  }
  return accepted.join(',')
}

export type GatewayPriceInput = {
  /** Buyer's country: the locale of `formatted`. */
  country: string
  /** Currency of the price (the quote's currency). */
  currency: string
  /** Formats an amount for the buyer (default: formatMoney in `country`'s locale). */
  format?: (minor: number, currency: string) => string
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
 * The gateway's currency and the price it charges in it, in storage minor units: the local
 * currency when the gateway accepts it, else its fallback, converted by FX; either way moved
 * to the nearest amount the gateway can charge exactly (its step, then up to its minimum;
 * above its maximum is an error). `moves` says what moved a price in the local currency.
 */
export function gatewayAmountMinor(input: Omit<GatewayPriceInput, 'country'>): {currency: string; minor: number; moves: Move[]} {
  const {currency, plans, priceMinor, rateOf, settings} = input
  const ruleOf = input.ruleOf ?? ((c: string) => gatewayRule(settings.gateway, c))
  const planned = plans !== undefined && plans.length > 0
  if (planned ? plans.includes(currency) : acceptsCurrency(settings, currency)) {
    const r = representablePrice(priceMinor, currency, [{gateway: settings.gateway, rule: ruleOf(currency)}], 'nearest', false)
    return {currency, minor: r.minor, moves: r.moves}
  }
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
  return {currency: target, minor: representablePrice(converted, target, [{gateway: settings.gateway, rule: ruleOf(target)}]).minor, moves: []}
}

/**
 * The spec's gateway price object: the locked price made chargeable for the gateway.
 * `amount` is the gateway's integer amount in its own exponent for `minor` gateways
 * (Stripe ISK 2400 kr -> 240000), the decimal number for `decimal` ones; `formatted` is
 * the same amount in the buyer's locale. When the gateway cannot charge the locked price
 * itself in its currency (below its minimum, not a multiple of its step: a gateway the
 * product is not linked to), the object carries the amount it can charge and
 * `adjusted_from`, the locked price; `formatted` always matches `amount`.
 */
export function gatewayPrice(input: GatewayPriceInput): GatewayPrice {
  const {currency, minor} = gatewayAmountMinor(input)
  const rule = (input.ruleOf ?? ((c: string) => gatewayRule(input.settings.gateway, c)))(currency)
  const units = toGatewayUnits(minor, currency, rule)
  // representablePrice returned a multiple of the gateway's step: exact in its units.
  if (units === undefined) throw new Error(`${minor} ${currency} is not a whole number of ${input.settings.gateway} units`)
  const price: GatewayPrice = {
    amount: input.settings.amount_format === 'minor' ? units : gatewayDecimal(units, rule),
    currency,
    formatted: input.format ? input.format(minor, currency) : formatMoney(minor, currency, input.country),
  }
  if (currency === input.currency && minor !== input.priceMinor) price.adjusted_from = fromMinor(input.priceMinor, currency)
  return price
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
  const a = row.accepted_currencies
  return {
    accepted_currencies: a === '*' || a === 'listed' ? a : (JSON.parse(a) as string[]),
    amount_format: row.amount_format,
    fallback_currency: row.fallback_currency,
    gateway: row.gateway,
  }
}

/** Settings of every gateway (stored, else the default), in gateway order. */
export async function listGatewaySettings(store: StorePort): Promise<GatewaySettingsEntry[]> {
  const rows = await store.config.gatewaySettings() as Row[]
  const stored = new Map(rows.map((r) => [r.gateway, fromRow(r)]))
  return GATEWAYS.map((g) => {
    const s = stored.get(g)
    return s ? {...s, source: 'store' as const} : {...DEFAULT_GATEWAY_SETTINGS[g], source: 'default' as const}
  })
}

/** Settings of all gateways read once, for pricing (one query, not one per gateway). */
export async function gatewaySettingsMap(store: StorePort): Promise<Record<GatewayId, GatewaySettings>> {
  const out = {} as Record<GatewayId, GatewaySettings>
  for (const {source: _source, ...s} of await listGatewaySettings(store)) out[s.gateway] = s
  return out
}

/** Settings of one gateway (stored, else the default); an unknown gateway id is an input error. */
export async function gatewaySettings(store: StorePort, gateway: string): Promise<GatewaySettingsEntry> {
  if (!isGateway(gateway)) throw new InvalidInputError(`unknown gateway ${JSON.stringify(gateway)} (expected one of ${GATEWAYS.join(', ')})`)
  const row = (await store.config.gatewaySettings() as Row[]).find((r) => r.gateway === gateway)
  return row ? {...fromRow(row), source: 'store'} : {...DEFAULT_GATEWAY_SETTINGS[gateway], source: 'default'}
}

/** Store a gateway's settings (validated by the caller with schemas/gateways.ts). */
export async function saveGatewaySettings(store: StorePort, s: GatewaySettings): Promise<void> {
  const a = s.accepted_currencies
  await store.config.saveGatewaySettings({accepted_currencies: a === '*' || a === 'listed' ? a : JSON.stringify(a), amount_format: s.amount_format, fallback_currency: s.fallback_currency, gateway: s.gateway})
}

/** Drop stored settings so the gateway uses its defaults again; false when none were stored. */
export async function resetGatewaySettings(store: StorePort, gateway: GatewayId): Promise<boolean> {
  return await store.config.deleteGatewaySettings(gateway)
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
    accepted_currencies: s.accepted_currencies === '*' || s.accepted_currencies === 'listed' ? [s.accepted_currencies] : [...s.accepted_currencies],
    amount_format: s.amount_format,
    fallback_currency: s.fallback_currency,
    gateway: s.gateway,
    source: s.source,
  }
}

// ---------------------------------------------------------------------------------------
// Store: table gateway_currency_rules (overrides of the shipped currency tables)

type RuleRow = {currency: string; divisible_by: number; exponent: number; gateway: GatewayId; max_amount: null | number; min_amount: null | number}

/** Every stored override, keyed `gateway|currency`. */
export async function ruleOverrides(store: StorePort): Promise<Map<string, RuleOverride>> {
  const rows = await store.config.gatewayRuleOverrides() as RuleRow[]
  return new Map(rows.map((r) => [`${r.gateway}|${r.currency}`, r]))
}

/** A gateway's rule for a currency with where it comes from (stored override, table entry, table default). */
export async function resolveRule(store: StorePort, gateway: GatewayId, currency: string): Promise<ResolvedRule> {
  return gatewayRule(gateway, currency, (await ruleOverrides(store)).get(`${gateway}|${currency}`))
}

export const RULE_FIELDS = ['exponent', 'divisible_by', 'min_amount', 'max_amount'] as const

/**
 * `gateways set GATEWAY --currency CODE`: merge the given fields over the rule in force
 * and store the whole rule; "default" drops the override.
 */
export async function configureRule(store: StorePort, gateway: GatewayId, currency: string, changes: 'default' | Partial<GatewayRule>): Promise<{reset: boolean; rule: ResolvedRule}> {
  if (changes === 'default') {
    const reset = await store.config.deleteGatewayRuleOverride(gateway, currency)
    return {reset, rule: await resolveRule(store, gateway, currency)}
  }
  const current = await resolveRule(store, gateway, currency)
  const rule = {...pickRule(current), ...changes}
  if (!Number.isInteger(rule.exponent) || rule.exponent < 0 || rule.exponent > 6) throw new InvalidInputError(`exponent: expected a whole number from 0 to 6, got ${rule.exponent}`)
  if (!Number.isSafeInteger(rule.divisible_by) || rule.divisible_by < 1) throw new InvalidInputError(`divisible_by: expected a whole number >= 1, got ${rule.divisible_by}`)
  for (const k of ['min_amount', 'max_amount'] as const) {
    const v = rule[k]
    // The store requires max_amount >= 1 (a gateway that charges nothing is not a bound).
    const least = k === 'max_amount' ? 1 : 0
    if (v !== null && (!Number.isSafeInteger(v) || v < least)) throw new InvalidInputError(`${k}: expected a whole number >= ${least} of ${gateway} units (or none), got ${v}`)
  }
  if (rule.min_amount !== null && rule.max_amount !== null && rule.min_amount > rule.max_amount) {
    throw new InvalidInputError(`min_amount ${rule.min_amount} is above max_amount ${rule.max_amount}`)
  }
  await store.config.saveGatewayRuleOverride({currency, divisible_by: rule.divisible_by, exponent: rule.exponent, gateway, max_amount: rule.max_amount, min_amount: rule.min_amount}, nowIso())
  return {reset: false, rule: await resolveRule(store, gateway, currency)}
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
 * gateway, the rule and the nearest valid amounts. Settings and overrides are read once
 * per check, for the many prices of an import.
 */
export async function chargeabilityCheck(store: StorePort): Promise<(amountMinor: number, currency: string, gateways: readonly GatewayId[]) => string | undefined> {
  const settings = await gatewaySettingsMap(store)
  const overrides = await ruleOverrides(store)
  return (amountMinor, currency, gateways) => reasonFor(settings, overrides, amountMinor, currency, gateways, true)
}

/**
 * Like chargeabilityCheck, for an amount that is not charged by itself (a coupon's fixed
 * discount): only whether the display and the gateways can carry it exactly, not their
 * minimum or maximum.
 */
export async function exactnessCheck(store: StorePort): Promise<(amountMinor: number, currency: string, gateways: readonly GatewayId[]) => string | undefined> {
  const settings = await gatewaySettingsMap(store)
  const overrides = await ruleOverrides(store)
  return (amountMinor, currency, gateways) => reasonFor(settings, overrides, amountMinor, currency, gateways, false)
}

function reasonFor(
  settings: Record<GatewayId, GatewaySettings>,
  overrides: Map<string, RuleOverride>,
  amountMinor: number,
  currency: string,
  gateways: readonly GatewayId[],
  bounds: boolean,
): string | undefined {
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
  if (!bounds || amountMinor === 0 || gateways.length === 0) return undefined
  try {
    const r = representablePrice(amountMinor, currency, constraints)
    if (r.minor !== amountMinor) return `${text(amountMinor)} ${currency} cannot be charged (${r.moves.map((m) => m.reason).join('; ')}): use ${text(r.minor)} or more`
  } catch (error) {
    if (error instanceof InvalidInputError) return error.message
    throw error
  }
  return undefined
}

// ---------------------------------------------------------------------------------------
// gateways show / gateways set --currency

/** `gateways set --currency` flags as typed: whole numbers, decimal amounts or "none". */
export type RuleFlags = {divisible_by?: string; exponent?: string; max?: string; min?: string}

/** A rule as `gateways show/set --json` print it: the gateway's units and the same bounds as decimal amounts. */
export type RuleJson = {
  /** Whether the gateway is sent this currency under the store's settings (else its fallback currency). */
  accepted: boolean
  /** The gateway's amount format in this store (`gateways set --amount-format`): how its `amount` is written. */
  amount_format: AmountFormat
  currency: string
  divisible_by: number
  exponent: number
  gateway: GatewayId
  /** Whether the model's published currency list names the currency; null when the table records no list. */
  listed: boolean | null
  /** max_amount as a decimal amount of the currency ("999999.99"), null when unbounded. */
  max: null | string
  max_amount: null | number
  min: null | string
  min_amount: null | number
  model: string
  note: null | string
  source: RuleSource
  source_text: string
  /** The shipped table's rule: what `gateways set --currency CODE --default` goes back to. */
  table: {divisible_by: number; exponent: number; max_amount: null | number; min_amount: null | number; source: RuleSource}
}

const bound = (units: null | number, exponent: number) => (units === null ? null : minorToDecimalString(units, exponent))

async function toRuleJson(store: StorePort, gateway: GatewayId, currency: string, rule: ResolvedRule): Promise<RuleJson> {
  const shipped = gatewayRule(gateway, currency)
  const table = GATEWAY_TABLES[gateway]
  const settings = await gatewaySettings(store, gateway)
  return {
    accepted: acceptsCurrency(settings, currency),
    amount_format: settings.amount_format,
    currency,
    divisible_by: rule.divisible_by,
    exponent: rule.exponent,
    gateway,
    listed: table.currencies ? table.currencies.includes(currency) : null,
    max: bound(rule.max_amount, rule.exponent),
    max_amount: rule.max_amount,
    min: bound(rule.min_amount, rule.exponent),
    min_amount: rule.min_amount,
    model: table.models,
    note: shipped.note ?? null,
    source: rule.source,
    source_text: rule.source_text,
    table: {...pickRule(shipped), source: shipped.source},
  }
}

/** `gateways show GATEWAY CODE`: the rule in force and where it comes from. */
export async function showRule(store: StorePort, gateway: GatewayId, currency: string): Promise<RuleJson> {
  return await toRuleJson(store, gateway, currency, await resolveRule(store, gateway, currency))
}

export type GatewayTableJson = {
  currencies: null | string[]
  default: {divisible_by: number; exponent: 'iso' | number; max_amount: null | number; min_amount: null | number}
  entries: RuleJson[]
  gateway: GatewayId
  model: string
  overrides: number
  sources: string[]
}

/** `gateways show GATEWAY`: the table's default, every entry and every stored override, by currency. */
export async function showTable(store: StorePort, gateway: GatewayId): Promise<GatewayTableJson> {
  const table = GATEWAY_TABLES[gateway]
  const overrides = [...(await ruleOverrides(store)).values()].filter((o) => o.gateway === gateway)
  const codes = [...new Set([...Object.keys(table.entries), ...overrides.map((o) => o.currency)])].sort()
  return {
    currencies: table.currencies ? [...table.currencies].sort() : null,
    default: {...table.default},
    entries: await Promise.all(codes.map(async (c) => await showRule(store, gateway, c))),
    gateway,
    model: table.models,
    overrides: overrides.length,
    sources: [...table.sources],
  }
}

const WHOLE = /^\d+$/
const DECIMAL = /^\d+(\.\d+)?$/

/**
 * Check `gateways set --currency` flags before anything is opened: whole numbers for
 * --exponent and --divisible-by, a decimal amount or "none" for --min and --max.
 */
export function checkRuleFlags(flags: RuleFlags): RuleFlags {
  const problems: string[] = []
  const out: RuleFlags = {}
  if (flags.exponent !== undefined) {
    const v = flags.exponent.trim()
    if (!WHOLE.test(v) || Number(v) > 6) problems.push(`--exponent: expected a whole number from 0 to 6 (decimal places of the gateway's amounts), got ${JSON.stringify(flags.exponent)}`)
    out.exponent = v
  }
  if (flags.divisible_by !== undefined) {
    const v = flags.divisible_by.trim()
    if (!WHOLE.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < 1) {
      problems.push(`--divisible-by: expected a whole number of gateway units >= 1 (100 for "two decimals that must be 00"), got ${JSON.stringify(flags.divisible_by)}`)
    }
    out.divisible_by = v
  }
  for (const k of ['min', 'max'] as const) {
    const raw = flags[k]
    if (raw === undefined) continue
    const v = raw.trim().toLowerCase() === 'none' ? 'none' : raw.trim()
    if (v !== 'none' && !DECIMAL.test(v)) problems.push(`--${k}: expected an amount of the currency such as 0.50, or none to clear it, got ${JSON.stringify(raw)}`)
    out[k] = v
  }
  // The first problem only: one quoted value per message reads best.
  if (problems.length > 0) throw new InvalidInputError(problems[0])
  return out
}

/** A decimal amount of the currency as a whole number of gateway units (10^-exponent); exact or refused. */
function amountToUnits(flag: string, text: string, exponent: number, currency: string, model: string): number {
  const [whole, frac = ''] = text.split('.')
  const extra = frac.slice(exponent)
  if (/[^0]/.test(extra)) {
    throw new InvalidInputError(
      `--${flag} ${text}: ${model} amounts in ${currency} have ${exponent} decimal${exponent === 1 ? '' : 's'}, so ${text} ${currency} cannot be a bound (pass --exponent too if the gateway takes more)`,
    )
  }
  const units = BigInt(whole + frac.slice(0, exponent).padEnd(exponent, '0'))
  if (units > BigInt(MAX_MINOR)) throw new InvalidInputError(`--${flag} ${text}: too large (at most ${minorToDecimalString(MAX_MINOR, exponent)} ${currency})`)
  return Number(units)
}

/**
 * `gateways set GATEWAY --currency CODE [--exponent N] [--divisible-by N] [--min A] [--max A]`:
 * amounts are decimal amounts of the currency, turned into gateway units with the exponent
 * the rule will have (the new one when --exponent is given); "none" clears a bound.
 */
export async function configureRuleFromFlags(store: StorePort, gateway: GatewayId, currency: string, flags: RuleFlags | 'default'): Promise<{reset: boolean; rule: RuleJson}> {
  if (flags === 'default') {
    const {reset, rule} = await configureRule(store, gateway, currency, 'default')
    return {reset, rule: await toRuleJson(store, gateway, currency, rule)}
  }
  const f = checkRuleFlags(flags)
  const current = await resolveRule(store, gateway, currency)
  const changes: Partial<GatewayRule> = {}
  if (f.exponent !== undefined) changes.exponent = Number(f.exponent)
  if (f.divisible_by !== undefined) changes.divisible_by = Number(f.divisible_by)
  const exponent = changes.exponent ?? current.exponent
  const model = GATEWAY_TABLES[gateway].models
  if (f.min !== undefined) changes.min_amount = f.min === 'none' ? null : amountToUnits('min', f.min, exponent, currency, model)
  if (f.max !== undefined) changes.max_amount = f.max === 'none' ? null : amountToUnits('max', f.max, exponent, currency, model)
  // Bounds kept from the current rule are in its units: rescale them to the new exponent,
  // exactly when it grows, else rounding inwards (a minimum up, a maximum down) so they never loosen.
  if (changes.exponent !== undefined && changes.exponent !== current.exponent) {
    const shift = changes.exponent - current.exponent
    if (changes.min_amount === undefined && current.min_amount !== null) changes.min_amount = shift > 0 ? current.min_amount * 10 ** shift : Math.ceil(current.min_amount / 10 ** -shift)
    if (changes.max_amount === undefined && current.max_amount !== null) changes.max_amount = shift > 0 ? current.max_amount * 10 ** shift : Math.floor(current.max_amount / 10 ** -shift)
    for (const k of ['min_amount', 'max_amount'] as const) {
      const v = changes[k]
      if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new InvalidInputError(`the ${k === 'min_amount' ? 'minimum' : 'maximum'} in force is too large for exponent ${changes.exponent}: pass --${k === 'min_amount' ? 'min' : 'max'} AMOUNT (or none) as well`)
    }
  }
  const {reset, rule} = await configureRule(store, gateway, currency, changes)
  return {reset, rule: await toRuleJson(store, gateway, currency, rule)}
}
