import {Flags} from '@oclif/core'

import {numberish} from '../../catalog/shortforms.js'
import {overlay, parseJsonValue, readBody} from '../input.js'
import {InvalidInputError} from '../../errors.js'
import {upperCode} from '../../currency.js'

/**
 * Flags of the audience, package and campaign commands and how they become a body.
 * Flags given beside --body override its fields; values go through the zod schemas, which
 * name the field and the value on error.
 */

const repeatable = {multiple: true, multipleNonGreedy: true} as const
const body = Flags.string({description: "The JSON body (FILE, or - for stdin); flags override its fields"})

const isNone = (v: string) => ['none', 'null'].includes(v.trim().toLowerCase())

/** A repeatable flag as a list; a single "none" means an empty list. */
function list<T>(values: string[] | undefined, parse: (t: string) => T): T[] | undefined {
  if (values === undefined) return undefined
  if (values.length === 1 && isNone(values[0])) return []
  return values.map((v) => parse(v))
}

/**
 * Repeatable and comma-separated: `--country DE,AT --country CH`. An empty value is an
 * error, not an empty list: `--country "$UNSET"` must not widen a segment to everyone.
 */
function commaList(values: string[] | undefined, flag: string, upper = false): string[] | undefined {
  if (values === undefined) return undefined
  if (values.length === 1 && isNone(values[0])) return []
  const out = values.flatMap((v) => v.split(',')).map((v) => (upper ? upperCode(v.trim()) : v.trim())).filter(Boolean)
  if (out.length === 0) throw new InvalidInputError(`${flag}: empty value ${JSON.stringify(values.join(','))}; give a comma-separated list, or "none" to clear it`)
  return out
}

const nullable = (v: string | undefined) => (v === undefined ? undefined : isNone(v) ? null : v.trim())

/**
 * Audience price short form: `PRODUCT=x0.8` (multiplier of the localized price) or
 * `PRODUCT=7.99:EUR` (fixed local price); anything starting with `{` is JSON.
 */
export function parseAudiencePrice(text: string): unknown {
  if (text.trim().startsWith('{')) return parseJsonValue(text, '--price')
  const m = /^\s*([^=\s]+)\s*=\s*(?:[x*]\s*(\S+)|([^:\s]+)\s*:\s*(\S+))\s*$/i.exec(text)
  if (!m) throw new InvalidInputError(`--price: expected PRODUCT=xMULTIPLIER (e.g. pro_monthly=x0.8) or PRODUCT=AMOUNT:CURRENCY (e.g. pro_monthly=7.99:EUR), got ${JSON.stringify(text)}`)
  const [, product, multiplier, amount, currency] = m
  return multiplier === undefined ? {amount: numberish(amount), currency: upperCode(currency), product} : {multiplier: numberish(multiplier), product}
}

export const audienceFlags = {
  'api-id': Flags.string({description: 'Audience identifier (create only; immutable)'}),
  body,
  name: Flags.string({description: 'Audience name'}),
  price: Flags.string({
    description: 'Audience price PRODUCT=xMULTIPLIER (e.g. pro_monthly=x0.8) or PRODUCT=AMOUNT:CURRENCY (e.g. pro_monthly=7.99:EUR); repeatable; replaces all; "none" clears them',
    ...repeatable,
  }),
  priority: Flags.string({description: 'Whole number; the highest-priority matching audience is the user\'s audience (default 0)'}),
  rule: Flags.string({
    description: 'Rule, all must hold: "country in DE,AT", "country not in US", "feature KEY OP VALUE" (OP: eq neq in gt gte lt lte), "feature KEY exists"; repeatable; replaces all; "none" clears them',
    ...repeatable,
  }),
}

type AudienceFlagValues = {[K in keyof typeof audienceFlags]?: K extends 'price' | 'rule' ? string[] : string}

export function audienceBody(flags: AudienceFlagValues): Record<string, unknown> {
  return overlay(readBody(flags.body), {
    api_id: flags['api-id'],
    name: flags.name,
    prices: list(flags.price, parseAudiencePrice),
    priority: flags.priority === undefined ? undefined : numberish(flags.priority),
    // The text form is parsed by the schema, so errors name rules[i] and the text.
    rules: list(flags.rule, (t) => (t.trim().startsWith('{') ? parseJsonValue(t, '--rule') : t)),
  })
}

export const packageFlags = {
  'api-id': Flags.string({description: 'Package identifier (create only; immutable)'}),
  audience: Flags.string({description: 'Audience api_id the package is for ("none" clears)'}),
  body,
  country: Flags.string({description: 'Country the package is for (repeatable or comma-separated; replaces all; "none" clears)', ...repeatable}),
  name: Flags.string({description: 'Package name'}),
  product: Flags.string({char: 'p', description: 'Product api_id in the package (repeatable or comma-separated, in display order; replaces all)', ...repeatable}),
}

type PackageFlagValues = {[K in keyof typeof packageFlags]?: K extends 'country' | 'product' ? string[] : string}

export function packageBody(flags: PackageFlagValues): Record<string, unknown> {
  return overlay(readBody(flags.body), {
    api_id: flags['api-id'],
    audience: nullable(flags.audience),
    countries: commaList(flags.country, '--country', true),
    name: flags.name,
    products: commaList(flags.product, '--product'),
  })
}

export const campaignFlags = {
  'active-from': Flags.string({description: 'ISO date (or date-time, UTC unless an offset is given) from which the campaign applies'}),
  'active-till': Flags.string({description: 'ISO date (or date-time) until which the campaign applies; a bare date lasts through that day, UTC'}),
  'api-id': Flags.string({description: 'Campaign identifier'}),
  audience: Flags.string({description: 'Audience api_id the campaign is for'}),
  body,
  country: Flags.string({description: 'Country the campaign is for (repeatable or comma-separated)', ...repeatable}),
  coupon: Flags.string({description: 'api_id of the coupon the campaign applies'}),
  name: Flags.string({description: 'Campaign name'}),
  product: Flags.string({char: 'p', description: 'Limit the campaign to these products (repeatable or comma-separated; default every product)', ...repeatable}),
}

type CampaignFlagValues = {[K in keyof typeof campaignFlags]?: K extends 'country' | 'product' ? string[] : string}

export function campaignBody(flags: CampaignFlagValues): Record<string, unknown> {
  return overlay(readBody(flags.body), {
    active_from: nullable(flags['active-from']),
    active_till: nullable(flags['active-till']),
    api_id: flags['api-id'],
    audience: nullable(flags.audience),
    countries: commaList(flags.country, '--country', true),
    coupon: flags.coupon,
    name: flags.name,
    products: commaList(flags.product, '--product'),
  })
}

/** `update` names the record by its argument; --api-id would suggest a rename, which is refused. */
export function refuseApiIdFlag(value: string | undefined, kind: string, apiId: string): void {
  if (value === undefined) return
  const instead = value === apiId ? `name it by the argument only: pricectl ${kind} update ${apiId} ...` : `create a new one with: pricectl ${kind} create --api-id ${value} ...`
  throw new InvalidInputError(`--api-id: api_id is immutable and cannot be given to update (got ${JSON.stringify(value)}; ${instead})`)
}
