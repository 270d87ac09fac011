import {upperCode} from '../currency.js'
import {reservedKeyProblem} from '../schemas/no-zod.js'
import type {CountryOperator, CountryRule, Expect, FeatureOperator, FeatureRule, Literal, Rule, SameType} from '../domain.js'

/**
 * Audience rules: pure parsing, printing and evaluation (DESIGN "The price calculation",
 * step 4). A rule is a country test or a feature test; an audience matches when all of its
 * rules hold. Text form (flags, and accepted in JSON bodies):
 *
 *   country in DE,AT          country not in US,CA
 *   feature plan_level gt 3   feature tier in gold,silver   feature beta exists
 *
 * Feature operators: eq neq in gt gte lt lte exists (symbols = != > >= < <= also read).
 */

export const FEATURE_OPERATORS = ['eq', 'neq', 'in', 'gt', 'gte', 'lt', 'lte', 'exists'] as const
export const COUNTRY_OPERATORS = ['in', 'not_in'] as const
export type {CountryOperator, CountryRule, FeatureOperator, FeatureRule, Literal, Rule}
type _OperatorsChecked = [Expect<SameType<(typeof FEATURE_OPERATORS)[number], FeatureOperator>>, Expect<SameType<(typeof COUNTRY_OPERATORS)[number], CountryOperator>>]

export type FeatureValues = Record<string, boolean | number | string>

const SYMBOLS: Record<string, FeatureOperator> = {'!=': 'neq', '<': 'lt', '<=': 'lte', '=': 'eq', '==': 'eq', '>': 'gt', '>=': 'gte'}

const NUMERIC = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/

/** The number a feature value or literal stands for, when it is one ("10" -> 10); else undefined. */
export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  if (typeof v === 'string' && NUMERIC.test(v)) {
    const n = Number(v)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

/** Map an operator as typed (word or symbol, any case) to its name, or undefined. */
export function featureOperator(text: string): FeatureOperator | undefined {
  const t = text.trim().toLowerCase()
  if ((FEATURE_OPERATORS as readonly string[]).includes(t)) return t as FeatureOperator
  return SYMBOLS[t]
}

export class RuleSyntaxError extends Error {}

const RULE_FORMS = '"country in DE,AT", "country not in US", "feature KEY OP VALUE" (OP: eq, neq, in, gt, gte, lt, lte) or "feature KEY exists"'

/** A "quoted" JSON string at `i`: its value and where it ends; undefined when it is not one. */
function quoted(text: string, i: number): {end: number; value: string} | undefined {
  if (text[i] !== '"') return undefined
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++
    else if (text[j] === '"') {
      try {
        return {end: j + 1, value: JSON.parse(text.slice(i, j + 1)) as string}
      } catch {
        return undefined
      }
    }
  }
  return undefined
}

/** A comma-separated list; an item may be "quoted" (JSON) to hold commas, spaces or quotes. */
function list(text: string): string[] {
  const out: string[] = []
  let i = 0
  while (i < text.length) {
    while (text[i] === ' ') i++
    const q = quoted(text, i)
    if (q && /^\s*(,|$)/.test(text.slice(q.end))) {
      out.push(q.value)
      i = q.end
      while (text[i] === ' ') i++
      i++ // the comma
      continue
    }
    const comma = text.indexOf(',', i)
    const item = (comma < 0 ? text.slice(i) : text.slice(i, comma)).trim()
    if (item) out.push(item)
    i = comma < 0 ? text.length : comma + 1
  }
  return out
}

/** One value: "quoted" (JSON) or the text as typed. */
function single(text: string): string {
  const q = quoted(text, 0)
  return q && q.end === text.length ? q.value : text
}

/**
 * Parse the text form of a rule. Throws RuleSyntaxError naming what is wrong; the result
 * still goes through the zod schema (country codes, numbers), which names field and value.
 */
