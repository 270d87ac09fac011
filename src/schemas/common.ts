import {z} from 'zod'

import {isCountry, isCurrency} from '../currency.js'

/**
 * Shared building blocks of every schema. Messages name the value so a rejected
 * input says what was wrong with what.
 */

export const INTERVALS = ['day', 'week', 'month', 'year', 'one_time'] as const
export const RECURRING_INTERVALS = ['day', 'week', 'month', 'year'] as const
export const ORIGINS = ['gateway_a', 'gateway_b', 'gateway_c'] as const
export const GATEWAYS = ['gateway_a', 'gateway_b', 'gateway_c', 'gateway_d'] as const

export const Country = z
  .string()
  .refine(isCountry, {error: (iss) => `unknown country ${JSON.stringify(iss.input)} (expected a two-letter ISO 3166 code such as US)`})

export const Currency = z
  .string()
  .refine(isCurrency, {error: (iss) => `unknown currency ${JSON.stringify(iss.input)} (expected an ISO 4217 code such as USD)`})

export const Interval = z.enum(INTERVALS, {
  error: (iss) => `unknown interval ${JSON.stringify(iss.input)} (expected one of ${INTERVALS.join(', ')})`,
})
export const RecurringInterval = z.enum(RECURRING_INTERVALS, {
  error: (iss) => `unknown interval ${JSON.stringify(iss.input)} (expected one of ${RECURRING_INTERVALS.join(', ')})`,
})
export const Origin = z.enum(ORIGINS, {
  error: (iss) => `unknown origin ${JSON.stringify(iss.input)} (expected one of ${ORIGINS.join(', ')})`,
})
export const Gateway = z.enum(GATEWAYS, {
  error: (iss) => `unknown gateway ${JSON.stringify(iss.input)} (expected one of ${GATEWAYS.join(', ')})`,
})

/** A non-negative, finite amount of money in currency units (decimals checked against the currency later). */
export const Amount = z
  .number({error: (iss) => `expected a number, got ${JSON.stringify(iss.input)}`})
  .finite()
  .nonnegative({error: (iss) => `must not be negative, got ${JSON.stringify(iss.input)}`})

/** UNIX seconds, 10 digits as the spec says. */
export const Timestamp = z
  .number({error: (iss) => `expected a UNIX timestamp in seconds, got ${JSON.stringify(iss.input)}`})
  .int({error: (iss) => `expected whole seconds, got ${JSON.stringify(iss.input)}`})
  .min(0)
  .max(9_999_999_999, {error: (iss) => `expected a 10-digit UNIX timestamp in seconds, got ${JSON.stringify(iss.input)}`})

export const PositiveInt = z
  .number({error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}`})
  .int({error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}`})
  .min(1, {error: (iss) => `must be at least 1, got ${JSON.stringify(iss.input)}`})

/** A real day: Date.parse rolls 2026-02-30 over to March 2, this does not. */
function isCalendarDay(ymd: string): boolean {
  const [y, m, d] = ymd.split('-').map(Number)
  const t = new Date(Date.UTC(y, m - 1, d))
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d
}

/** ISO date (YYYY-MM-DD) or date-time; stored as given after validation. */
export const IsoDate = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)) && isCalendarDay(s.slice(0, 10)), {
  error: (iss) => `expected an ISO date such as 2026-01-31, got ${JSON.stringify(iss.input)}`,
})

/**
 * Text that can be stored and shown as given: no control characters (NUL, escape
 * sequences garble terminals and other tools) and no lone UTF-16 surrogates (SQLite would
 * store them as U+FFFD, silently changing the value). Names may span lines (tab, CR, LF).
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
export function isPlainText(s: string): boolean {
  return !CONTROL.test(s) && !LONE_SURROGATE.test(s)
}
export function isPlainMultilineText(s: string): boolean {
  return !CONTROL_BUT_LINES.test(s) && !LONE_SURROGATE.test(s)
}
const plainTextError = (iss: {input?: unknown}) =>
  `must not contain control characters or broken unicode, got ${JSON.stringify(String(iss.input)).slice(0, 100)}`

/** Identifiers (api_id, origin_id, user_id): non-empty, printable, bounded. */
export const Id = z
  .string({error: (iss) => `expected a string, got ${JSON.stringify(iss.input)}`})
  .min(1, {error: 'must not be empty'})
  .max(255, {error: 'must be at most 255 characters'})
  .refine(isPlainText, {error: plainTextError})

export const Name = z.string().trim().min(1, {error: 'must not be empty'}).max(500, {error: 'must be at most 500 characters'}).refine(isPlainMultilineText, {error: plainTextError})

/** Common response fields. */
export const Envelope = z.object({message: z.string(), success: z.boolean()})

export const ErrorBody = z.object({error_message: z.string().optional(), message: z.string(), success: z.literal(false)})
