import type {FxRate} from '../../fx/rates.js'
import {SNAPSHOT_PREFIX, type SourceFilter} from '../../fx/sources.js'
import type {LocalizationFactor} from '../../localization/factors.js'
import type {DB} from '../db.js'
import type {FxRateFilter} from '../port/config.js'

/** SQL GLOB patterns (case-sensitive, like startsWith) of the default import labels (fxKind in src/fx/sources.ts). */
const IMPORT_GLOBS = ['ECB eurofxref (*)', 'csv (*)', 'json (*)']

/** SQL: true for a snapshot row of fx_rates (fixed text, no value in it). */
export const SNAPSHOT = `source GLOB '${SNAPSHOT_PREFIX}*'`

/** SQL: true for a snapshot row of table `alias` (`alias.source`). */
function isSnapshotSql(alias: string): string {
  return `${alias}.source GLOB '${SNAPSHOT_PREFIX}*'`
}

/** SQL: the kind of a row of fx_rates, as fxKind() computes it. */
function kindSql(): string {
  return `CASE WHEN ${SNAPSHOT} THEN 'snapshot' WHEN ${IMPORT_GLOBS.map((g) => `source GLOB '${g}'`).join(' OR ')} THEN 'import' ELSE 'manual' END`
}

/**
 * The date of the rate a currency (SQL expression `cur`) is converted at on @day, as of
 * @today (docs/fx-localization-geoip.md, "Which rate is used"). Each step walks the
 * (currency, date) primary key from one end and stops at its first match, so a currency
 * with 7,000 days of history costs a few row reads.
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
export const ALL_SQL = `WITH RECURSIVE cur(c) AS (
    SELECT min(currency) FROM fx_rates
    UNION ALL SELECT (SELECT min(currency) FROM fx_rates WHERE currency > cur.c) FROM cur WHERE cur.c IS NOT NULL)
  SELECT f.currency, f.date, f.rate, f.source FROM cur JOIN fx_rates f ON f.currency = cur.c AND f.date = ${pickDateSql('cur.c')}`

export const ONE_SQL = `SELECT currency, date, rate, source FROM fx_rates WHERE currency = @currency AND date = ${pickDateSql('@currency')}`

/** SQL condition and parameters of a source filter (`*` is the only wildcard operators get). */
function sourceFilterSql(filter: SourceFilter): {params: string[]; sql: string} {
  if ('kind' in filter) return {params: [filter.kind], sql: `(${kindSql()}) = ?`}
  // GLOB's ? and [ are taken literally, so a label without * matches itself only.
  const pattern = filter.label.replaceAll(/[?[\]]/g, (c) => `[${c}]`)
  return {params: [pattern], sql: 'source GLOB ?'}
}

function whereOf(filter: FxRateFilter): {params: string[]; sql: string} {
  const where: string[] = []
  const params: string[] = []
  if (filter.currencies?.length) {
    where.push(`currency IN (${filter.currencies.map(() => '?').join(', ')})`)
    params.push(...filter.currencies)
  }
  if (filter.date) {
    where.push('date = ?')
    params.push(filter.date)
  }
  if (filter.before) {
    where.push('date < ?')
    params.push(filter.before)
  }
  if (filter.operatorOnly) where.push(`NOT (${SNAPSHOT})`)
  if (filter.source) {
    const s = sourceFilterSql(filter.source)
    where.push(s.sql)
    params.push(...s.params)
  }
  return {params, sql: where.length ? where.join(' AND ') : '1'}
}

const FACTOR_UPSERT = `INSERT INTO localization_factors (country, factor, year, source) VALUES (?, ?, ?, ?)
  ON CONFLICT (country) DO UPDATE SET factor = excluded.factor, year = excluded.year, source = excluded.source`

/** FX rate writes and removals, and localization factors, of the SQLite config adapter (./config.ts). */
export class SqliteFx {
  constructor(protected readonly db: DB) {}

  async fxHistory(filter: {currency?: string; onOrBefore?: string}): Promise<FxRate[]> {
    const where: string[] = []
    const params: string[] = []
    if (filter.currency) {
      where.push('currency = ?')
      params.push(filter.currency)
    }
    if (filter.onOrBefore) {
      where.push('date <= ?')
      params.push(filter.onOrBefore)
    }
    const sql = `SELECT currency, date, rate, source FROM fx_rates ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY currency, date DESC`
    return this.db.prepare(sql).all(...params) as FxRate[]
  }

