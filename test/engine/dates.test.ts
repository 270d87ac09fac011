import fc from 'fast-check'
import {DateTime} from 'luxon'
import {describe, expect, it} from 'vitest'

import {civilFromDays, daysFromCivil, daysInMonth, isIsoDay, readMoment, readSeconds, requireMoment, resolveZone} from '../../src/dates.js'
import {InvalidInputError} from '../../src/errors.js'

/**
 * The one date reader (src/dates.ts): boundary examples, and properties checked against
 * luxon (the library the time-zone rules come from) so the hand-checked fast roads agree
 * with it on every valid day and refuse what it refuses.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 1313)
const p2 = (n: number) => String(n).padStart(2, '0')
const ymd = (y: number, m: number, d: number) => `${y}-${p2(m)}-${p2(d)}`
const utc = (y: number, m: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, m - 1, d, h, mi, s) / 1000

describe('readSeconds: boundaries', () => {
  it('reads real days, refuses impossible ones (Date.parse rolled 2026-02-30 over to March 2)', () => {
    expect(readSeconds('2026-02-28')).toBe(utc(2026, 2, 28))
    expect(readSeconds('2024-02-29')).toBe(utc(2024, 2, 29))
    expect(readSeconds('2000-02-29')).toBe(utc(2000, 2, 29))
    expect(readSeconds('2026-12-31')).toBe(utc(2026, 12, 31))
    expect(readSeconds('2026-02-29')).toBe('February 2026 has 28 days')
    expect(readSeconds('2026-02-30')).toBe('February 2026 has 28 days')
    expect(readSeconds('2100-02-29')).toBe('February 2100 has 28 days')
    expect(readSeconds('2026-04-31')).toBe('April 2026 has 30 days')
    expect(readSeconds('2026-13-01')).toBe('there is no month 13')
    expect(readSeconds('2026-00-10')).toBe('there is no month 0')
    expect(readSeconds('2026-01-00')).toBe('January 2026 has 31 days')
  })

  it('reads times to the second, refuses 24:00, minute 60 and second 60', () => {
    expect(readSeconds('2026-01-05 23:59:59')).toBe(utc(2026, 1, 5, 23, 59, 59))
    expect(readSeconds('2026-01-05T23:59')).toBe(utc(2026, 1, 5, 23, 59))
    expect(readSeconds('2026-01-05T10:00:00.999Z')).toBe(utc(2026, 1, 5, 10))
    expect(readSeconds('2026-01-05t10:00:00z')).toBe(utc(2026, 1, 5, 10))
    expect(readSeconds('2026-01-01T24:00')).toMatch(/no hour 24/)
    expect(readSeconds('2026-01-01 24:61')).toMatch(/no hour 24/)
    expect(readSeconds('2026-01-01T12:60')).toMatch(/no minute 60/)
    expect(readSeconds('2026-01-01T12:00:60Z')).toMatch(/no second 60/)
    // The fast road ("YYYY-MM-DD HH:MM:SS") refuses the same as the general one.
    expect(readSeconds('2026-02-30 10:00:00')).toBe('February 2026 has 28 days')
    expect(readSeconds('2026-02-01 10:61:00')).toMatch(/no minute 61/)
  })

  it('reads offsets and UTC designators; refuses offsets no zone has', () => {
    for (const s of ['2026-01-05T12:00:00+02:00', '2026-01-05T12:00:00+0200', '2026-01-05T12:00:00+02', '2026-01-05 12:00:00 +02:00', '2026-01-05T10:00:00Z', '2026-01-05 10:00:00 UTC']) {
      expect(readSeconds(s), s).toBe(utc(2026, 1, 5, 10))
    }
    expect(readSeconds('2026-01-05T00:00:00-05:30')).toBe(utc(2026, 1, 5, 5, 30))
    expect(readSeconds('2026-01-05T12:00:00+18:00')).toBe(utc(2026, 1, 4, 18))
    expect(readSeconds('2026-01-05T12:00:00+18:01')).toMatch(/not a UTC offset/)
    expect(readSeconds('2026-01-05T12:00:00+19:00')).toMatch(/not a UTC offset/)
  })

  it('UNIX seconds have 10 digits (the spec\'s timestamps); milliseconds only where asked (exports)', () => {
    expect(readSeconds('1000000000')).toBe(1_000_000_000)
    expect(readSeconds('9999999999')).toBe(9_999_999_999)
    expect(readSeconds(' 1767225600 ')).toBe(1_767_225_600)
    expect(readSeconds('999999999')).toMatch(/10 digits.*this has 9/)
    expect(readSeconds('20260105')).toMatch(/this has 8 \(for a date write YYYY-MM-DD\)/)
    expect(readSeconds('10000000000')).toMatch(/this has 11/)
    expect(readSeconds('1767225600123')).toMatch(/milliseconds\? divide by 1000/)
    expect(readSeconds('1767225600123', {millis: true})).toBe(1_767_225_600)
  })

  it('covers 1970-01-01 to 2286-11-20 (the last 10-digit second)', () => {
    expect(readSeconds('1970-01-01T00:00:00Z')).toBe(0)
    expect(readSeconds('1969-12-31T23:59:59Z')).toMatch(/before 1970/)
    expect(readSeconds('1970-01-01T00:30:00+01:00')).toMatch(/before 1970/)
    expect(readSeconds('0075-01-01')).toMatch(/before 1970/) // Date.UTC would have read 1975
    expect(readSeconds('2286-11-20T17:46:39Z')).toBe(9_999_999_999)
    expect(readSeconds('2286-11-20 17:46:40')).toMatch(/after 2286-11-20/)
  })

  it('refuses anything else by name, never guessing', () => {
    for (const s of ['', 'yesterday', '05/01/2026', '2026-1-5', '2026-01-05T10', '2026-01-05T10:00:00ZZ', '2026-W05-1', '1767225600.5', '-1767225600', 'NaN']) {
      expect(typeof readSeconds(s), s).toBe('string')
    }
  })

  it('a date alone ends at the next midnight of its zone or offset (what --until covers)', () => {
    expect(readMoment('2026-01-31')).toEqual({dayEnd: utc(2026, 2, 1), seconds: utc(2026, 1, 31)})
    expect(readMoment('2026-01-31T00:00')).toEqual({seconds: utc(2026, 1, 31)})
    expect(readMoment('2026-01-31+02:00')).toEqual({dayEnd: utc(2026, 1, 31, 22), seconds: utc(2026, 1, 30, 22)})
    const berlin = resolveZone('Europe/Berlin')
    // Spring forward: a 23-hour day; fall back: 25 hours.
    const spring = readMoment('2026-03-29', {zone: berlin}) as {dayEnd: number; seconds: number}
    expect(spring.dayEnd - spring.seconds).toBe(23 * 3600)
    const fall = readMoment('2026-10-25', {zone: berlin}) as {dayEnd: number; seconds: number}
    expect(fall.dayEnd - fall.seconds).toBe(25 * 3600)
    // Santiago moves its clocks at midnight: 2026-09-06 starts at 01:00 (-03:00), and the day before ends there.
    const santiago = resolveZone('America/Santiago')
    expect(readMoment('2026-09-06', {zone: santiago})).toEqual({dayEnd: utc(2026, 9, 7, 3), seconds: utc(2026, 9, 6, 4)})
    expect(readMoment('2026-09-05', {zone: santiago})).toEqual({dayEnd: utc(2026, 9, 6, 4), seconds: utc(2026, 9, 5, 4)})
    expect(readSeconds('2026-09-06T00:30', {zone: santiago})).toMatch(/does not exist in America\/Santiago/)
  })

  it('requireMoment names the flag, the value, why, and the accepted forms', () => {
    expect(() => requireMoment('2026-02-30', '--created')).toThrow(InvalidInputError)
    expect(() => requireMoment('2026-02-30', '--created')).toThrow(
      '--created: "2026-02-30" is not a valid date or time (February 2026 has 28 days); expected UNIX seconds (such as 1767225600), a date YYYY-MM-DD, or a date-time YYYY-MM-DDTHH:MM[:SS] with Z or an offset such as +02:00 (without one it is read in --tz, default UTC)',
    )
    expect(() => requireMoment('x', 'header X-Event-Timestamp', {zoneFlag: null})).toThrow(/\(without one it is UTC\)$/)
  })
})

describe('time zones (--tz)', () => {
  const berlin = resolveZone('Europe/Berlin')!
  const newYork = resolveZone('America/New_York')!

  it('resolveZone takes IANA names and UTC aliases, refuses the rest by name', () => {
    expect(resolveZone(undefined)).toBeUndefined()
    for (const u of ['UTC', 'utc', 'Etc/UTC', 'GMT', 'Z']) expect(resolveZone(u), u).toBeUndefined()
    expect(resolveZone('Asia/Kolkata')).toBe('Asia/Kolkata')
    expect(() => resolveZone('Mars/Olympus')).toThrow('--tz: unknown time zone "Mars/Olympus" (expected an IANA name such as Europe/Berlin or America/New_York, or UTC)')
    expect(() => resolveZone('+02:00')).toThrow(InvalidInputError)
    expect(() => resolveZone('')).toThrow(InvalidInputError)
  })

  it('reads wall-clock times in the zone; an explicit offset wins over the zone', () => {
    expect(readSeconds('2026-01-15T10:00', {zone: berlin})).toBe(utc(2026, 1, 15, 9))
    expect(readSeconds('2026-07-15 10:00:00', {zone: berlin})).toBe(utc(2026, 7, 15, 8))
    expect(readSeconds('2026-07-15', {zone: newYork})).toBe(utc(2026, 7, 15, 4))
    expect(readSeconds('2026-07-15T10:00:00Z', {zone: berlin})).toBe(utc(2026, 7, 15, 10))
    expect(readSeconds('2026-07-15T10:00:00+00:00', {zone: newYork})).toBe(utc(2026, 7, 15, 10))
    expect(readSeconds('1767225600', {zone: berlin})).toBe(1_767_225_600)
  })

  it('refuses a time the clocks skip; takes the earlier of a time that happens twice', () => {
    expect(readSeconds('2026-03-29T02:30', {zone: berlin})).toBe('2026-03-29T02:30:00 does not exist in Europe/Berlin (the clocks skip it); give an offset')
    expect(readSeconds('2026-03-08 02:15:00', {zone: newYork})).toMatch(/does not exist in America\/New_York/)
    expect(readSeconds('2026-03-29T01:59:59', {zone: berlin})).toBe(utc(2026, 3, 29, 0, 59, 59))
    expect(readSeconds('2026-03-29T03:00', {zone: berlin})).toBe(utc(2026, 3, 29, 1))
    // 02:30 on 2026-10-25 happens at 00:30Z (CEST) and again at 01:30Z (CET).
    expect(readSeconds('2026-10-25T02:30', {zone: berlin})).toBe(utc(2026, 10, 25, 0, 30))
    expect(readSeconds('2026-10-25T02:30+01:00', {zone: berlin})).toBe(utc(2026, 10, 25, 1, 30))
  })

  it('property: every wall-clock time agrees with luxon (same instant, or the earlier one when it happens twice)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Santiago', 'Pacific/Chatham'),
        fc.integer({max: 2040, min: 1971}),
        fc.integer({max: 12, min: 1}),
        fc.integer({max: 31, min: 1}),
        fc.integer({max: 23, min: 0}),
        fc.integer({max: 59, min: 0}),
        (zoneName, y, m, dRaw, h, mi) => {
          const zone = resolveZone(zoneName)!
          const d = Math.min(dRaw, daysInMonth(y, m))
          const text = `${ymd(y, m, d)}T${p2(h)}:${p2(mi)}:00`
          const mine = readSeconds(text, {zone})
          const theirs = DateTime.fromISO(text, {zone})
          const sameWall = theirs.toFormat("yyyy-MM-dd'T'HH:mm:ss") === text
          if (!sameWall) {
            // luxon moves a skipped time forward; it does not exist, so it is refused.
            expect(mine).toMatch(/does not exist/)
            return
          }
          expect(typeof mine).toBe('number')
          expect(DateTime.fromSeconds(mine as number, {zone}).toFormat("yyyy-MM-dd'T'HH:mm:ss")).toBe(text)
          expect(mine as number).toBeLessThanOrEqual(theirs.toSeconds())
        },
      ),
      {numRuns: 400, seed: SEED},
    )
  })
})

describe('readSeconds: properties against luxon', () => {
  it('every valid y-m-d round-trips (fast and general roads, every separator), and agrees with luxon', () => {
    fc.assert(
      fc.property(fc.integer({max: 2285, min: 1970}), fc.integer({max: 12, min: 1}), fc.integer({max: 31, min: 1}), fc.integer({max: 86_399, min: 0}), (y, m, dRaw, secs) => {
        const d = Math.min(dRaw, daysInMonth(y, m))
        const day = ymd(y, m, d)
        const [h, mi, s] = [Math.floor(secs / 3600), Math.floor((secs % 3600) / 60), secs % 60]
        const time = `${p2(h)}:${p2(mi)}:${p2(s)}`
        const want = utc(y, m, d, h, mi, s)
        expect(isIsoDay(day)).toBe(true)
        expect(readSeconds(day)).toBe(utc(y, m, d))
        expect(new Date((readSeconds(day) as number) * 1000).toISOString().slice(0, 10)).toBe(day)
        for (const text of [`${day} ${time}`, `${day}T${time}`, `${day}T${time}Z`, `${day}T${time}.5Z`, `${day} ${time} UTC`, `${day}T${time}+00:00`]) {
          expect(readSeconds(text), text).toBe(want)
        }
        expect(DateTime.fromISO(`${day}T${time}`, {zone: 'utc'}).toSeconds()).toBe(want)
      }),
      {numRuns: 500, seed: SEED},
    )
  })

  it('every impossible day is refused, as luxon refuses it', () => {
    fc.assert(
      fc.property(fc.integer({max: 2285, min: 1970}), fc.integer({max: 99, min: 0}), fc.integer({max: 99, min: 0}), (y, m, d) => {
        fc.pre(m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m))
        const day = ymd(y, m, d)
        expect(isIsoDay(day)).toBe(false)
        expect(typeof readSeconds(day)).toBe('string')
        expect(typeof readSeconds(`${day} 10:00:00`)).toBe('string')
        expect(typeof readSeconds(`${day}T10:00:00Z`)).toBe('string')
        expect(DateTime.fromISO(day, {zone: 'utc'}).isValid).toBe(false)
      }),
      {numRuns: 400, seed: SEED},
    )
  })

  it('day counting: daysFromCivil and civilFromDays are inverse, and match Date.UTC', () => {
    fc.assert(
      fc.property(fc.integer({max: 115_000, min: 0}), (n) => {
        const c = civilFromDays(n)
        expect(daysFromCivil(c.year, c.month, c.day)).toBe(n)
        expect(Date.UTC(c.year, c.month - 1, c.day) / 86_400_000).toBe(n)
      }),
      {numRuns: 500, seed: SEED},
    )
  })
})
