import {createRequire} from 'node:module'

import {InvalidInputError} from './errors.js'

/**
 * The one reader of dates and times (readMoment): every flag, header, import cell and
 * variable that names a moment, so all accept the same forms and refuse impossible values
 * instead of rolling them over as Date.parse does (docs/revenue.md, "Dates and time zones").
 * Calendar arithmetic is a days-in-month table, cheap enough for a million import rows; zone
 * rules come from luxon, loaded only for a zone other than UTC (test/engine/dates.test.ts).
 */

export type Day = {day: number; month: number; year: number}

/**
 * A moment: UNIX seconds; for a date without a time also `dayEnd`, the first second of
 * the next day in the same zone, so "until 2026-01-31" can cover the whole day.
 */
export type Moment = {dayEnd?: number; seconds: number}

/** Why a text is not a moment (the caller adds the value and the accepted forms). */
export type MomentProblem = {problem: string}

export type MomentOptions = {
  /** 13-digit UNIX milliseconds are accepted too (gateway exports carry them). */
  millis?: boolean
  /** IANA zone of date-times without an offset (from resolveZone); undefined: UTC. */
  zone?: string
}

/** The largest UNIX second accepted: 9999999999 (2286-11-20), the last 10-digit one. */
export const MAX_SECONDS = 9_999_999_999

/** The accepted forms, for messages; `zoneFlag` names the flag that sets the zone of date-times without an offset (null: none, they are UTC). */
export function momentForms(zoneFlag: null | string = '--tz'): string {
  return `UNIX seconds (such as 1767225600), a date YYYY-MM-DD, or a date-time YYYY-MM-DDTHH:MM[:SS] with Z or an offset such as +02:00 (without one it is ${zoneFlag ? `read in ${zoneFlag}, default UTC` : 'UTC'})`
}

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
}

export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : DAYS_IN_MONTH[m - 1]
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil); no Date.UTC, which maps years 0-99 to 1900-1999. */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** The calendar day of a day count (civil_from_days), for "the day after" a date. */
export function civilFromDays(z: number): Day {
  const zz = z + 719_468
  const era = Math.floor(zz / 146_097)
  const doe = zz - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return {day, month, year: yoe + era * 400 + (month <= 2 ? 1 : 0)}
}

/** Why y-m-d is not a calendar day, or undefined when it is one. */
function dayProblem(y: number, m: number, d: number): string | undefined {
  if (m < 1 || m > 12) return `there is no month ${m}`
  if (d < 1 || d > daysInMonth(y, m)) return `${MONTH_NAMES[m - 1]} ${y} has ${daysInMonth(y, m)} days`
  return undefined
}

/** True for a real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isIsoDay(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return false
  const y = digits(s, 0, 4)
  const m = digits(s, 5, 2)
  const d = digits(s, 8, 2)
  return y >= 0 && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m)
}

/** `n` ASCII digits at i as a number, or -1 when they are not all digits. */
function digits(s: string, i: number, n: number): number {
  let v = 0
  for (let k = i; k < i + n; k++) {
    const c = s.charCodeAt(k) - 48
    if (c < 0 || c > 9) return -1
    v = v * 10 + c
  }
  return v
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?)? ?(Z|UTC|[+-]\d{2}(?::?\d{2})?)?$/i
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2}) ?(Z|UTC|[+-]\d{2}(?::?\d{2})?)?$/i
const DIGITS = /^\d+$/
const UNIX = /^\d{10}$/
const MILLIS = /^\d{13}$/

/**
 * UNIX seconds of a date or date-time text, or why it is none. See the top of this file
 * for the forms; `options.zone` is a zone resolveZone() returned.
 */
export function readMoment(text: string, options: MomentOptions = {}): Moment | MomentProblem {
  const r = readSeconds(text, options)
  if (typeof r === 'string') return {problem: r}
  // A date alone: the day ends at the next midnight in the same zone or offset.
  const m = DATE_ONLY.exec(text.trim())
  if (!m) return {seconds: r}
  const zoned = m[4] === undefined && options.zone !== undefined
  return {dayEnd: zoned ? startOfNextDay(daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3])) * 86_400, options.zone!) : r + 86_400, seconds: r}
}

/**
 * readMoment() without the day's end: UNIX seconds, or why the text is no moment. The
 * import reads one or more dates per row through this, so the common export forms take a
 * hand-checked road (`YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SSZ`) and return a plain number.
 */
