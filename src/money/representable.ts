import {displayDigits, minorDigits, minorToDecimalString} from '../currency.js'
import {InvalidInputError} from '../errors.js'
import type {GatewayId, GatewayRule} from './gateway-tables.js'

/**
 * Price points every party can show and charge exactly (docs/money.md, "The displayed
 * price is the charged price"). Amounts here are integer minor units of the storage
 * exponent; a gateway's amount is the same price in its own exponent.
 */

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b]
  return a
}

function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b
}

/** Step of price points the display shows without rounding: HUF (storage 2, display 0) moves in whole forints. */
export function displayStep(currency: string): number {
  const extra = minorDigits(currency) - displayDigits(currency)
  return extra > 0 ? 10 ** extra : 1
}

/** Step of price points (storage minor units) a gateway can charge exactly. */
export function gatewayStep(currency: string, rule: GatewayRule): number {
  const shift = rule.exponent - minorDigits(currency)
  if (shift >= 0) {
    const scale = 10 ** shift
    return rule.divisible_by / gcd(rule.divisible_by, scale)
  }
  return rule.divisible_by * 10 ** -shift
}

/** A price in storage minor units as the gateway's integer amount; undefined when it is not exact. */
export function toGatewayUnits(minor: number, currency: string, rule: GatewayRule): number | undefined {
  const shift = rule.exponent - minorDigits(currency)
  if (shift >= 0) return minor * 10 ** shift
  const scale = 10 ** -shift
  return minor % scale === 0 ? minor / scale : undefined
}

/** A gateway's integer amount back to storage minor units; undefined when storage cannot hold it exactly. */
export function fromGatewayUnits(amount: number, currency: string, rule: Pick<GatewayRule, 'exponent'>): number | undefined {
  const shift = rule.exponent - minorDigits(currency)
  if (shift <= 0) return amount * 10 ** -shift
  const scale = 10 ** shift
  return amount % scale === 0 ? amount / scale : undefined
}

/** The gateway's amount as the decimal number a decimal-format API takes (exact: via its decimal text). */
export function gatewayDecimal(units: number, rule: Pick<GatewayRule, 'exponent'>): number {
  return Number(minorToDecimalString(units, rule.exponent))
}

export type Constraint = {gateway: GatewayId; rule: GatewayRule}

/** Why a price point had to move, for `price explain` and error messages. */
export type Move = {from: number; reason: string; to: number}

function roundToStep(minor: number, step: number, direction: 'down' | 'nearest' | 'up'): number {
  const rem = minor % step
  if (rem === 0) return minor
  const down = minor - rem
  if (direction === 'down') return down
  if (direction === 'up') return down + step
  return rem * 2 >= step ? down + step : down
}

/** The step all parties can represent: the display's (unless `display` is false) and every constraining gateway's. */
export function priceStep(currency: string, constraints: readonly Constraint[], display = true): number {
  let step = display ? displayStep(currency) : 1
  for (const c of constraints) step = lcm(step, gatewayStep(currency, c.rule))
  return step
}

/**
 * The nearest price point the display and every gateway in `constraints` can represent
 * exactly (ties move up), kept inside each gateway's minimum and maximum; `direction`
 * forces the way to move (a price clamped to a bound must stay inside it). `display: false`
 * leaves the display's step out (a gateway object moves a locked price only as far as its
 * gateway needs). Returns the price and what moved it.
 */
export function representablePrice(
  minor: number,
  currency: string,
  constraints: readonly Constraint[],
  direction: 'down' | 'nearest' | 'up' = 'nearest',
  withDisplay = true,
): {minor: number; moves: Move[]} {
  const moves: Move[] = []
  const step = priceStep(currency, constraints, withDisplay)
  let price = roundToStep(minor, step, direction)
  if (price !== minor) {
    const who = constraints.filter((c) => minor % gatewayStep(currency, c.rule) !== 0).map((c) => c.gateway)
    const display = withDisplay && minor % displayStep(currency) !== 0
    const reasons = [...(display ? [`the display shows ${currency} in steps of ${minorToDecimalString(displayStep(currency), minorDigits(currency))}`] : []), ...who.map((g) => `${g} cannot charge ${minorToDecimalString(minor, minorDigits(currency))} ${currency} exactly`)]
    moves.push({from: minor, reason: reasons.join('; ') || `price points of ${currency} move in steps of ${step} minor units`, to: price})
  }
  for (const {gateway, rule} of constraints) {
    const shift = rule.exponent - minorDigits(currency)
    const toStorage = (units: number, dir: 'down' | 'up') => (shift >= 0 ? (dir === 'up' ? Math.ceil(units / 10 ** shift) : Math.floor(units / 10 ** shift)) : units * 10 ** -shift)
    if (rule.min_amount !== null && price > 0) {
      const min = roundToStep(toStorage(rule.min_amount, 'up'), step, 'up')
      if (price < min) {
        moves.push({from: price, reason: `below ${gateway}'s minimum charge of ${minorToDecimalString(rule.min_amount, rule.exponent)} ${currency}`, to: min})
        price = min
      }
    }
    if (rule.max_amount !== null) {
      const max = roundToStep(toStorage(rule.max_amount, 'down'), step, 'down')
      if (price > max) {
        throw new InvalidInputError(
          `${minorToDecimalString(price, minorDigits(currency))} ${currency} is above ${gateway}'s maximum charge of ${minorToDecimalString(rule.max_amount, rule.exponent)} ${currency}: lower the price or see "pricectl gateways show ${gateway} ${currency}"`,
        )
      }
    }
  }
  return {minor: price, moves}
}

/** The two nearest price points around an amount that `constraints` can represent (for error messages). */
export function nearestPoints(minor: number, currency: string, constraints: readonly Constraint[]): [number, number] {
  const step = priceStep(currency, constraints)
  return [roundToStep(minor, step, 'down'), roundToStep(minor, step, 'up')]
}
