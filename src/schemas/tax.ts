import {z} from 'zod'

import {Envelope} from './common.js'
import {PriceImpact, WithImpact} from './impact.js'

/** The --json output of the `tax` commands (docs/tax.md). */

const Behavior = z.enum(['inclusive', 'exclusive'])

export const TaxRateRow = z.object({
  category: z.string(),
  country: z.string(),
  /** The day the rate applies from (null: a country without a rate on file). */
  from: z.string().nullable(),
  kind: z.enum(['bundled', 'operator']),
  label: z.string(),
  /** Percent. */
  rate: z.number(),
  source: z.string(),
  status: z.enum(['current', 'outranked', 'scheduled']),
})

export const TaxListOutput = Envelope.extend({rates: z.array(TaxRateRow)})

export const TaxSetOutput = Envelope.extend({current: TaxRateRow, rate: TaxRateRow, replaced: TaxRateRow.nullable(), scheduled: z.boolean(), ...WithImpact})

export const TaxDeleteOutput = Envelope.extend({removed: z.number().int(), current: TaxRateRow, ...WithImpact})

export const TaxSetting = z.object({behavior: Behavior.nullable(), category: z.string().nullable(), scope: z.enum(['store', 'country', 'product']), subject: z.string()})

export const TaxBehaviorOutput = Envelope.extend({
  setting: TaxSetting.optional(),
  settings: z.array(TaxSetting),
  store_behavior: Behavior,
  /** Only when something was set (a command that only shows the settings writes nothing). */
  dry_run: z.boolean().optional(),
  impact: PriceImpact.optional(),
})
