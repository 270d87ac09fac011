import {convertMinor} from '../currency.js'

/**
 * Price bounds of experimental prices (products.min_px / max_px, USD cents), checked on
 * the same USD value the quote prints as price_usd (the local price at the latest rate,
 * rounded to the cent). Pure.
 */

/** A local price in USD cents, as price_usd shows it. */
export function usdOf(minor: number, currency: string, rate: number): number {
  return currency === 'USD' ? minor : convertMinor(minor, currency, rate, 'USD', 1)
}

export function withinBounds(minor: number, currency: string, rate: number, min: null | number, max: null | number): boolean {
  const u = usdOf(minor, currency, rate)
  return (min === null || u >= min) && (max === null || u <= max)
}

/**
 * The price itself when inside [min, max]; else the nearest local amount whose USD value
 * is inside (the largest under max, or the smallest over min). Undefined when no amount
 * of the currency fits (bounds narrower than one minor unit of it). usdOf is monotonic,
 * so a binary search finds the edge exactly.
 */
export function clampToBounds(minor: number, currency: string, rate: number, min: null | number, max: null | number): undefined | {clamped: 'max' | 'min' | null; minor: number} {
  if (min !== null && max !== null && min > max) return undefined
  const u = usdOf(minor, currency, rate)
  if ((min === null || u >= min) && (max === null || u <= max)) return {clamped: null, minor}
  const f = (x: number) => usdOf(x, currency, rate)
  if (max !== null && u > max) {
    // Largest x < minor with f(x) <= max; f(0) = 0 <= max.
    let lo = 0
    let hi = minor
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (f(mid) <= max) lo = mid
      else hi = mid
    }
    if (f(lo) > max || (min !== null && f(lo) < min)) return undefined
    return {clamped: 'max', minor: lo}
  }
  // Below min: smallest x > minor with f(x) >= min.
  let lo = minor
  let hi = Math.max(1, minor * 2)
  while (f(hi) < min!) {
    lo = hi
    hi *= 2
    if (!Number.isSafeInteger(hi)) return undefined
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (f(mid) >= min!) hi = mid
    else lo = mid
  }
  if (max !== null && f(hi) > max) return undefined
  return {clamped: 'min', minor: hi}
}
