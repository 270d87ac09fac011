import {z} from 'zod'

import {upperCode} from '../currency.js'
import {GATEWAY_TABLES} from '../money/gateway-tables.js'
import {Currency, Envelope, Gateway} from './common.js'
import {WithImpact} from './impact.js'

/** Gateway settings input and the --json output of the `gateways` commands. */

const upper = (v: unknown) => (typeof v === 'string' ? upperCode(v.trim()) : v)

export const AMOUNT_FORMATS = ['minor', 'decimal'] as const

export const AmountFormat = z.enum(AMOUNT_FORMATS, {
  error: (iss) => `unknown amount format ${JSON.stringify(iss.input)} (expected minor or decimal)`,
})

/** Words that mean "any currency": "*" as stored, "all" and "any" as typed. */
const ALL = new Set(['*', 'all', 'any'])

/**
 * "*" (any currency; "all" and "any" as typed), "listed" (the gateway's published list) or
 * a non-empty list of currency codes; "EUR,USD" as typed is split.
 */
export const AcceptedCurrencies = z.preprocess(
  (v) => {
    if (typeof v === 'string') {
      const s = v.trim()
      if (ALL.has(s.toLowerCase())) return '*'
      if (s.toLowerCase() === 'listed') return 'listed'
      return s.split(',').map((c) => upperCode(c.trim()))
    }
    if (Array.isArray(v)) {
      if (v.length === 1 && typeof v[0] === 'string' && ALL.has(v[0].trim().toLowerCase())) return '*'
      if (v.length === 1 && typeof v[0] === 'string' && v[0].trim().toLowerCase() === 'listed') return 'listed'
      return v.map(upper)
    }
    return v
  },
  z.union([z.literal('*'), z.literal('listed'), z.array(Currency).min(1, {error: 'list at least one currency, "listed" for the published list, or "all" for any'})], {
    error: (iss) => `expected "listed", "all" (or "*") or a list of currency codes such as EUR,USD, got ${JSON.stringify(iss.input)}`,
  }),
)

export const GatewaySettingsInput = z
  .object({
    accepted_currencies: AcceptedCurrencies,
    amount_format: AmountFormat,
    fallback_currency: z.preprocess(upper, Currency),
    gateway: Gateway,
  })
  .superRefine((v, ctx) => {
    // Falling back to a currency the gateway refuses would produce prices it cannot charge.
    const a = v.accepted_currencies
    if (a === 'listed') {
      const table = GATEWAY_TABLES[v.gateway]
      if (table.currencies && !table.currencies.includes(v.fallback_currency)) {
        ctx.addIssue({
          code: 'custom',
          message: `${v.fallback_currency} is not in ${table.models}'s published list of currencies that ${v.gateway} accepts: pick another --fallback, or --accept a list that has it`,
          path: ['fallback_currency'],
        })
      }
    } else if (a !== '*' && !a.includes(v.fallback_currency)) {
      ctx.addIssue({
        code: 'custom',
        message: `${v.fallback_currency} is not among the accepted currencies ${a.join(',')}: add it to --accept or pick another --fallback`,
        path: ['fallback_currency'],
      })
    }
  })
  .transform((v) => ({...v, accepted_currencies: v.accepted_currencies === '*' || v.accepted_currencies === 'listed' ? v.accepted_currencies : [...new Set(v.accepted_currencies)]}))

const GatewayEntry = z.object({
  /** Currency codes; ["*"] when the gateway accepts any currency, ["listed"] for its published list. */
  accepted_currencies: z.array(z.string()),
  amount_format: z.enum(AMOUNT_FORMATS),
  fallback_currency: z.string(),
  gateway: z.string(),
  source: z.enum(['default', 'store']),
})

export const GatewaysListOutput = Envelope.extend({gateways: z.array(GatewayEntry)})

const Units = z.number().int().nullable()

/** A gateway's rule for one currency (docs/money.md, "Gateway tables"): amounts in the gateway's units (10^-exponent). */
export const GatewayRuleEntry = z.object({
  /** Whether the gateway is sent this currency under the store's settings (else its fallback currency). */
  accepted: z.boolean(),
  /** The gateway's amount format in this store: minor (integers in its units) or decimal. */
  amount_format: z.enum(AMOUNT_FORMATS),
  currency: z.string(),
  divisible_by: z.number().int(),
  exponent: z.number().int(),
  gateway: z.string(),
  /** Whether the model's published currency list names the currency; null when the table records none. */
  listed: z.boolean().nullable(),
  /** max_amount as a decimal amount of the currency, null when unbounded. */
  max: z.string().nullable(),
  max_amount: Units,
  min: z.string().nullable(),
  min_amount: Units,
  model: z.string(),
  note: z.string().nullable(),
  source: z.enum(['store', 'table', 'default']),
  source_text: z.string(),
  /** The shipped table's rule, what `gateways set --currency CODE --default` goes back to. */
  table: z.object({
    divisible_by: z.number().int(),
    exponent: z.number().int(),
    max_amount: Units,
    min_amount: Units,
    source: z.enum(['table', 'default']),
  }),
})

/** A gateway's whole table: its default, its entries and stored overrides, its model and sources. */
export const GatewayTableEntry = z.object({
  /** The model's published currency list, null when the table records none. */
  currencies: z.array(z.string()).nullable(),
  default: z.object({
    divisible_by: z.number().int(),
    /** "iso": the currency's ISO 4217 exponent. */
    exponent: z.union([z.literal('iso'), z.number().int()]),
    max_amount: Units,
    min_amount: Units,
  }),
  entries: z.array(GatewayRuleEntry),
  gateway: z.string(),
  model: z.string(),
  /** How many entries are stored overrides. */
  overrides: z.number().int(),
  sources: z.array(z.string()),
})

/** `gateways set` prints the gateway's settings, or with --currency the currency's rule. */
export const GatewaysSetOutput = z.union([
  Envelope.extend({gateway: GatewayEntry, ...WithImpact}),
  Envelope.extend({
    ...WithImpact,
    /** With --default: whether an override was dropped. */
    reset: z.boolean(),
    rule: GatewayRuleEntry,
  }),
])

/** `gateways show GATEWAY CODE` prints one rule; `gateways show GATEWAY` the whole table. */
export const GatewaysShowOutput = z.union([Envelope.extend({rule: GatewayRuleEntry}), Envelope.extend({table: GatewayTableEntry})])
