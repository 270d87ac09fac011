import {describe, expect, it} from 'vitest'

import {asNumber, explainRule, featureOperator, looselyEqual, parseRuleText, ruleText, RuleSyntaxError} from '../../src/segments/rules.js'

/**
 * Fixed examples of the rule text reader and the explain wording, one per behaviour a
 * mutant of `npm run mutate` showed untested (docs/hardening.md, "Mutation testing").
 */

describe('asNumber: decimal notation only, the whole text', () => {
  it.each([
    ['10', 10], [' -1.5 ', -1.5], ['+2', 2], ['.5', 0.5], ['5.', 5], ['1e3', 1000], ['2E-2', 0.02], ['1e+2', 100], ['12', 12],
  ])('%j is %d', (text, n) => expect(asNumber(text)).toBe(n))
  it.each(['', ' ', 'x1', '1x', '1 2', '0x1F', 'e5', '1e', '1.2.3', '--1', '1e999', 'a.5', '.e1', '1ee2', '1e+', 'Infinity', '1.x'])('%j is not a number', (text) =>
    expect(asNumber(text)).toBeUndefined(),
  )
  it('numbers and other types', () => {
    expect(asNumber(3)).toBe(3)
    expect(asNumber(Infinity)).toBeUndefined()
    expect(asNumber(true)).toBeUndefined()
    expect(asNumber(null)).toBeUndefined()
    // A list is not a number, even one whose text would be.
    expect(asNumber([5])).toBeUndefined()
  })
})

describe('featureOperator: words and symbols, any case and spacing', () => {
  it.each([
    ['!=', 'neq'], ['<', 'lt'], ['<=', 'lte'], ['=', 'eq'], ['==', 'eq'], ['>', 'gt'], ['>=', 'gte'], [' GTE ', 'gte'], ['Exists', 'exists'],
  ])('%j is %s', (text, op) => expect(featureOperator(text)).toBe(op))
  it('anything else is no operator', () => {
    expect(featureOperator('=>')).toBeUndefined()
    expect(featureOperator('')).toBeUndefined()
  })
})

