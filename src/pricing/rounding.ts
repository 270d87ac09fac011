import {nowIso} from '../clock.js'
import {displayDigits, fromMinor, isCurrency, minorDigits, toMinor} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import type {StorePort} from '../store/port.js'

/**
 * Rounding rules: per currency, a list of contiguous amount ranges, each with an action
 * (price endings, multiples, significant figures, or keep) and a direction.
 *
 *   0-10: end .49,.99 nearest; 10-1000: end 9.99 up; 1000+: multiple 10 nearest
 *
 * Every range contributes the "price points" its action allows inside the range; the
 * union of them is the rule's set of price points. An amount moves, in the direction of
 * the range it falls in, to the nearest price point of the whole rule. So a rounded price
 * is always a price point, and rounding it again changes nothing (idempotent).
 *
 * All arithmetic is on integer minor units and pure; only the store section at the end
 * (ruleFor, setRule, ...) touches the database.
 * Syntax and defaults are documented in docs/rounding-display-gateways.md.
 */

export const DIRECTIONS = ['up', 'down', 'nearest'] as const
export type Direction = (typeof DIRECTIONS)[number]

/** A set of positive integers (minor units) with "smallest >= x" and "largest <= x". */
type PointSet = {
  /** Smallest point >= x (always exists: every action has points without an upper bound). */
  ceil(x: number): number
  /** Largest point <= x, or undefined when no positive point is <= x. */
  floor(x: number): number | undefined
  /** Whether v is a point (used by tests and explain). */
  has(v: number): boolean
}

export type RoundingAction =
  | {endings: {e: number; m: number; text: string}[]; kind: 'end'}
  | {kind: 'keep'}
  | {kind: 'multiple'; n: number; text: string}
  | {kind: 'sigfig'; n: number}

export type RoundingRange = {
  action: RoundingAction
  /** Human form of the action with its direction, e.g. "end .99 up" or "keep". */
  actionText: string
  direction: Direction
  /** Exclusive upper bound in minor units; Infinity for the open last range. */
  hi: number
  /** Human form of the range, e.g. "0-10" or "1000+". */
  label: string
  /** Inclusive lower bound in minor units. */
  lo: number
  points: PointSet
}

/** A parsed, validated rule for one currency; build it with parseRule (cached). */
export type CompiledRule = {
  currency: string
  digits: number
  ranges: RoundingRange[]
  /** Canonical text of the rule (what the store keeps and `rounding list` prints). */
  text: string
}

export type RoundingResult = {action: string; range: string; rounded: number}

// ---------------------------------------------------------------------------------------
// Built-in defaults

/**
 * Defaults by the digits buyers see (the display exponent: HUF and IDR are priced in
 * whole units although ISO keeps two decimals): 0, 2 or 3. Anything else is left as is.
 */
export const DEFAULT_RULES: Readonly<Record<number, string>> = {
  0: '0-1000: multiple 10 nearest; 1000-100000: multiple 100 nearest; 100000+: sigfig 3 nearest',
  2: '0-100: end .99 nearest; 100-1000: end 9.99 nearest; 1000+: end 9 nearest',
  3: '0-10: multiple 0.050 nearest; 10-100: end .990 nearest; 100+: multiple 1 nearest',
}
export const FALLBACK_RULE = '0+: keep'

/** The built-in rule text for a currency (by its display digits). */
export function defaultRuleText(currency: string): string {
  return DEFAULT_RULES[displayDigits(currency)] ?? FALLBACK_RULE
}

// ---------------------------------------------------------------------------------------
// Parsing

type Token = {kind: 'num' | 'punct' | 'word'; pos: number; text: string}

function ruleError(text: string, pos: number, what: string): InvalidInputError {
  return new InvalidInputError(`invalid rounding rule ${JSON.stringify(text)}: position ${pos}: ${what} (see "pricectl rounding set --help")`)
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  // Sticky: every character is consumed by exactly one alternative, so positions are exact.
  const re = /[^\S\n]+|\n|(\d+(?:\.\d+)?|\.\d+)|([A-Za-z]+)|([-+:;,<*])|(.)/guy
  const src = text.replaceAll('\r', ' ')
  let m: RegExpExecArray | null
  while ((m = re.exec(src)) !== null) {
    const pos = m.index + 1
    // Newlines separate ranges like ';' (a rule may list one range per line).
    if (m[0] === '\n') tokens.push({kind: 'punct', pos, text: ';'})
    else if (m[1] !== undefined) tokens.push({kind: 'num', pos, text: m[1]})
    else if (m[2] !== undefined) tokens.push({kind: 'word', pos, text: m[2].toLowerCase()})
    else if (m[3] !== undefined) tokens.push({kind: 'punct', pos, text: m[3]})
    else if (m[4] !== undefined) throw ruleError(text, pos, `unexpected character ${JSON.stringify(m[4])}`)
  }
  return tokens
}

