import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../src/errors.js'
import {
  applyRounding,
  type CompiledRule,
  DEFAULT_RULES,
  defaultRuleText,
  isPricePoint,
  minorToText,
  parseRule,
  roundWithDetail,
} from '../../src/pricing/rounding.js'

/** One currency per count of minor digits ICU knows (0, 2, 3). */
const CURRENCIES = [
  {currency: 'JPY', digits: 0},
  {currency: 'USD', digits: 2},
  {currency: 'KWD', digits: 3},
] as const

function parseError(text: string, currency = 'USD'): string {
  try {
    parseRule(text, currency)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as Error).message
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`)
}

describe('parseRule', () => {
  it('accepts both bound styles and stores a canonical text', () => {
    expect(parseRule('0-10: end .99 up; 10-1000: end 9.99 nearest; 1000+: multiple 10 up', 'USD').text).toBe(
      '0-10: end .99 up; 10-1000: end 9.99 nearest; 1000+: multiple 10 up',
    )
    expect(parseRule('<10: ENDING .49,.99 Down\n<1000: ending 9 nearest\n*: sigfig 2 up', 'EUR').text).toBe(
      '0-10: end .49,.99 down; 10-1000: end 9 nearest; 1000+: sigfig 2 up',
    )
    expect(parseRule('0+: keep', 'JPY').text).toBe('0+: keep')
    expect(parseRule('0-0.5: multiple 0.050 up; 0.5+: end .990 nearest', 'KWD').text).toBe('0-0.5: multiple 0.050 up; 0.5+: end .990 nearest')
  })

  it('names the position and the token of what is wrong', () => {
    expect(parseError('0-10: end .99 foo; 10+: keep')).toContain('position 15: unexpected "foo": expected a direction: up, down or nearest')
    expect(parseError('0-10: round .99 up; 10+: keep')).toContain('position 7: unexpected "round": expected an action')
    expect(parseError('0-10 end .99 up')).toContain('position 6: unexpected "end": expected ":" after the range')
    expect(parseError('0-10: end .99 up; 10+: keep $')).toContain('position 29: unexpected character "$"')
    expect(parseError('0-10: end .99 up')).toContain('position 17: the last range must be open-ended: write "10+: ..."')
    expect(parseError('5-10: end .99 up; 10+: keep')).toContain('position 1: the first range must start at 0, not 5')
    expect(parseError('0-10: end .99 up; 20+: keep')).toContain('position 19: range starts at 20 but the previous range ends at 10')
    expect(parseError('0+: keep; 10+: keep')).toContain('position 11: a range follows the open-ended last range')
    expect(parseError('10-5: keep; 5+: keep')).toContain('the first range must start at 0')
    expect(parseError('0-0: keep; 0+: keep')).toContain('position 1: empty range')
    expect(parseError('0-0.5: end .99 up; 0.5+: keep')).toContain('range 0-0.5 holds no price for "end .99 up"')
    expect(parseError('0+: sigfig 0 up')).toContain('position 12: sigfig 0: expected a whole number from 1 to 15')
    expect(parseError('0+: multiple 0 up')).toContain('position 14: multiple 0 must be above 0')
    expect(parseError('0+: end')).toContain('position 8: rule ends early: expected an ending')
    expect(parseError('')).toContain('the rule is empty')
    expect(parseError('0+: end .99 up', 'JPY')).toContain('position 9: ending .99 has 2 decimals but JPY has 0')
    expect(parseError('0+: multiple 0.0001 up', 'KWD')).toContain('multiple 0.0001 has 4 decimals but KWD has 3')
    expect(parseError('0+: keep', 'XXZ')).toContain('unknown currency "XXZ"')
  })

  it('quotes the rule in the message', () => {
    expect(parseError('0-10: end .99 foo')).toMatch(/^invalid rounding rule "0-10: end .99 foo": position 15/)
  })

  it('has a default for every minor-digit count ICU uses, and every default parses', () => {
    const digits = new Set(Intl.supportedValuesOf('currency').map((c) => new Intl.NumberFormat('en', {currency: c, style: 'currency'}).resolvedOptions().maximumFractionDigits))
    for (const d of digits) expect(DEFAULT_RULES[d!], `default for ${d} digits`).toBeDefined()
    for (const c of Intl.supportedValuesOf('currency')) expect(() => parseRule(defaultRuleText(c), c)).not.toThrow()
  })
})

describe('applyRounding: examples an operator checks', () => {
  const cases: [string, string, number, number][] = [
    // [currency, rule, amount minor, rounded minor]
    ['USD', '0+: end .99 up', 937, 999],
    ['USD', '0+: end .99 down', 937, 899],
    ['USD', '0+: end .99 nearest', 937, 899],
    ['USD', '0+: end .99 nearest', 950, 999], // 9.99 is 0.49 away, 8.99 0.51
    ['USD', '0+: end .99 down', 50, 99], // nothing positive below: up instead of 0
    ['USD', '0+: end 9 nearest', 2350, 1900], // whole amounts ending in 9: 19.00 / 29.00
    ['USD', '0+: end 9.99 up', 1000, 1999],
    ['USD', '0+: end .49,.99 up', 1010, 1049],
    ['USD', '0+: multiple 0.05 up', 1001, 1005],
    ['USD', '0+: sigfig 2 nearest', 123_456, 120_000],
    ['USD', '0+: keep', 1234, 1234],
    ['JPY', '0+: end 80 up', 1234, 1280],
    ['JPY', '0+: end 9 down', 1234, 1229],
    ['JPY', '0+: multiple 100 up', 1201, 1300],
    ['KWD', '0+: end .990 up', 4500, 4990],
    ['KWD', '0+: multiple 0.050 nearest', 3070, 3050],
    ['USD', '0-100: end .99 nearest; 100-1000: end 9.99 nearest; 1000+: end 9 nearest', 10_050, 9999],
    ['USD', '0-10: multiple 5 up; 10+: end 9 up', 700, 1900], // no price point left in 0-10: the next range's first
  ]
  it.each(cases)('%s %s: %i -> %i', (currency, rule, amount, rounded) => {
    expect(applyRounding(rule, amount, currency)).toBe(rounded)
  })

  it('a tie of nearest goes up', () => {
    expect(applyRounding('0+: end .99 nearest', 949, 'USD')).toBe(999)
    expect(applyRounding('0+: multiple 10 nearest', 125, 'JPY')).toBe(130)
  })

  it('uses the built-in defaults per digit count', () => {
    const round = (amount: number, currency: string) => applyRounding(defaultRuleText(currency), amount, currency)
    expect(round(937, 'EUR')).toBe(899)
    expect(round(12_345, 'USD')).toBe(11_999)
    expect(round(123_456, 'USD')).toBe(123_900)
    expect(round(1234, 'JPY')).toBe(1200)
    expect(round(13_456, 'KRW')).toBe(13_500)
    expect(round(9456, 'CLP')).toBe(9500)
    expect(round(245_678, 'VND')).toBe(246_000)
    expect(round(3070, 'KWD')).toBe(3050)
    expect(round(12_345, 'BHD')).toBe(11_990)
  })

  it('keeps 0 at 0 and refuses negative or fractional minor units', () => {
    expect(applyRounding('0+: end .99 up', 0, 'USD')).toBe(0)
    expect(() => applyRounding('0+: end .99 up', -1, 'USD')).toThrow(InvalidInputError)
    expect(() => applyRounding('0+: end .99 up', 9.5, 'USD')).toThrow(InvalidInputError)
  })

  it('reports the range and action that applied', () => {
    const rule = '0-10: end .99 up; 10+: multiple 5 down'
    expect(roundWithDetail(rule, 937, 'USD')).toEqual({action: 'end .99 up', range: '0-10', rounded: 999})
    expect(roundWithDetail(rule, 1234, 'USD')).toEqual({action: 'multiple 5 down', range: '10+', rounded: 1000})
  })

  it('recompiles a rule compiled for another currency', () => {
    const usd = parseRule('0+: multiple 1 up', 'USD')
    expect(applyRounding(usd, 150, 'USD')).toBe(200)
    expect(applyRounding(usd, 150, 'JPY')).toBe(150)
  })

  it('caches parsed rules', () => {
    expect(parseRule('0+: end .99 up', 'USD')).toBe(parseRule('0+: end .99 up', 'USD'))
  })
})

// ---------------------------------------------------------------------------------------
// Properties over random rules. The oracle below decides "is v a price point" from the
// generator's own description of the rule, not from the compiled rule.

type ActionSpec =
  | {endings: {e: number; intDigits: number}[]; kind: 'end'}
  | {kind: 'keep'}
  | {kind: 'multiple'; n: number}
  | {kind: 'sigfig'; n: number}
type RangeSpec = {action: ActionSpec; direction: 'down' | 'nearest' | 'up'; hi: number; lo: number}
type RuleSpec = {currency: string; digits: number; ranges: RangeSpec[]; text: string}

function endingText(e: number, intDigits: number, digits: number): string {
  const unit = 10 ** digits
  const intPart = intDigits === 0 ? '' : String(Math.floor(e / unit)).padStart(intDigits, '0')
  return digits === 0 ? intPart : `${intPart}.${String(e % unit).padStart(digits, '0')}`
}

function actionArb(digits: number): fc.Arbitrary<ActionSpec> {
  const ending = fc.integer({max: 2, min: digits === 0 ? 1 : 0}).chain((intDigits) => fc.record({e: fc.integer({max: 10 ** (intDigits + digits) - 1, min: 0}), intDigits: fc.constant(intDigits)}))
  return fc.oneof(
    fc.record({endings: fc.array(ending, {maxLength: 2, minLength: 1}), kind: fc.constant('end' as const)}),
    fc.record({kind: fc.constant('multiple' as const), n: fc.integer({max: 10 ** (digits + 1), min: 1})}),
    fc.record({kind: fc.constant('sigfig' as const), n: fc.integer({max: 4, min: 2})}),
    fc.constant({kind: 'keep' as const}),
  )
}

function ruleArb(): fc.Arbitrary<RuleSpec> {
  return fc.constantFrom(...CURRENCIES).chain(({currency, digits}) =>
    fc
      .record({
        actions: fc.array(fc.record({action: actionArb(digits), direction: fc.constantFrom('up' as const, 'down' as const, 'nearest' as const)}), {maxLength: 4, minLength: 1}),
        bounds: fc.uniqueArray(fc.integer({max: 1_000_000, min: 1}), {maxLength: 3}),
      })
      .map(({actions, bounds}) => {
        const sorted = [...bounds].sort((a, b) => a - b).slice(0, actions.length - 1)
        const edges = [0, ...sorted, Infinity]
        const ranges = actions.slice(0, edges.length - 1).map((a, i) => ({...a, hi: edges[i + 1], lo: edges[i]}))
        const text = ranges
          .map((r) => {
            const bound = r.hi === Infinity ? `${minorToText(r.lo, digits)}+` : `${minorToText(r.lo, digits)}-${minorToText(r.hi, digits)}`
            const a = r.action
            const action =
              a.kind === 'end'
                ? `end ${a.endings.map((x) => endingText(x.e, x.intDigits, digits)).join(',')} ${r.direction}`
                : a.kind === 'multiple'
                  ? `multiple ${minorToText(a.n, digits)} ${r.direction}`
                  : a.kind === 'sigfig'
                    ? `sigfig ${a.n} ${r.direction}`
                    : 'keep'
            return `${bound}: ${action}`
          })
          .join('; ')
        return {currency, digits, ranges, text}
      }),
  )
}

/** Amounts for a rule: anywhere, or close to one of its range bounds where the ranges meet. */
function withAmount(max: number, min = 1): fc.Arbitrary<[RuleSpec, number]> {
  return ruleArb().chain((spec) => {
    const bounds = spec.ranges.map((r) => r.lo).filter((b) => b > 0)
    const near = bounds.length === 0 ? [] : [fc.tuple(fc.constantFrom(...bounds), fc.integer({max: 2000, min: -2000})).map(([b, d]) => Math.min(max, Math.max(min, b + d)))]
    return fc.tuple(fc.constant(spec), fc.oneof(fc.integer({max, min}), ...near))
  })
}

function specRange(spec: RuleSpec, v: number): RangeSpec {
  return spec.ranges.find((r) => v >= r.lo && v < r.hi)!
}

function isPoint(spec: RuleSpec, v: number): boolean {
  if (v <= 0) return false
  const {action} = specRange(spec, v)
  switch (action.kind) {
    case 'end': {
      return action.endings.some(({e, intDigits}) => v % 10 ** (intDigits + spec.digits) === e)
    }

    case 'keep': {
      return true
    }

    case 'multiple': {
      return v % action.n === 0
    }

    case 'sigfig': {
      return /^0*$/.test(String(v).slice(action.n))
    }
  }
}

/** Compile a generated rule; rules with a range that holds no price point are refused, and skipped here. */
function compile(spec: RuleSpec): CompiledRule | undefined {
  try {
    return parseRule(spec.text, spec.currency)
  } catch (error) {
    if ((error as Error).message.includes('holds no price')) return undefined
    throw error
  }
}

function anyPointIn(spec: RuleSpec, from: number, to: number): boolean {
  for (let v = Math.max(1, from); v <= to; v++) if (isPoint(spec, v)) return true
  return false
}

describe('rounding properties (fast-check)', () => {
  it('respects direction and range, lands on a price point, and is exact (small amounts, full oracle)', () => {
    fc.assert(
      fc.property(withAmount(2_000_000), ([spec, x]) => {
        const rule = compile(spec)
        fc.pre(rule !== undefined)
        const {range, rounded: r} = roundWithDetail(rule!, x, spec.currency)
        const applied = specRange(spec, x)
        // The range reported is the one the amount falls in.
        expect(range).toBe(rule!.ranges[spec.ranges.indexOf(applied)].label)
        expect(Number.isSafeInteger(r)).toBe(true)
        expect(r).toBeGreaterThan(0)
        expect(isPoint(spec, r)).toBe(true)
        expect(isPricePoint(rule!, r)).toBe(true)
        const direction = applied.action.kind === 'keep' ? 'nearest' : applied.direction
        if (direction === 'up') {
          expect(r).toBeGreaterThanOrEqual(x)
          expect(anyPointIn(spec, x, r - 1)).toBe(false)
          // When the amount's own range has a point at or above it, the result stays in that range.
          if (applied.hi !== Infinity && anyPointIn(spec, x, applied.hi - 1)) expect(r).toBeLessThan(applied.hi)
        } else if (direction === 'down') {
          if (anyPointIn(spec, 1, x)) {
            expect(r).toBeLessThanOrEqual(x)
            expect(anyPointIn(spec, r + 1, x)).toBe(false)
            if (anyPointIn(spec, applied.lo, x)) expect(r).toBeGreaterThanOrEqual(applied.lo)
          } else {
            // Nothing positive below: up instead, never 0.
            expect(r).toBeGreaterThanOrEqual(x)
            expect(anyPointIn(spec, x, r - 1)).toBe(false)
          }
        } else {
          const d = Math.abs(r - x)
          // No price point is closer, and on a tie the upper one wins.
          expect(anyPointIn(spec, x - d + 1, x + d - 1)).toBe(false)
          if (r < x) expect(isPoint(spec, x + d)).toBe(false)
        }
      }),
      {numRuns: 400},
    )
  })

  it('is idempotent: rounding a rounded price changes nothing', () => {
    fc.assert(
      fc.property(withAmount(1e13, 0), ([spec, x]) => {
        const rule = compile(spec)
        fc.pre(rule !== undefined)
        const once = applyRounding(rule!, x, spec.currency)
        expect(applyRounding(rule!, once, spec.currency)).toBe(once)
      }),
      {numRuns: 1000},
    )
  })

  it('never turns a positive price into 0 or less, and keeps the direction for large amounts', () => {
    fc.assert(
      fc.property(withAmount(1e13), ([spec, x]) => {
        const rule = compile(spec)
        fc.pre(rule !== undefined)
        const r = applyRounding(rule!, x, spec.currency)
        expect(r).toBeGreaterThan(0)
        expect(Number.isSafeInteger(r)).toBe(true)
        const applied = specRange(spec, x)
        if (applied.action.kind !== 'keep' && applied.direction === 'up') expect(r).toBeGreaterThanOrEqual(x)
        if (applied.action.kind !== 'keep' && applied.direction === 'down' && r > x) {
          // Only when no positive point lies at or below x: every point is above it then.
          expect(anyPointIn(spec, 1, Math.min(x, 200_000))).toBe(false)
        }
      }),
      {numRuns: 1000},
    )
  })

  it('built-in defaults: idempotent, positive, on a price point, for every ICU currency', () => {
    const currencies = Intl.supportedValuesOf('currency')
    fc.assert(
      fc.property(fc.constantFrom(...currencies), fc.oneof(fc.integer({max: 10_000, min: 1}), fc.integer({max: 1e13, min: 1})), (currency, x) => {
        const rule = parseRule(defaultRuleText(currency), currency)
        const r = applyRounding(rule, x, currency)
        expect(r).toBeGreaterThan(0)
        expect(isPricePoint(rule, r)).toBe(true)
        expect(applyRounding(rule, r, currency)).toBe(r)
      }),
      {numRuns: 2000},
    )
  })
})