export function parseRuleText(text: string): Record<string, unknown> {
  const t = text.trim()
  const country = /^country\s+(not\s+in|not_in|in)\s+(.+)$/i.exec(t)
  if (country) {
    const operator = /^in$/i.test(country[1]) ? 'in' : 'not_in'
    return {operator, type: 'country', values: list(country[2]).map(upperCode)}
  }
  if (/^country\b/i.test(t)) {
    const op = t.split(/\s+/)[1]
    throw new RuleSyntaxError(op ? `unknown country operator "${op}" in "${t}" (expected in or not in)` : `"${t}" names no operator (expected ${RULE_FORMS})`)
  }
  const feature = /^feature\s+(\S+)\s+(\S+)(?:\s+(.*))?$/i.exec(t)
  if (!feature) throw new RuleSyntaxError(`cannot read rule "${t}" (expected ${RULE_FORMS})`)
  const [, key, opText, rest] = feature
  const reserved = reservedKeyProblem(key, 'feature')
  if (reserved) throw new RuleSyntaxError(`${reserved}, in "${t}"`)
  const operator = featureOperator(opText)
  if (!operator) throw new RuleSyntaxError(`unknown operator "${opText}" in "${t}" (expected one of ${FEATURE_OPERATORS.join(', ')})`)
  const value = rest?.trim() ?? ''
  if (operator === 'exists') {
    if (value) throw new RuleSyntaxError(`"exists" takes no value, got "${value}" in "${t}"`)
    return {feature: key, operator, type: 'feature'}
  }
  if (!value) throw new RuleSyntaxError(`"${operator}" needs a value in "${t}"`)
  if (operator === 'in') return {feature: key, operator, type: 'feature', values: list(value)}
  // Text values stay text: eq/neq compare numerically whenever both sides are numbers.
  return {feature: key, operator, type: 'feature', value: single(value)}
}

function literalText(v: Literal): string {
  return typeof v === 'string' && (v === '' || /[\s,"]/.test(v)) ? JSON.stringify(v) : String(v)
}

/** The text form of a rule (what tables and explain show). */
export function ruleText(r: Rule): string {
  if (r.type === 'country') return `country ${r.operator === 'in' ? 'in' : 'not in'} ${r.values.join(',')}`
  switch (r.operator) {
    case 'exists': {
      return `feature ${r.feature} exists`
    }

    case 'in': {
      return `feature ${r.feature} in ${r.values.map((v) => literalText(v)).join(',')}`
    }

    default: {
      return `feature ${r.feature} ${r.operator} ${literalText(r.value)}`
    }
  }
}

/** Equality as the rules read it: numerically when both sides are numbers, else as text. */
export function looselyEqual(actual: Literal, expected: Literal): boolean {
  const a = asNumber(actual)
  const b = asNumber(expected)
  if (a !== undefined && b !== undefined) return a === b
  return String(actual) === String(expected)
}

export type RuleOutcome = {matched: boolean; why: string}

/** Does a rule hold for this country and these features? Cheap: no strings built. */
export function ruleMatches(r: Rule, country: string, features: FeatureValues): boolean {
  if (r.type === 'country') return r.values.includes(country) === (r.operator === 'in')
  if (!Object.hasOwn(features, r.feature)) return false
  if (r.operator === 'exists') return true
  const actual = features[r.feature]
  switch (r.operator) {
    case 'eq': {
      return looselyEqual(actual, r.value)
    }

    case 'neq': {
      return !looselyEqual(actual, r.value)
    }

    case 'in': {
      return r.values.some((v) => looselyEqual(actual, v))
    }

    default: {
      const n = asNumber(actual)
      if (n === undefined) return false
      switch (r.operator) {
        case 'gt': {
          return n > r.value
        }

        case 'gte': {
          return n >= r.value
        }

        case 'lt': {
          return n < r.value
        }

        case 'lte': {
          return n <= r.value
        }
      }
    }
  }
}

/** Like ruleMatches, with the reason in words (for price explain). */
export function explainRule(r: Rule, country: string, features: FeatureValues): RuleOutcome {
  const matched = ruleMatches(r, country, features)
  if (r.type === 'country') return {matched, why: `country is ${country}`}
  if (!Object.hasOwn(features, r.feature)) return {matched, why: `feature ${r.feature} not given`}
  const actual = features[r.feature]
  const shown = JSON.stringify(actual)
  if (r.operator === 'exists') return {matched, why: `${r.feature} = ${shown}`}
  if ((r.operator === 'gt' || r.operator === 'gte' || r.operator === 'lt' || r.operator === 'lte') && asNumber(actual) === undefined) {
    return {matched, why: `${r.feature} = ${shown} is not a number`}
  }
  const numeric = asNumber(actual) !== undefined && (r.operator === 'in' ? r.values.some((v) => asNumber(v) !== undefined) : asNumber(r.value) !== undefined)
  return {matched, why: `${r.feature} = ${shown}${numeric ? ', compared as numbers' : ''}`}
}