/** A decimal as written ("9.99", ".5", "10") to exact integer minor units. */
function decimalToMinor(raw: string, digits: number, currency: string, text: string, pos: number, what: string): number {
  const [intPart, frac = ''] = raw.split('.')
  if (frac.length > digits) {
    throw ruleError(text, pos, `${what} ${raw} has ${frac.length} decimals but ${currency} has ${digits}`)
  }
  const minor = BigInt(intPart || '0') * 10n ** BigInt(digits) + BigInt((frac + '0'.repeat(digits)).slice(0, digits) || '0')
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) throw ruleError(text, pos, `${what} ${raw} is too large`)
  return Number(minor)
}

/** Minor units back to the shortest decimal text in currency units ("10", "9.5"). */
export function minorToText(minor: number, digits: number): string {
  if (digits === 0) return String(minor)
  const s = String(minor).padStart(digits + 1, '0')
  const frac = s.slice(-digits).replace(/0+$/, '')
  return s.slice(0, -digits) + (frac ? '.' + frac : '')
}

/** a mod b in [0, b), exact for safe integers (no float division). */
function mod(a: number, b: number): number {
  return ((a % b) + b) % b
}

/** Smallest v >= x with v = e (mod m). */
function ceilTo(x: number, m: number, e = 0): number {
  return x + mod(e - x, m)
}

/** Largest v <= x with v = e (mod m). */
function floorTo(x: number, m: number, e = 0): number {
  return x - mod(x - e, m)
}

function endingPoints(endings: {e: number; m: number}[]): PointSet {
  return {
    ceil(x) {
      let best = Infinity
      for (const {e, m} of endings) {
        const v = ceilTo(Math.max(x, 1), m, e)
        if (v < best) best = v
      }
      return best
    },
    floor(x) {
      let best: number | undefined
      for (const {e, m} of endings) {
        const v = floorTo(x, m, e)
        if (v > 0 && (best === undefined || v > best)) best = v
      }
      return best
    },
    has: (v) => v > 0 && endings.some(({e, m}) => mod(v, m) === e),
  }
}

function multiplePoints(n: number): PointSet {
  return {
    ceil: (x) => ceilTo(Math.max(x, 1), n),
    floor(x) {
      const v = floorTo(x, n)
      return v > 0 ? v : undefined
    },
    has: (v) => v > 0 && v % n === 0,
  }
}

/** Step between neighbouring points with n significant figures around x (x >= 1). */
function sigfigStep(x: number, n: number): number {
  const digits = String(Math.trunc(x)).length
  return digits <= n ? 1 : 10 ** (digits - n)
}

function sigfigPoints(n: number): PointSet {
  return {
    ceil(x) {
      if (x <= 1) return 1
      return ceilTo(x, sigfigStep(x, n))
    },
    floor(x) {
      if (x < 1) return undefined
      // The step of x's own digit count: floor never drops below 10^(digits-1), which is a point.
      return floorTo(x, sigfigStep(x, n))
    },
    has: (v) => v > 0 && v % sigfigStep(v, n) === 0,
  }
}

const keepPoints: PointSet = {
  ceil: (x) => Math.max(1, x),
  floor: (x) => (x >= 1 ? x : undefined),
  has: (v) => v > 0,
}

function pointsOf(action: RoundingAction): PointSet {
  switch (action.kind) {
    case 'end': {
      return endingPoints(action.endings)
    }

    case 'keep': {
      return keepPoints
    }

    case 'multiple': {
      return multiplePoints(action.n)
    }

    case 'sigfig': {
      return sigfigPoints(action.n)
    }
  }
}

function describeAction(action: RoundingAction, direction: Direction): string {
  switch (action.kind) {
    case 'end': {
      return `end ${action.endings.map((e) => e.text).join(',')} ${direction}`
    }

    case 'keep': {
      return 'keep'
    }

    case 'multiple': {
      return `multiple ${action.text} ${direction}`
    }

    case 'sigfig': {
      return `sigfig ${action.n} ${direction}`
    }
  }
}

