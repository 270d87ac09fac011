import {z} from 'zod'

import {upperCode} from '../currency.js'
import {PricectlError} from '../errors.js'
import {parseRule} from '../pricing/rounding.js'
import {Currency, Envelope} from './common.js'
import {WithImpact} from './impact.js'

/**
 * Rounding rule input and the --json output of the `rounding` commands.
 * Currency codes are upper-cased first: `rounding set jpy ...` means JPY.
 */

const UpperCurrency = z.preprocess((v) => (typeof v === 'string' ? upperCode(v.trim()) : v), Currency)

/** `rounding set`: a currency and a rule that parses for that currency. */
export const RoundingSetInput = z
  .object({currency: UpperCurrency, rule: z.string({error: 'expected the rule text'})})
  .superRefine((v, ctx) => {
    try {
      parseRule(v.rule, v.currency)
    } catch (error) {
      if (!(error instanceof PricectlError)) throw error
      ctx.addIssue({code: 'custom', message: error.message, path: ['rule']})
    }
  })

export const RoundingCurrencyInput = z.object({currency: UpperCurrency})

/** An amount to try a rule on, as typed: a plain non-negative decimal ("9.99", "1200"). */
export const AmountText = z
  .string()
  .trim()
  .regex(/^(\d+(\.\d*)?|\.\d+)$/, {error: (iss) => `amount ${JSON.stringify(iss.input)} is not a non-negative number (write it like 9.99 or 1200)`})

export const RoundingTestInput = z.object({
  amounts: z.array(AmountText).min(1, {error: 'give at least one AMOUNT, e.g. pricectl rounding test EUR 9.37 12.10'}),
  currency: UpperCurrency,
})

export const RuleSource = z.enum(['default', 'store'])

export const RoundingListOutput = Envelope.extend({
  rules: z.array(
    z.object({
      /** A currency code, or "*" for the built-in default of every currency with `digits` minor digits. */
      currency: z.string(),
      digits: z.number(),
      rule: z.string(),
      source: RuleSource,
    }),
  ),
})

export const RoundingSetOutput = Envelope.extend({
  currency: z.string(),
  rule: z.string(),
  source: RuleSource,
  ...WithImpact,
})

export const RoundingTestOutput = Envelope.extend({
  currency: z.string(),
  results: z.array(z.object({action: z.string(), amount: z.number(), range: z.string(), rounded: z.number()})),
  rule: z.string(),
  /** "flag" when the rule came from --rule and was not saved. */
  source: z.enum(['default', 'flag', 'store']),
})
