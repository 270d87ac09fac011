import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../src/errors.js'
import {RuleInput} from '../../src/schemas/segments.js'
import {validate} from '../../src/schemas/validate.js'
import {asNumber, explainRule, parseRuleText, type Rule, ruleMatches, ruleText} from '../../src/segments/rules.js'

const rule = (r: unknown): Rule => validate(RuleInput, r, 'rule')

describe('audience rules: parsing', () => {
  it('refuses a rule on the feature "__proto__", in text and object form: it could never match', () => {
    expect(() => parseRuleText('feature __proto__ eq x')).toThrow(/"__proto__" cannot be a feature name \(JavaScript reserves it\); rename it, in "feature __proto__ eq x"/)
    expect(() => rule({feature: '__proto__', operator: 'exists', type: 'feature'})).toThrow(/feature: "__proto__" cannot be a feature name/)
  })

  it.each([
    ['country in de, AT', {operator: 'in', type: 'country', values: ['DE', 'AT']}],
    ['country not in US', {operator: 'not_in', type: 'country', values: ['US']}],
    ['country not_in US,CA', {operator: 'not_in', type: 'country', values: ['US', 'CA']}],
    ['feature plan_level gt 3', {feature: 'plan_level', operator: 'gt', type: 'feature', value: 3}],
    ['feature plan_level >= 2.5', {feature: 'plan_level', operator: 'gte', type: 'feature', value: 2.5}],
    ['feature tier in gold, silver', {feature: 'tier', operator: 'in', type: 'feature', values: ['gold', 'silver']}],
    ['feature beta exists', {feature: 'beta', operator: 'exists', type: 'feature'}],
    ['feature plan eq pro plus', {feature: 'plan', operator: 'eq', type: 'feature', value: 'pro plus'}],
    ['feature plan != free', {feature: 'plan', operator: 'neq', type: 'feature', value: 'free'}],
    ['feature plan in "a, b",c', {feature: 'plan', operator: 'in', type: 'feature', values: ['a, b', 'c']}],
    ['feature plan eq "say \\"hi\\""', {feature: 'plan', operator: 'eq', type: 'feature', value: 'say "hi"'}],
  ])('reads %j', (text, expected) => {
    expect(rule(text)).toEqual(expected)
  })

  it('takes the object form, with numeric strings as numbers for gt/gte/lt/lte', () => {
    expect(rule({feature: 'n', operator: 'lte', type: 'feature', value: '10'})).toEqual({feature: 'n', operator: 'lte', type: 'feature', value: 10})
    expect(rule({operator: 'not in', type: 'country', values: ['BR']})).toEqual({operator: 'not_in', type: 'country', values: ['BR']})
  })

  it.each([
    ['feature plan like pro', /unknown operator "like"/],
    ['feature plan_level gt three', /"gt" compares numbers: "three" is not a number/],
    ['feature plan_level lt', /"lt" needs a value/],
    ['feature beta exists yes', /"exists" takes no value/],
    ['country within DE', /unknown country operator "within"/],
    ['country in XX', /unknown country "XX"/],
    ['plan gt 3', /cannot read rule/],
    [{feature: 'n', operator: 'bigger', type: 'feature', value: 1}, /operator: unknown operator "bigger"/],
    [{feature: 'n', operator: 'gt', type: 'feature', value: 'x'}, /value: "gt" compares numbers: "x" is not a number/],
    [{feature: 'n', operator: 'in', type: 'feature', value: 'x'}, /"in" needs values/],
    [{feature: 'has space', operator: 'exists', type: 'feature'}, /must not contain spaces/],
    [{operator: 'in', type: 'region', values: ['EU']}, /"type" country or feature/],
    [{operator: 'in', type: 'country', values: []}, /needs at least one country/],
  ])('refuses %j naming the problem', (input, message) => {
    expect(() => rule(input)).toThrow(InvalidInputError)
    expect(() => rule(input)).toThrow(message)
  })

  it('prints rules in the text form it reads back', () => {
    const literal = fc.oneof(fc.integer({max: 1000, min: -1000}), fc.constantFrom('gold', 'pro plus', 'a,b', 'true'))
    const arb: fc.Arbitrary<unknown> = fc.oneof(
      fc.record({operator: fc.constantFrom('in', 'not_in'), type: fc.constant('country'), values: fc.uniqueArray(fc.constantFrom('DE', 'AT', 'US', 'BR', 'JP'), {maxLength: 4, minLength: 1})}),
      fc.record({feature: fc.constantFrom('plan', 'level', 'x_1'), operator: fc.constantFrom('gt', 'gte', 'lt', 'lte'), type: fc.constant('feature'), value: fc.integer({max: 1000, min: -1000})}),
      fc.record({feature: fc.constantFrom('plan', 'level'), operator: fc.constant('exists'), type: fc.constant('feature')}),
      fc.record({feature: fc.constantFrom('plan', 'level'), operator: fc.constantFrom('eq', 'neq'), type: fc.constant('feature'), value: literal}),
    )
    fc.assert(
      fc.property(arb, (input) => {
        const r = rule(input)
        const back = rule(ruleText(r))
        // Text values come back as text; they compare the same.
        expect(ruleText(back)).toBe(ruleText(r))
      }),
    )
  })
})

