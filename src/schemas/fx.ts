import {z} from 'zod'

import {isIsoDay} from '../dates.js'
import {FX_KINDS} from '../fx/sources.js'
import {Currency, Envelope, isPlainText} from './common.js'
import {WithImpact} from './impact.js'

/**
 * FX rates: units of a currency per 1 USD, dated, with where they came from.
 * Input schemas validate `fx set` and every row of `fx import`; output schemas are the
 * --json contracts of the fx commands.
 */

export const FX_FORMATS = ['ecb', 'csv', 'json'] as const
export type FxFormat = (typeof FX_FORMATS)[number]

/** True for a real calendar day written YYYY-MM-DD (Date.parse accepts 2026-02-30; this does not). */
export {isIsoDay}

export const FxDay = z
  .string({error: (iss) => `expected a date YYYY-MM-DD, got ${JSON.stringify(iss.input)}`})
  .refine(isIsoDay, {error: (iss) => `expected a date YYYY-MM-DD, got ${JSON.stringify(iss.input)}`})

/**
 * Plausible units per 1 USD: gold (XAU) is about 0.0005, the weakest traded currencies a
 * few hundred thousand. Outside these a rate is a typo (or an overflow), and it would
 * turn every converted price into 0 or an absurd amount.
 */
export const MIN_FX_RATE = 1e-6
export const MAX_FX_RATE = 1e9

/** Units of the currency per 1 USD: positive, finite, plausible. */
export const FxRateValue = z
  .number({error: (iss) => `expected a number of units per 1 USD, got ${JSON.stringify(iss.input)}`})
  .positive({error: (iss) => `must be greater than 0, got ${JSON.stringify(iss.input)}`})
  .min(MIN_FX_RATE, {error: (iss) => `must be at least ${MIN_FX_RATE} units per 1 USD, got ${JSON.stringify(iss.input)}`})
  .max(MAX_FX_RATE, {error: (iss) => `must be at most ${MAX_FX_RATE} units per 1 USD, got ${JSON.stringify(iss.input)}`})

/** A source label as text: what `fx prune --source` matches against. */
export const FxSourceText = z
  .string()
  .trim()
  .min(1, {error: 'must not be empty'})
  .max(200, {error: 'must be at most 200 characters'})
  .refine(isPlainText, {error: 'must not contain control characters or broken unicode'})

/** The label of an operator's rate; the selection rule tells the bundled snapshot by its label (src/fx/sources.ts). */
export const FxSource = FxSourceText.refine((s) => !s.toLowerCase().startsWith('default snapshot'), {
    error: (iss) => `${JSON.stringify(iss.input)}: "default snapshot" labels the bundled snapshot and cannot label your own rates; choose another label, e.g. "manual" or the name of your feed`,
  })

/** `fx set` body: {currency, rate, date?, source?}. USD is the base and always 1. */
export const FxSetInput = z
  .object({
    currency: Currency,
    date: FxDay,
    rate: FxRateValue,
    source: FxSource.default('manual'),
  })
  .strict()
  .refine((r) => r.currency !== 'USD' || r.rate === 1, {error: 'USD is the base of every rate, so its rate is always 1', path: ['rate']})
export type FxSetInput = z.output<typeof FxSetInput>

export const FxRateRecord = z.object({
  currency: z.string(),
  date: z.string(),
  rate: z.number(),
  source: z.string(),
})

export const FxListedRate = FxRateRecord.extend({
  kind: z.enum(FX_KINDS).describe('snapshot: the bundled default snapshot; manual: fx set or a custom --source label; import: an fx import with its default label'),
  status: z
    .enum(['current', 'scheduled', 'outranked', 'past'])
    .describe('current: what pricing uses today; scheduled: dated after today, not used before its date; outranked: a snapshot rate while an operator rate is current; past: an earlier rate'),
})

export const FxListOutput = Envelope.extend({rates: z.array(FxListedRate)})

export const FxSetOutput = Envelope.extend({
  ...WithImpact,
  current: FxRateRecord.nullable().describe('the rate pricing uses today after the write'),
  rate: FxRateRecord,
  replaced: FxRateRecord.nullable().describe('the rate of the same currency and day this one replaced'),
  scheduled: z.boolean().describe('dated after today: kept, but not used before its date'),
})

/** `fx delete` and `fx prune`: what was removed, what came back, what is left without a rate. */
export const FxRemoveOutput = Envelope.extend({
  impact: WithImpact.impact,
  currencies: z.array(z.object({currency: z.string(), from: z.string(), removed: z.number(), to: z.string()})),
  dry_run: z.boolean(),
  in_use_without_rate: z
    .array(z.object({currency: z.string(), uses: z.array(z.string())}))
    .describe('currencies the store prices or records money in that are left without a rate usable today (only with --force)'),
  removed: z.number(),
  restored: z.array(FxRateRecord).describe('bundled snapshot rates put back where a removed rate of yours had replaced them'),
  sources: z.array(z.object({kind: z.enum(FX_KINDS), removed: z.number(), source: z.string()})),
  without_rate: z.array(z.string()).describe('currencies that had a rate usable today and have none now'),
})

export const FxImportOutput = Envelope.extend({
  impact: WithImpact.impact,
  currencies: z.number().describe('distinct currencies among the rates read'),
  dates: z.object({count: z.number(), from: z.string().nullable(), to: z.string().nullable()}),
  dry_run: z.boolean(),
  format: z.enum(FX_FORMATS),
  newer_on_file: z.array(z.string()).describe('currencies of the file whose rate today is a later-dated rate of yours already on file'),
  rates_unchanged: z.number().describe('rates already on file with the same value and source'),
  rates_written: z.number(),
  rows_read: z.number(),
  scheduled: z.number().describe('rates dated after today: kept, not used before their dates'),
  skipped: z.object({
    codes: z.array(z.string()).describe('non-ISO 4217 codes of known feeds, skipped'),
    values: z.number(),
  }),
  source: z.string(),
})