export function readSeconds(text: string, options: MomentOptions = {}): number | string {
  const n = text.length
  if (n === 19 || (n === 20 && text.charCodeAt(19) === 90 && options.zone === undefined)) {
    const wall = fastWall(text)
    if (wall >= 0) {
      if (n === 20 || options.zone === undefined) return wall
      const t = zonedToUtc(wall, options.zone)
      if (typeof t === 'number' && t >= 0 && t <= MAX_SECONDS) return t
    }
  }
  const s = text.trim()
  if (DIGITS.test(s)) {
    if (UNIX.test(s)) return Number(s)
    if (options.millis && MILLIS.test(s)) return Math.floor(Number(s) / 1000)
    return `UNIX seconds have 10 digits, from 2001-09-09 to 2286-11-20; this has ${s.length}${s.length === 13 ? ' (milliseconds? divide by 1000)' : s.length === 8 ? ' (for a date write YYYY-MM-DD)' : ''}`
  }
  const m = ISO.exec(s)
  if (!m) return 'not a date or time in an accepted form'
  const y = Number(m[1])
  const mo = Number(m[2])
  const d = Number(m[3])
  const bad = dayProblem(y, mo, d)
  if (bad) return bad
  const h = m[4] === undefined ? 0 : Number(m[4])
  const mi = m[5] === undefined ? 0 : Number(m[5])
  const sec = m[6] === undefined ? 0 : Number(m[6])
  if (h > 23) return `there is no hour ${h} (hours run 00-23)`
  if (mi > 59) return `there is no minute ${mi} (minutes run 00-59)`
  if (sec > 59) return `there is no second ${sec} (seconds run 00-59)`
  const wall = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec
  let t: number
  const designator = m[7]?.toUpperCase()
  if (designator === undefined && options.zone !== undefined) {
    const z = zonedToUtc(wall, options.zone)
    // A date whose midnight the clocks skip (some zones change at 00:00) starts at its first minute that exists.
    if (typeof z === 'string' && m[4] !== undefined) return z
    t = typeof z === 'number' ? z : firstExistingAfter(wall, options.zone)
  } else {
    let offset = 0
    if (designator !== undefined && designator !== 'Z' && designator !== 'UTC') {
      const oh = Number(designator.slice(1, 3))
      const om = designator.length > 3 ? Number(designator.slice(-2)) : 0
      if (oh > 18 || om > 59 || (oh === 18 && om > 0)) return `${designator} is not a UTC offset (offsets run from -18:00 to +18:00)`
      offset = (designator[0] === '-' ? -1 : 1) * (oh * 3600 + om * 60)
    }
    t = wall - offset
  }
  if (t < 0) return 'before 1970-01-01 (UNIX seconds start there)'
  if (t > MAX_SECONDS) return 'after 2286-11-20 (the last 10-digit UNIX second)'
  return t
}

/**
 * Wall-clock seconds of "YYYY-MM-DD[T ]HH:MM:SS" (a trailing 20th character is the
 * caller's), or -1 when any part is not as expected: the general road then decides.
 */
function fastWall(s: string): number {
  const sep = s.charCodeAt(10)
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || (sep !== 32 && sep !== 84) || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return -1
  const y = digits(s, 0, 4)
  const mo = digits(s, 5, 2)
  const d = digits(s, 8, 2)
  const h = digits(s, 11, 2)
  const mi = digits(s, 14, 2)
  const sec = digits(s, 17, 2)
  if (y < 1970 || y > 2286 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) return -1
  const t = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec
  return t <= MAX_SECONDS ? t : -1
}

/** The first second of the day after the one starting at wall-clock `midnight`, in the zone (a day there may last 23 or 25 hours). */
function startOfNextDay(midnight: number, zone: string): number {
  const wall = midnight + 86_400
  const t = zonedToUtc(wall, zone)
  // A midnight the clocks skip (some zones move them at 00:00): the day starts at the first minute that exists.
  return typeof t === 'number' ? t : firstExistingAfter(wall, zone)
}

/**
 * Moment read, or an InvalidInputError naming `what`, the value and the accepted forms.
 * `zoneFlag`: the flag that sets the zone where `what` is read (default --tz; null: none, UTC).
 */
export function requireMoment(text: string, what: string, options: MomentOptions & {zoneFlag?: null | string} = {}): Moment {
  const r = readMoment(text, options)
  if ('problem' in r) throw new InvalidInputError(momentError(what, text, r.problem, options.zoneFlag))
  return r
}

