import {z} from 'zod'

import {isCountry, isCurrency} from '../currency.js'
import {MAX_SECONDS, readSeconds} from '../dates.js'
import {GATEWAYS, INTERVALS, isBlank, isPlainMultilineText, isPlainText, ORIGINS, RECURRING_INTERVALS, reservedKeyProblem} from './no-zod.js'

export {GATEWAYS, INTERVALS, isBlank, isPlainMultilineText, isPlainText, ORIGINS, RECURRING_INTERVALS}

/**
 * Shared building blocks of every schema. Messages name the value so a rejected
 * input says what was wrong with what.
 */

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

/** The first 10-digit UNIX second (2001-09-09T01:46:40Z). */
export const MIN_TIMESTAMP = 1_000_000_000

const tenDigits = (iss: {input?: unknown}) => `expected a 10-digit UNIX timestamp in seconds (${MIN_TIMESTAMP} to ${MAX_SECONDS}, 2001-09-09 to 2286-11-20), got ${JSON.stringify(iss.input)}`

/** A timestamp of a request: "Integer, 10-digit UNIX timestamp in seconds", as the spec says. */
export const Timestamp = z
  .number({error: (iss) => `expected a UNIX timestamp in seconds, got ${JSON.stringify(iss.input)}`})
  .int({error: (iss) => `expected whole seconds, got ${JSON.stringify(iss.input)}`})
  .min(MIN_TIMESTAMP, {error: tenDigits})
  .max(MAX_SECONDS, {error: tenDigits})

export const PositiveInt = z
  .number({error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}`})
  .int({error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}`})
  .min(1, {error: (iss) => `must be at least 1, got ${JSON.stringify(iss.input)}`})

/**
 * ISO date (YYYY-MM-DD) or date-time, read by the one date reader (src/dates.ts): a real
 * day and time, UTC unless it carries an offset. Stored as given after validation.
 */
export const IsoDate = z.string().superRefine((s, ctx) => {
  const r = /^\d{4}-/.test(s.trim()) ? readSeconds(s) : 'not a date or time in an accepted form'
  if (typeof r === 'string') ctx.addIssue({code: 'custom', input: s, message: `expected an ISO date such as 2026-01-31, got ${JSON.stringify(s)} (${r}; a date-time such as 2026-01-31T10:00:00+02:00 is accepted too, UTC unless it carries an offset)`})
})

const plainTextError = (iss: {input?: unknown}) =>
  `must not contain control characters or broken unicode, got ${JSON.stringify(String(iss.input)).slice(0, 100)}`

export const blankError = (iss: {input?: unknown}) => `must not be blank, got ${JSON.stringify(iss.input)} (whitespace only)`

/** Identifiers (api_id, origin_id, user_id): non-empty, not blank, printable, bounded. */
export const Id = z
  .string({error: (iss) => `expected a string, got ${JSON.stringify(iss.input)}`})
  .min(1, {error: 'must not be empty'})
  .max(255, {error: 'must be at most 255 characters'})
  .refine((s) => !isBlank(s), {abort: true, error: blankError})
  .refine(isPlainText, {error: plainTextError})

export const Name = z.string().trim().min(1, {error: 'must not be empty'}).max(500, {error: 'must be at most 500 characters'}).refine(isPlainMultilineText, {error: plainTextError})

/** Common response fields. */
export const Envelope = z.object({message: z.string(), success: z.boolean()})

export const ErrorBody = z.object({error_message: z.string().optional(), message: z.string(), success: z.literal(false)})

/**
 * A key-value object whose keys are the user's (metadata, features) with `__proto__` refused:
 * JSON.parse keeps it as a key, but setting it on an object sets the prototype instead, so
 * the pair would vanish without a word (and a rule on it could never match).
 */
export function userKeys<S extends z.ZodType>(schema: S, what: string) {
  return z.preprocess((value, ctx) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, '__proto__')) {
      ctx.issues.push({code: 'custom', input: value, message: reservedKeyProblem('__proto__', what)!})
    }
    return value
  }, schema)
}