class Parser {
  private i = 0
  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
    private readonly currency: string,
    private readonly digits: number,
  ) {}

  private get end(): number {
    return this.text.length + 1
  }

  private peek(): Token | undefined {
    return this.tokens[this.i]
  }

  private fail(token: Token | undefined, expected: string): never {
    if (!token) throw ruleError(this.text, this.end, `rule ends early: expected ${expected}`)
    throw ruleError(this.text, token.pos, `unexpected ${JSON.stringify(token.text)}: expected ${expected}`)
  }

  private take(kind: Token['kind'], expected: string, text?: string): Token {
    const t = this.peek()
    if (!t || t.kind !== kind || (text !== undefined && t.text !== text)) this.fail(t, expected)
    this.i++
    return t
  }

  private amount(expected: string, what: string): {minor: number; token: Token} {
    const token = this.take('num', expected)
    return {minor: decimalToMinor(token.text, this.digits, this.currency, this.text, token.pos, what), token}
  }

  parse(): RoundingRange[] {
    const ranges: RoundingRange[] = []
    let previousHi = 0
    let closed = false
    while (this.peek()) {
      if (this.peek()!.text === ';') {
        this.i++
        continue
      }
      if (closed) {
        const t = this.peek()!
        throw ruleError(this.text, t.pos, `a range follows the open-ended last range; the range ending in "+" or "*" must come last`)
      }
      const start = this.peek()!
      let lo: number
      let hi: number
      // Bounds: "A-B", "A+", "<B" (from the previous bound) or "*" (the rest).
      if (start.text === '*') {
        this.i++
        lo = previousHi
        hi = Infinity
      } else if (start.text === '<') {
        this.i++
        lo = previousHi
        hi = this.amount('an upper bound after "<", e.g. <10', 'bound').minor
      } else {
        const a = this.amount('a range such as 0-10, 10+, <10 or *', 'bound')
        lo = a.minor
        if (lo !== previousHi) {
          throw ruleError(
            this.text,
            a.token.pos,
            ranges.length === 0
              ? `the first range must start at 0, not ${a.token.text}`
              : `range starts at ${a.token.text} but the previous range ends at ${minorToText(previousHi, this.digits)}: ranges must be contiguous`,
          )
        }
        const sep = this.peek()
        if (sep?.text === '+') {
          this.i++
          hi = Infinity
        } else if (sep?.text === '-') {
          this.i++
          hi = this.amount('an upper bound after "-", e.g. 0-10', 'bound').minor
        } else {
          this.fail(sep, '"-" (a range A-B) or "+" (A and above)')
        }
      }
      if (hi <= lo) throw ruleError(this.text, start.pos, `empty range: the upper bound ${minorToText(hi, this.digits)} must be above ${minorToText(lo, this.digits)}`)
      this.take('punct', '":" after the range', ':')
      const {action, direction} = this.action()
      const label = hi === Infinity ? `${minorToText(lo, this.digits)}+` : `${minorToText(lo, this.digits)}-${minorToText(hi, this.digits)}`
      const points = pointsOf(action)
      const actionText = describeAction(action, direction)
      if (hi !== Infinity && points.ceil(Math.max(lo, 1)) >= hi) {
        throw ruleError(this.text, start.pos, `range ${label} holds no price for "${actionText}": widen the range or change the action`)
      }
      ranges.push({action, actionText, direction, hi, label, lo, points})
      previousHi = hi
      closed = hi === Infinity
      const next = this.peek()
      if (next && next.text !== ';') this.fail(next, '";" between ranges')
    }
    if (ranges.length === 0) throw ruleError(this.text, 1, 'the rule is empty: write at least one range, e.g. "0+: end .99 nearest"')
    if (!closed) {
      throw ruleError(this.text, this.end, `the last range must be open-ended: write "${minorToText(previousHi, this.digits)}+: ..." or "*: ..." to cover larger amounts`)
    }
    return ranges
  }

  private direction(): Direction {
    const t = this.peek()
    if (t && t.kind === 'word' && (DIRECTIONS as readonly string[]).includes(t.text)) {
      this.i++
      return t.text as Direction
    }
    return this.fail(t, 'a direction: up, down or nearest')
  }

  private action(): {action: RoundingAction; direction: Direction} {
    const t = this.take('word', 'an action: end, multiple, sigfig or keep')
    switch (t.text) {
      case 'end':
      case 'ending': {
        const endings: {e: number; m: number; text: string}[] = []
        for (;;) {
          const n = this.take('num', 'an ending such as .99, 9.99 or 9')
          const e = decimalToMinor(n.text, this.digits, this.currency, this.text, n.pos, 'ending')
          // The written digits are matched exactly: ".99" fixes the fraction, "9.99" also the last whole digit.
          const intDigits = n.text.split('.')[0].length
          const m = 10 ** (intDigits + this.digits)
          if (!Number.isSafeInteger(m)) throw ruleError(this.text, n.pos, `ending ${n.text} is too long`)
          endings.push({e, m, text: n.text})
          if (this.peek()?.text !== ',') break
          this.i++
        }
        return {action: {endings, kind: 'end'}, direction: this.direction()}
      }

      case 'keep': {
        return {action: {kind: 'keep'}, direction: 'nearest'}
      }

      case 'multiple': {
        const n = this.take('num', 'the step of "multiple", e.g. multiple 10 or multiple 0.05')
        const step = decimalToMinor(n.text, this.digits, this.currency, this.text, n.pos, 'multiple')
        if (step <= 0) throw ruleError(this.text, n.pos, `multiple ${n.text} must be above 0`)
        return {action: {kind: 'multiple', n: step, text: n.text}, direction: this.direction()}
      }

      case 'sigfig': {
        const n = this.take('num', 'the number of significant figures, e.g. sigfig 2')
        if (!/^\d+$/.test(n.text) || Number(n.text) < 1 || Number(n.text) > 15) {
          throw ruleError(this.text, n.pos, `sigfig ${n.text}: expected a whole number from 1 to 15`)
        }
        return {action: {kind: 'sigfig', n: Number(n.text)}, direction: this.direction()}
      }

      default: {
        return this.fail(t, 'an action: end, multiple, sigfig or keep')
      }
    }
  }
}

