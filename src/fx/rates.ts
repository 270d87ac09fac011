import {isoDay, nowSeconds} from '../clock.js'
import {InvalidInputError} from '../errors.js'
import type {DB} from '../store/db.js'
import {type FxKind, fxKind, isSnapshotSql, SNAPSHOT} from './sources.js'

/** A rate: units of `currency` per 1 USD, as of `date`. */
export type FxRate = {currency: string; date: string; rate: number; source: string}

/**
 * Which rate converts a currency on a day (docs/fx-localization-geoip.md, "Which rate is
 * used"). Pricing asks for today; revenue for the record's created day. Operator rates
 * (manual, imported) outrank the bundled snapshot whatever their dates, and a rate
 * applies from its own date on, so one dated after today is not used today:
 *
 * 1. the operator's latest rate dated on or before the day;
 * 2. else the snapshot's latest rate dated on or before the day;
 * 3. else (a day older than every rate) the operator's earliest rate dated on or before
 *    today: history converts at the first rate on file;
 * 4. else the snapshot's earliest rate, whatever its date: the bundled floor a fresh
 *    store prices with, also when the clock is set before the snapshot's date.
 *
 * Each step walks the (currency, date) primary key from one end and stops at its first
 * match, so a currency with 7,000 days of history costs a few row reads.
 */
function pickDateSql(cur: string): string {
  const snap = isSnapshotSql('x')
  const from = `FROM fx_rates x WHERE x.currency = ${cur}`
  return `coalesce(
    (SELECT x.date ${from} AND x.date <= @day AND NOT (${snap}) ORDER BY x.date DESC LIMIT 1),
    (SELECT x.date ${from} AND x.date <= @day AND ${snap} ORDER BY x.date DESC LIMIT 1),
    (SELECT x.date ${from} AND x.date <= @today AND NOT (${snap}) ORDER BY x.date ASC LIMIT 1),
    (SELECT x.date ${from} AND ${snap} ORDER BY x.date ASC LIMIT 1))`
}

// Every currency on file without reading every row: a loose index scan of the primary key.
const ALL_SQL = `WITH RECURSIVE cur(c) AS (
    SELECT min(currency) FROM fx_rates
    UNION ALL SELECT (SELECT min(currency) FROM fx_rates WHERE currency > cur.c) FROM cur WHERE cur.c IS NOT NULL)
  SELECT f.currency, f.date, f.rate, f.source FROM cur JOIN fx_rates f ON f.currency = cur.c AND f.date = ${pickDateSql('cur.c')}`

const ONE_SQL = `SELECT currency, date, rate, source FROM fx_rates WHERE currency = @currency AND date = ${pickDateSql('@currency')}`

type Statements = {all: ReturnType<DB['prepare']>; one: ReturnType<DB['prepare']>}
const statements = new WeakMap<DB, Statements>()

function prepared(db: DB): Statements {
  let s = statements.get(db)
  if (!s) statements.set(db, (s = {all: db.prepare(ALL_SQL), one: db.prepare(ONE_SQL)}))
  return s
}

/** Today (UTC) by the clock module, so PRICECTL_NOW can pin it. */
export function fxToday(): string {
  return isoDay(nowSeconds())
}

const identity = (date: string): FxRate => ({currency: 'USD', date, rate: 1, source: 'identity'})

/**
 * The rate of a currency on a day (default today) by the rule above, or undefined when
 * it has none on file (or only operator rates dated after today and after the day).
 * USD is always 1.
 */
export function rateOn(db: DB, currency: string, date?: string, today = fxToday()): FxRate | undefined {
  const day = date ?? today
  if (currency === 'USD') return identity(day)
  return prepared(db).one.get({currency, day, today}) as FxRate | undefined
}

/** Like rateOn, but a missing rate is an input error naming the currency and the fix. */
export function requireRate(db: DB, currency: string, date?: string): FxRate {
  const r = rateOn(db, currency, date)
  if (!r) throw new InvalidInputError(`no FX rate for ${currency}${date ? ` usable on ${date}` : ''}: add one with "pricectl fx set ${currency} RATE" or "pricectl fx import FILE"`)
  return r
}

/**
 * The rate of every currency on a day (default today) in one query, for pricing many
 * requests without a query each. USD is always 1.
 */
export function ratesOn(db: DB, date?: string, today = fxToday()): Map<string, FxRate> {
  const day = date ?? today
  const rows = prepared(db).all.all({day, today}) as FxRate[]
  const map = new Map(rows.map((r) => [r.currency, r]))
  map.set('USD', identity(map.get('USD')?.date ?? day))
  return map
}

const KIND_WORDS: Record<FxKind, string> = {import: 'operator import', manual: 'operator rate', snapshot: 'bundled snapshot'}

/** "0.92 EUR/USD (2026-04-10, manual)": a rate inside an explain note of a conversion. */
export function rateText(r: FxRate): string {
  return `${r.rate} ${r.currency}/USD (${r.date}, ${r.source})`
}

/** "0.92 EUR/USD dated 2026-04-10 from "ECB eurofxref (hist.csv)" (operator import)": the explain step of a currency's rate. */
export function describeRate(r: FxRate): string {
  if (r.currency === 'USD') return '1 USD/USD (the base)'
  return `${r.rate} ${r.currency}/USD dated ${r.date} from "${r.source}" (${KIND_WORDS[fxKind(r.source)]})`
}

/**
 * What else a currency has on file beside the rate used on a day, for `price explain`:
 * the snapshot rate an operator rate outranks, and the next rate scheduled after today.
 */
export function rateContext(db: DB, used: FxRate, today = fxToday()): string[] {
  if (used.currency === 'USD') return []
  const notes: string[] = []
  if (used.date > today) notes.push(`dated after today (${today}): no earlier rate is on file, so the bundled snapshot is used as the floor`)
  if (fxKind(used.source) !== 'snapshot') {
    const s = db.prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND ${SNAPSHOT} ORDER BY date DESC LIMIT 1`).get(used.currency) as FxRate | undefined
    if (s) notes.push(`outranks the bundled snapshot's ${s.rate} dated ${s.date}${s.date > used.date ? ' (operator rates win whatever their dates)' : ''}`)
  }
  const next = db.prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND date > ? AND NOT (${SNAPSHOT}) ORDER BY date ASC LIMIT 1`).get(used.currency, today) as FxRate | undefined
  if (next) notes.push(`${next.rate} from "${next.source}" is scheduled from ${next.date}, not used before then`)
  return notes
}
