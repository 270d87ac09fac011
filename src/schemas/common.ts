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

/** ISO date (YYYY-MM-DD) or date-time; stored as given after validation. */
export const IsoDate = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)), {
  error: (iss) => `expected an ISO date such as 2026-01-31, got ${JSON.stringify(iss.input)}`,
})

/** Identifiers (api_id, origin_id, user_id): non-empty, printable, bounded. */
export const Id = z
  .string({error: (iss) => `expected a string, got ${JSON.stringify(iss.input)}`})
  .min(1, {error: 'must not be empty'})
  .max(255, {error: 'must be at most 255 characters'})
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), {error: 'must not contain control characters'})

export const Name = z.string().trim().min(1, {error: 'must not be empty'}).max(500, {error: 'must be at most 500 characters'})

/** Common response fields. */
export const Envelope = z.object({message: z.string(), success: z.boolean()})

export const ErrorBody = z.object({error_message: z.string().optional(), message: z.string(), success: z.literal(false)})