const cache = new Map<string, CompiledRule>()
const CACHE_LIMIT = 1000

/**
 * Parse and validate a rule for a currency (amounts in the rule are in its units and may
 * not have more decimals than it). Cached: pricing many requests parses each rule once.
 * Throws InvalidInputError naming the position and the offending token.
 */
export function parseRule(text: string, currency: string): CompiledRule {
  const key = currency + '\u0000' + text
  const hit = cache.get(key)
  if (hit) return hit
  if (!isCurrency(currency)) throw new InvalidInputError(`unknown currency ${JSON.stringify(currency)} (expected an ISO 4217 code such as USD)`)
  const digits = minorDigits(currency)
  const ranges = new Parser(text, tokenize(text), currency, digits).parse()
  const rule: CompiledRule = {currency, digits, ranges, text: ranges.map((r) => `${r.label}: ${r.actionText}`).join('; ')}
  if (cache.size >= CACHE_LIMIT) cache.clear()
  cache.set(key, rule)
  return rule
}

// ---------------------------------------------------------------------------------------
// Applying

/** The range an amount falls in (ranges are contiguous from 0 and the last is open). */
export function rangeOf(rule: CompiledRule, amountMinor: number): RoundingRange {
  const {ranges} = rule
  for (const r of ranges) if (amountMinor < r.hi) return r
  return ranges.at(-1)!
}

/** Smallest price point of the whole rule >= x. */
function nextPoint(rule: CompiledRule, x: number): number {
  for (const r of rule.ranges) {
    if (r.hi <= x) continue
    const y = r.points.ceil(Math.max(x, r.lo))
    if (y < r.hi) return y
  }
  // Unreachable: the last range is open and every action has points without bound.
  throw new Error(`rounding rule ${rule.text} has no price point above ${x}`)
}

/** Largest positive price point of the whole rule <= x, or undefined. */
function previousPoint(rule: CompiledRule, x: number): number | undefined {
  for (let i = rule.ranges.length - 1; i >= 0; i--) {
    const r = rule.ranges[i]
    if (r.lo > x) continue
    const y = r.points.floor(Math.min(x, r.hi - 1))
    if (y !== undefined && y >= r.lo && y >= 1) return y
  }
  return undefined
}

/** Whether an amount is a price point of the rule (rounding leaves it unchanged). */
export function isPricePoint(rule: CompiledRule, amountMinor: number): boolean {
  return amountMinor > 0 && rangeOf(rule, amountMinor).points.has(amountMinor)
}

function checkAmount(amountMinor: number): void {
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 0) {
    throw new InvalidInputError(`cannot round ${amountMinor}: expected a non-negative whole number of minor units`)
  }
}

/** The compiled rule for a currency from a compiled rule or rule text. */
function compiled(rule: CompiledRule | string, currency: string): CompiledRule {
  if (typeof rule === 'string') return parseRule(rule, currency)
  return rule.currency === currency ? rule : parseRule(rule.text, currency)
}

/**
 * Round an amount (integer minor units) with a rule and say which range and action
 * applied. 0 stays 0 (a free product stays free); a positive amount never becomes 0:
 * "down" with no positive price point below goes up instead. Ties of "nearest" go up.
 */