/** `what: "2026-02-30" is not a valid date or time (February 2026 has 28 days); expected ...`. */
export function momentError(what: string, text: string, problem: string, zoneFlag: null | string = '--tz'): string {
  return `${what}: ${JSON.stringify(text)} is not a valid date or time (${problem}); expected ${momentForms(zoneFlag)}`
}

// ---------------------------------------------------------------- time zones (luxon)

type Luxon = typeof import('luxon')
let luxon: Luxon | undefined

/** luxon, loaded on first use: commands that never see a zone do not pay for it. */
function lib(): Luxon {
  luxon ??= createRequire(import.meta.url)('luxon') as Luxon
  return luxon
}

const UTC_NAMES = new Set(['utc', 'etc/utc', 'etc/uct', 'uct', 'gmt', 'etc/gmt', 'z', 'zulu', 'etc/zulu', 'universal', 'etc/universal'])

/**
 * `--tz` as an IANA zone name (undefined for UTC and its aliases, which take the fast
 * path), or an InvalidInputError naming the value.
 */
export function resolveZone(name: string | undefined, what = '--tz'): string | undefined {
  if (name === undefined) return undefined
  const t = name.trim()
  if (UTC_NAMES.has(t.toLowerCase())) return undefined
  // Only names: a fixed offset belongs on the value itself (2026-01-31T10:00:00+02:00).
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(t) || !lib().IANAZone.isValidZone(t)) {
    throw new InvalidInputError(`${what}: unknown time zone ${JSON.stringify(name)} (expected an IANA name such as Europe/Berlin or America/New_York, or UTC)`)
  }
  return t
}

/** UTC offset (seconds) of the zone at a UNIX second. */
function offsetAt(zone: string, seconds: number): number {
  return lib().IANAZone.create(zone).offset(seconds * 1000) * 60
}

/** Per zone, wall-clock hours (seconds / 3600) -> their one offset, or null for an hour with a transition. */
const hourOffsets = new Map<string, Map<number, null | number>>()

/**
 * UTC seconds of a wall-clock time (given as seconds of a UTC clock) in the zone. A time
 * the clocks skip (spring forward) is refused; a time that happens twice (fall back) is
 * the earlier of the two, as RFC 5545 and Temporal's "compatible" choose.
 */
export function zonedToUtc(wall: number, zone: string): number | string {
  const hour = Math.floor(wall / 3600)
  let hours = hourOffsets.get(zone)
  if (hours === undefined) hourOffsets.set(zone, (hours = new Map()))
  let cached = hours.get(hour)
  if (cached === undefined) {
    cached = uniformHour(hour * 3600, zone)
    if (hours.size > 100_000) hours.clear()
    hours.set(hour, cached)
  }
  if (cached !== null) return wall - cached
  // An hour with a transition in it: resolve this one time exactly.
  const moments = resolutions(wall, zone)
  if (moments.length === 0) return `${isoWall(wall)} does not exist in ${zone} (the clocks skip it); give an offset`
  return Math.min(...moments)
}

/** Every UNIX second whose wall clock in the zone reads `wall`: none (skipped), one, or two (repeated). */
function resolutions(wall: number, zone: string): number[] {
  // Offsets a day either side bracket any transition near this time.
  const offsets = new Set([offsetAt(zone, wall - 86_400), offsetAt(zone, wall), offsetAt(zone, wall + 86_400)])
  return [...offsets].filter((o) => offsetAt(zone, wall - o) === o).map((o) => wall - o)
}

/** The offset of a wall-clock hour whose first and last second each happen once, with one offset; else null. */
function uniformHour(hourStart: number, zone: string): null | number {
  const a = resolutions(hourStart, zone)
  const b = resolutions(hourStart + 3599, zone)
  if (a.length !== 1 || b.length !== 1) return null
  const o = hourStart - a[0]
  return hourStart + 3599 - b[0] === o ? o : null
}

function firstExistingAfter(wall: number, zone: string): number {
  for (let w = wall; w < wall + 86_400; w += 60) {
    const t = zonedToUtc(w, zone)
    if (typeof t === 'number') return t
  }
  return wall - offsetAt(zone, wall)
}

function isoWall(wall: number): string {
  const day = civilFromDays(Math.floor(wall / 86_400))
  const rest = wall - Math.floor(wall / 86_400) * 86_400
  const p = (n: number) => String(n).padStart(2, '0')
  return `${day.year}-${p(day.month)}-${p(day.day)}T${p(Math.floor(rest / 3600))}:${p(Math.floor((rest % 3600) / 60))}:${p(rest % 60)}`
}