  async fxScheduled(day: string, currency?: string): Promise<FxRate[]> {
    return this.db
      .prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE date > ? AND NOT (${SNAPSHOT}) ${currency ? 'AND currency = ?' : ''} ORDER BY currency, date`)
      .all(...(currency ? [day, currency] : [day])) as FxRate[]
  }

  async storedRate(currency: string, date: string): Promise<FxRate | undefined> {
    return this.db.prepare('SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND date = ?').get(currency, date) as FxRate | undefined
  }

  async latestStoredRate(currency: string, day: string): Promise<FxRate | undefined> {
    return this.db.prepare('SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND date <= ? ORDER BY date DESC LIMIT 1').get(currency, day) as FxRate | undefined
  }

  async saveFxRates(rates: readonly FxRate[]): Promise<number> {
    const upsert = this.db.prepare(
      `INSERT INTO fx_rates (currency, date, rate, source) VALUES (?, ?, ?, ?)
       ON CONFLICT (currency, date) DO UPDATE SET rate = excluded.rate, source = excluded.source
       WHERE fx_rates.rate <> excluded.rate OR fx_rates.source <> excluded.source`,
    )
    let written = 0
    for (const r of rates) written += upsert.run(r.currency, r.date, r.rate, r.source).changes
    return written
  }

  async fxAverage(currency: string, from: string, to: string): Promise<{days: number; rate: number} | undefined> {
    const row = this.db.prepare('SELECT avg(rate) AS rate, count(*) AS days FROM fx_rates WHERE currency = ? AND date >= ? AND date <= ?').get(currency, from, to) as {days: number; rate: null | number}
    return row.rate === null ? undefined : {days: row.days, rate: row.rate}
  }

  async hasOperatorRateBetween(currency: string, after: string, onOrBefore: string): Promise<boolean> {
    return this.db.prepare(`SELECT 1 FROM fx_rates WHERE currency = ? AND date > ? AND date <= ? AND NOT (${SNAPSHOT}) LIMIT 1`).get(currency, after, onOrBefore) !== undefined
  }

  async fxMatching(filter: FxRateFilter): Promise<{currencies: {currency: string; from: string; removed: number; to: string}[]; sources: {removed: number; source: string}[]}> {
    const {params, sql: where} = whereOf(filter)
    const currencies = this.db
      .prepare(`SELECT currency, count(*) AS removed, min(date) AS "from", max(date) AS "to" FROM fx_rates WHERE ${where} GROUP BY currency ORDER BY currency`)
      .all(...params) as {currency: string; from: string; removed: number; to: string}[]
    const sources = this.db.prepare(`SELECT source, count(*) AS removed FROM fx_rates WHERE ${where} GROUP BY source ORDER BY source`).all(...params) as {removed: number; source: string}[]
    return {currencies, sources}
  }

  async fxOperatorCurrenciesOn(filter: FxRateFilter, date: string): Promise<string[]> {
    const {params, sql: where} = whereOf(filter)
    return this.db.prepare(`SELECT currency FROM fx_rates WHERE ${where} AND date = ? AND NOT (${SNAPSHOT})`).pluck().all(...params, date) as string[]
  }

  async fxFilterTakes(filter: FxRateFilter, row: FxRate): Promise<boolean> {
    // The same WHERE as the removal, asked of the row alone, so the rule is the same.
    const {params, sql: where} = whereOf(filter)
    return (this.db.prepare(`SELECT count(*) AS n FROM (SELECT ? AS currency, ? AS date, ? AS source) WHERE ${where}`).get(row.currency, row.date, row.source, ...params) as {n: number}).n > 0
  }

  async hasFxSource(source: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM fx_rates WHERE source = ? LIMIT 1').get(source) !== undefined
  }

  async snapshotDate(currency: string, date?: string): Promise<string | undefined> {
    return this.db
      .prepare(`SELECT date FROM fx_rates WHERE currency = ? ${date ? 'AND date = ?' : ''} AND ${SNAPSHOT} LIMIT 1`)
      .pluck()
      .get(...(date ? [currency, date] : [currency])) as string | undefined
  }

  async deleteFxRates(filter: FxRateFilter): Promise<number> {
    const {params, sql: where} = whereOf(filter)
    return this.db.prepare(`DELETE FROM fx_rates WHERE ${where}`).run(...params).changes
  }

  async moneyUses(): Promise<{currency: string; use: string}[]> {
    return this.db
      .prepare(
        `SELECT DISTINCT currency, 'country prices' AS use FROM country_prices
         UNION SELECT DISTINCT currency, 'fixed-amount coupons' FROM coupons WHERE currency IS NOT NULL
         UNION SELECT DISTINCT currency, 'audience prices' FROM audience_prices WHERE currency IS NOT NULL
         UNION SELECT DISTINCT fallback_currency, 'gateway fallback' FROM gateways
         UNION SELECT DISTINCT currency, 'locked quotes' FROM locks
         UNION SELECT DISTINCT currency, 'subscriptions' FROM subscriptions WHERE currency IS NOT NULL
         UNION SELECT DISTINCT currency, 'charges' FROM charges WHERE currency IS NOT NULL
         UNION SELECT DISTINCT country, 'localization factors' FROM localization_factors`,
      )
      .all() as {currency: string; use: string}[]
  }

  async localizationFactors(country?: string): Promise<LocalizationFactor[]> {
    return (
      country
        ? this.db.prepare('SELECT country, factor, year, source FROM localization_factors WHERE country = ?').all(country)
        : this.db.prepare('SELECT country, factor, year, source FROM localization_factors ORDER BY country').all()
    ) as LocalizationFactor[]
  }

  async saveLocalizationFactors(factors: readonly LocalizationFactor[]): Promise<void> {
    const upsert = this.db.prepare(FACTOR_UPSERT)
    for (const f of factors) upsert.run(f.country, f.factor, f.year, f.source)
  }

  async deleteLocalizationFactors(countries?: readonly string[]): Promise<number> {
    if (!countries) return this.db.prepare('DELETE FROM localization_factors').run().changes
    const del = this.db.prepare('DELETE FROM localization_factors WHERE country = ?')
    let n = 0
    for (const c of countries) n += del.run(c).changes
    return n
  }
}