describe('parseRuleText', () => {
  it('country rules: in, not in, not_in, any case, lists with spaces and quotes', () => {
    expect(parseRuleText('  country in de, at ,, ')).toEqual({operator: 'in', type: 'country', values: ['DE', 'AT']})
    expect(parseRuleText('COUNTRY NOT  IN us')).toEqual({operator: 'not_in', type: 'country', values: ['US']})
    expect(parseRuleText('country in ,DE')).toEqual({operator: 'in', type: 'country', values: ['DE']})
    expect(parseRuleText('country not_in US,CA')).toEqual({operator: 'not_in', type: 'country', values: ['US', 'CA']})
    expect(parseRuleText('country  in   "fr" , "it"')).toEqual({operator: 'in', type: 'country', values: ['FR', 'IT']})
  })

  it('country rules without a known operator say which', () => {
    expect(() => parseRuleText('country within DE')).toThrow(new RuleSyntaxError('unknown country operator "within" in "country within DE" (expected in or not in)'))
    expect(() => parseRuleText('country')).toThrow(/^"country" names no operator \(expected "country in DE,AT", "country not in US", "feature KEY OP VALUE"/)
    expect(() => parseRuleText('country in')).toThrow(/^unknown country operator "in" in "country in"/)
    expect(() => parseRuleText('countryin DE')).toThrow(/^cannot read rule "countryin DE"/)
    expect(() => parseRuleText('xcountry in DE')).toThrow(/^cannot read rule "xcountry in DE"/)
    expect(() => parseRuleText('country   within DE')).toThrow(/^unknown country operator "within"/)
  })

  it('feature rules: one value, a list, quoted values, exists', () => {
    expect(parseRuleText('feature seats >= 10')).toEqual({feature: 'seats', operator: 'gte', type: 'feature', value: '10'})
    expect(parseRuleText('FEATURE plan  eq   pro plus ')).toEqual({feature: 'plan', operator: 'eq', type: 'feature', value: 'pro plus'})
    expect(parseRuleText('feature plan eq "a, \\"b\\""')).toEqual({feature: 'plan', operator: 'eq', type: 'feature', value: 'a, "b"'})
    expect(parseRuleText('feature plan eq "a" b')).toEqual({feature: 'plan', operator: 'eq', type: 'feature', value: '"a" b'})
    expect(parseRuleText('feature plan eq "bad\\x"')).toEqual({feature: 'plan', operator: 'eq', type: 'feature', value: '"bad\\x"'})
    expect(parseRuleText('feature plan in pro, "a,b" ,"c" ,d')).toEqual({feature: 'plan', operator: 'in', type: 'feature', values: ['pro', 'a,b', 'c', 'd']})
    expect(parseRuleText('feature plan in "x" y, z')).toEqual({feature: 'plan', operator: 'in', type: 'feature', values: ['"x" y', 'z']})
    expect(parseRuleText('feature plan in "unterminated, z')).toEqual({feature: 'plan', operator: 'in', type: 'feature', values: ['"unterminated', 'z']})
    expect(parseRuleText('feature  seats  gt  3')).toEqual({feature: 'seats', operator: 'gt', type: 'feature', value: '3'})
    // Only spaces are skipped before a quoted item: after a tab it is text as typed.
    expect(parseRuleText('feature plan in x,\t"a"')).toEqual({feature: 'plan', operator: 'in', type: 'feature', values: ['x', '"a"']})
    expect(parseRuleText('feature beta exists')).toEqual({feature: 'beta', operator: 'exists', type: 'feature'})
  })

  it('feature rules with a missing or extra part say which', () => {
    expect(() => parseRuleText('feature beta exists yes')).toThrow(new RuleSyntaxError('"exists" takes no value, got "yes" in "feature beta exists yes"'))
    expect(() => parseRuleText('feature seats gt')).toThrow(new RuleSyntaxError('"gt" needs a value in "feature seats gt"'))
    expect(() => parseRuleText('feature seats about 3')).toThrow(new RuleSyntaxError('unknown operator "about" in "feature seats about 3" (expected one of eq, neq, in, gt, gte, lt, lte, exists)'))
    expect(() => parseRuleText('feature seats')).toThrow(/^cannot read rule "feature seats" \(expected/)
    expect(() => parseRuleText('xfeature seats gt 3')).toThrow(/^cannot read rule/)
  })
})

describe('ruleText: the text form reads back as the same rule', () => {
  it.each([
    [{operator: 'in', type: 'country', values: ['DE', 'AT']}, 'country in DE,AT'],
    [{operator: 'not_in', type: 'country', values: ['US']}, 'country not in US'],
    [{feature: 'beta', operator: 'exists', type: 'feature'}, 'feature beta exists'],
    [{feature: 'plan', operator: 'in', type: 'feature', values: ['pro', 'a b', 'x,y', '', 3]}, 'feature plan in pro,"a b","x,y","",3'],
    [{feature: 'plan', operator: 'eq', type: 'feature', value: 'say "hi"'}, 'feature plan eq "say \\"hi\\""'],
    [{feature: 'seats', operator: 'gte', type: 'feature', value: 10}, 'feature seats gte 10'],
  ])('%j', (rule, text) => {
    expect(ruleText(rule as never)).toBe(text)
    const back = parseRuleText(text)
    expect(ruleText(back as never)).toBe(text.replace(/,3$/, ',3'))
  })
})

describe('looselyEqual and explainRule wording', () => {
  it('numbers when both sides are, else text', () => {
    expect(looselyEqual('10', 10)).toBe(true)
    expect(looselyEqual('1e1', '10')).toBe(true)
    expect(looselyEqual('10', 'ten')).toBe(false)
    expect(looselyEqual('pro', 'pro')).toBe(true)
    expect(looselyEqual('pro', 'basic')).toBe(false)
  })

  it('says what was compared, and how', () => {
    const gte = {feature: 'seats', operator: 'gte', type: 'feature', value: 10} as const
    expect(explainRule({operator: 'in', type: 'country', values: ['DE']}, 'DE', {})).toEqual({matched: true, why: 'country is DE'})
    expect(explainRule(gte, 'US', {})).toEqual({matched: false, why: 'feature seats not given'})
    expect(explainRule({feature: 'seats', operator: 'exists', type: 'feature'}, 'US', {seats: 3})).toEqual({matched: true, why: 'seats = 3'})
    expect(explainRule(gte, 'US', {seats: 'ten'})).toEqual({matched: false, why: 'seats = "ten" is not a number'})
    for (const operator of ['gt', 'lt', 'lte'] as const) {
      expect(explainRule({...gte, operator}, 'US', {seats: 'ten'}).why).toBe('seats = "ten" is not a number')
    }
    expect(explainRule(gte, 'US', {seats: '10'})).toEqual({matched: true, why: 'seats = "10", compared as numbers'})
    expect(explainRule({feature: 'plan', operator: 'eq', type: 'feature', value: 'pro'}, 'US', {plan: '10'})).toEqual({matched: false, why: 'plan = "10"'})
    expect(explainRule({feature: 'plan', operator: 'eq', type: 'feature', value: '10'}, 'US', {plan: 'pro'})).toEqual({matched: false, why: 'plan = "pro"'})
    expect(explainRule({feature: 'plan', operator: 'in', type: 'feature', values: ['pro', 10]}, 'US', {plan: 10})).toEqual({matched: true, why: 'plan = 10, compared as numbers'})
    expect(explainRule({feature: 'plan', operator: 'in', type: 'feature', values: ['pro', 'max']}, 'US', {plan: 10})).toEqual({matched: false, why: 'plan = 10'})
    expect(explainRule({feature: 'plan', operator: 'in', type: 'feature', values: [10]}, 'US', {plan: 'pro'})).toEqual({matched: false, why: 'plan = "pro"'})
  })
})
