import {z} from 'zod'

import {Country, Envelope, isPlainText} from './common.js'
import {WithImpact} from './impact.js'

/**
 * Localization factors: per country, the multiplier applied to the USD base price after
 * FX conversion (a price level ratio: 1 = US price level, 0.4 = prices at 40% of the US).
 */

export const LOCALIZATION_FORMATS = ['wide', 'long', 'csv'] as const
export type LocalizationFormat = (typeof LOCALIZATION_FORMATS)[number]

/**
 * Factors outside this range are refused (set, csv import) or skipped as implausible
 * (World Bank imports): no real price level is 1/20 or 10x the US one, but a percentage
 * typed as a factor (85 for 0.85), or a PPP in an old currency unit, looks exactly like that.
 */
export const MIN_FACTOR = 0.05
export const MAX_FACTOR = 10

export const Factor = z
  .number({error: (iss) => `expected a number such as 0.85, got ${JSON.stringify(iss.input)}`})
  .min(MIN_FACTOR, {error: (iss) => `must be between ${MIN_FACTOR} and ${MAX_FACTOR} (a price level ratio, 1 = US prices), got ${JSON.stringify(iss.input)}`})
  .max(MAX_FACTOR, {error: (iss) => `must be between ${MIN_FACTOR} and ${MAX_FACTOR} (a price level ratio, 1 = US prices), got ${JSON.stringify(iss.input)}`})

export const FactorYear = z
  .number({error: (iss) => `expected a year such as 2024, got ${JSON.stringify(iss.input)}`})
  .int({error: (iss) => `expected a year such as 2024, got ${JSON.stringify(iss.input)}`})
  .min(1900, {error: (iss) => `expected a year such as 2024, got ${JSON.stringify(iss.input)}`})
  .max(2100, {error: (iss) => `expected a year such as 2024, got ${JSON.stringify(iss.input)}`})

/** `localization set` body. */
export const FactorInput = z
  .object({
    country: Country,
    factor: Factor,
    source: z.string().trim().min(1).max(200).refine(isPlainText, {error: 'must not contain control characters or broken unicode'}).default('manual'),
    year: FactorYear.nullable().default(null),
  })
  .strict()
export type FactorInput = z.output<typeof FactorInput>

export const FactorRecord = z.object({
  country: z.string(),
  factor: z.number(),
  source: z.string(),
  year: z.number().nullable(),
})

export const LocalizationListOutput = Envelope.extend({factors: z.array(FactorRecord)})

export const LocalizationSetOutput = Envelope.extend({factor: FactorRecord, ...WithImpact})

export const LocalizationClearOutput = Envelope.extend({deleted: z.number(), ...WithImpact})

export const LocalizationImportOutput = Envelope.extend({
  impact: WithImpact.impact,
  dry_run: z.boolean(),
  factors_unchanged: z.number(),
  factors_written: z.number(),
  format: z.enum(LOCALIZATION_FORMATS),
  fx: z
    .object({latest: z.number(), year_average: z.number()})
    .describe('PPP values (long layout) converted at the mean rate of their year, or at the latest rate when that year has none on file'),
  removed: z.number().describe('factors of countries not in the file, removed by --replace'),
  rows_read: z.number(),
  skipped: z.object({
    aggregates: z.array(z.string()).describe('codes of regions and income groups (no ISO 3166 country)'),
    implausible: z.array(z.string()).describe('countries whose factor fell outside the plausible range'),
    no_fx_rate: z.array(z.string()).describe('countries whose currency has no FX rate on file (long layout)'),
    no_value: z.array(z.string()).describe('countries without a value in any year'),
  }),
  source: z.string(),
  years: z.object({from: z.number().nullable(), to: z.number().nullable()}),
})
