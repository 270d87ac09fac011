import {momentError, readSeconds} from './dates.js'
import {InvalidInputError} from './errors.js'

/**
 * The current time. `PRICECTL_NOW` (UNIX seconds or an ISO date or date-time, UTC unless
 * it carries an offset) pins it, so tests and reproducible runs can price "as of" a moment
 * (coupon windows, event defaults). A value that is no moment is an error, not ignored.
 */
export function nowSeconds(): number {
  if (frozen !== undefined) return frozen
  const pinned = process.env.PRICECTL_NOW
  if (pinned) {
    if (pinned !== pinnedText) {
      const t = readSeconds(pinned)
      if (typeof t === 'string') throw new InvalidInputError(`${momentError('PRICECTL_NOW', pinned, t, null)} (or unset it)`)
      pinnedText = pinned
      pinnedSeconds = t
    }
    return pinnedSeconds
  }
  return Math.floor(Date.now() / 1000)
}

let pinnedText: string | undefined
let pinnedSeconds = 0

let frozen: number | undefined

/**
 * Hold "now" at the current second until thawClock(): a batch prices the requests of one
 * transaction (a few thousand, well under a second) as of its start, as SQL does within a
 * transaction, instead of reading the clock (and PRICECTL_NOW) several times per request.
 */
export function freezeClock(): void {
  frozen = undefined
  frozen = nowSeconds()
}

export function thawClock(): void {
  frozen = undefined
}

let lastSecond = -1
let lastIso = ''

export function nowIso(): string {
  const s = nowSeconds()
  // Batches ask thousands of times a second; the text only changes once a second.
  if (s !== lastSecond) {
    lastSecond = s
    lastIso = new Date(s * 1000).toISOString()
  }
  return lastIso
}

/** YYYY-MM-DD of a UNIX timestamp (UTC). */
export function isoDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10)
}