export function roundWithDetail(rule: CompiledRule | string, amountMinor: number, currency: string): RoundingResult {
  checkAmount(amountMinor)
  const r = compiled(rule, currency)
  const range = rangeOf(r, amountMinor)
  if (amountMinor === 0) return {action: range.actionText, range: range.label, rounded: 0}
  let rounded: number
  switch (range.direction) {
    case 'down': {
      rounded = previousPoint(r, amountMinor) ?? nextPoint(r, amountMinor)
      break
    }

    case 'nearest': {
      const above = nextPoint(r, amountMinor)
      const below = previousPoint(r, amountMinor)
      rounded = below !== undefined && amountMinor - below < above - amountMinor ? below : above
      break
    }

    case 'up': {
      rounded = nextPoint(r, amountMinor)
      break
    }
  }
  if (!Number.isSafeInteger(rounded)) throw new InvalidInputError(`cannot round ${amountMinor}: the result is too large`)
  return {action: range.actionText, range: range.label, rounded}
}

/** Round an amount in integer minor units with a rule (compiled, or text parsed once and cached). */
export function applyRounding(rule: CompiledRule | string, amountMinor: number, currency: string): number {
  return roundWithDetail(rule, amountMinor, currency).rounded
}

// ---------------------------------------------------------------------------------------
// Store: table rounding_rules (currency -> canonical rule text)

/** Where a currency's rule came from: stored with `rounding set`, or the built-in default. */
export type RuleSource = 'default' | 'store'

/** A currency's rule, its canonical text and where it came from. */
export type RuleChoice = {rule: CompiledRule; source: RuleSource; text: string}

export type RuleListEntry = {currency: string; digits: number; rule: string; source: RuleSource}

function choose(currency: string, stored: string | undefined): RuleChoice {
  const rule = parseRule(stored ?? defaultRuleText(currency), currency)
  return {rule, source: stored === undefined ? 'default' : 'store', text: rule.text}
}

/**
 * The rounding rule of a currency: the stored one, else the built-in default for its
 * number of minor digits; `source` says which (for `price explain`).
 */
export async function ruleFor(store: StorePort, currency: string): Promise<RuleChoice> {
  return choose(currency, await store.config.roundingRule(currency))
}

/**
 * Every stored rule read once, for pricing many requests: returns a lookup that needs
 * no further queries (rules are parsed once per currency and cached).
 */
export async function ruleResolver(store: StorePort): Promise<(currency: string) => RuleChoice> {
  const stored = new Map((await store.config.roundingRules()).map((r) => [r.currency, r.rule]))
  return (currency) => choose(currency, stored.get(currency))
}

/** Stored rules by currency, then the built-in default of each minor-digit count ("*"). */
export async function listRules(store: StorePort): Promise<RuleListEntry[]> {
  const rows = await store.config.roundingRules()
  return [
    ...rows.map((r) => ({currency: r.currency, digits: minorDigits(r.currency), rule: r.rule, source: 'store' as const})),
    ...Object.entries(DEFAULT_RULES).map(([digits, rule]) => ({currency: '*', digits: Number(digits), rule, source: 'default' as const})),
  ]
}

/** Store a rule (validated here too, so no caller can store a rule that does not parse). */
export async function setRule(store: StorePort, currency: string, text: string): Promise<CompiledRule> {
  const rule = parseRule(text, currency)
  await store.config.saveRoundingRule(currency, rule.text, nowIso())
  return rule
}

/** Drop a stored rule so the currency uses the built-in default again; false when none was stored. */
export async function resetRule(store: StorePort, currency: string): Promise<boolean> {
  return await store.config.deleteRoundingRule(currency)
}

export type RuleTrial = {
  currency: string
  results: {action: string; amount: number; range: string; rounded: number}[]
  rule: string
  source: 'flag' | RuleSource
}

/**
 * `rounding test`: round amounts (decimal text in currency units) with the currency's
 * rule, or with `ruleText` when given (tried, not saved).
 */
export async function tryRule(store: StorePort, currency: string, amounts: string[], ruleText?: string): Promise<RuleTrial> {
  const choice: {rule: CompiledRule; source: RuleTrial['source']} = ruleText === undefined ? await ruleFor(store, currency) : {rule: parseRule(ruleText, currency), source: 'flag'}
  const minors = amounts.map((a) => toMinor(Number(a), currency, "amount"))
  return {
    currency,
    results: minors.map((minor) => {
      const r = roundWithDetail(choice.rule, minor, currency)
      return {action: r.action, amount: fromMinor(minor, currency), range: r.range, rounded: fromMinor(r.rounded, currency)}
    }),
    rule: choice.rule.text,
    source: choice.source,
  }
}