describe('audience rules: matching', () => {
  it('"10" gt "9" is true for numeric features: numbers are compared as numbers', () => {
    const gt9 = rule('feature level gt 9')
    expect(ruleMatches(gt9, 'US', {level: '10'})).toBe(true)
    expect(ruleMatches(gt9, 'US', {level: 10})).toBe(true)
    expect(ruleMatches(gt9, 'US', {level: '9'})).toBe(false)
    expect(ruleMatches(gt9, 'US', {level: 'ten'})).toBe(false)
    expect(ruleMatches(rule('feature level eq 10'), 'US', {level: '10.0'})).toBe(true)
    expect(ruleMatches(rule('feature level in 1,10'), 'US', {level: '10'})).toBe(true)
    expect(explainRule(gt9, 'US', {level: '10'}).why).toContain('compared as numbers')
    expect(explainRule(gt9, 'US', {level: 'ten'}).why).toContain('is not a number')
  })

  it('compares every numeric pair as numbers, whatever the text form', () => {
    fc.assert(
      fc.property(fc.integer({max: 10_000, min: -10_000}), fc.integer({max: 10_000, min: -10_000}), (a, b) => {
        const features = {n: String(a)}
        expect(ruleMatches(rule(`feature n gt ${b}`), 'US', features)).toBe(a > b)
        expect(ruleMatches(rule(`feature n gte ${b}`), 'US', features)).toBe(a >= b)
        expect(ruleMatches(rule(`feature n lt ${b}`), 'US', features)).toBe(a < b)
        expect(ruleMatches(rule(`feature n lte ${b}`), 'US', features)).toBe(a <= b)
        expect(ruleMatches(rule(`feature n eq ${b}`), 'US', features)).toBe(a === b)
        expect(ruleMatches(rule(`feature n neq ${b}`), 'US', features)).toBe(a !== b)
      }),
    )
  })

  it('a missing feature fails every operator, exists included; text compares exactly', () => {
    for (const text of ['feature plan eq pro', 'feature plan neq pro', 'feature plan in pro', 'feature plan gt 1', 'feature plan exists']) {
      expect(ruleMatches(rule(text), 'US', {}), text).toBe(false)
    }
    expect(ruleMatches(rule('feature plan exists'), 'US', {plan: ''})).toBe(true)
    expect(ruleMatches(rule('feature plan eq Pro'), 'US', {plan: 'pro'})).toBe(false)
    expect(ruleMatches(rule('feature beta eq true'), 'US', {beta: true})).toBe(true)
  })

  it('country in / not in', () => {
    expect(ruleMatches(rule('country in DE,AT'), 'AT', {})).toBe(true)
    expect(ruleMatches(rule('country in DE,AT'), 'US', {})).toBe(false)
    expect(ruleMatches(rule('country not in DE,AT'), 'US', {})).toBe(true)
    expect(ruleMatches(rule('country not in DE,AT'), 'DE', {})).toBe(false)
  })

  it('asNumber reads numbers and numeric text only', () => {
    expect(asNumber('10')).toBe(10)
    expect(asNumber(' -2.5 ')).toBe(-2.5)
    expect(asNumber('1e3')).toBe(1000)
    expect(asNumber('')).toBeUndefined()
    expect(asNumber('10px')).toBeUndefined()
    expect(asNumber(true)).toBeUndefined()
    expect(parseRuleText('feature a gt 3')).toEqual({feature: 'a', operator: 'gt', type: 'feature', value: '3'})
  })
})
