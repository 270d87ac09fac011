import type {OperatorTaxRate, TaxSettingRow} from '../../domain.js'
import type {FxRate} from '../../fx/rates.js'
import {SNAPSHOT_PREFIX, type SourceFilter} from '../../fx/sources.js'
import type {LocalizationFactor} from '../../localization/factors.js'
import type {RuleOverride} from '../../money/gateway-tables.js'
import type {ConfigRepository, FxRateFilter, StoredGatewaySettings} from '../port/config.js'
import type {PgStore} from './store.js'

/** A LIKE pattern matching `text` literally (`\` is LIKE's escape). */
function likeLiteral(text: string): string {
  return text.replaceAll(/[\\%_]/g, (c) => `\\${c}`)
}

/** SQL: true for a snapshot row of fx_rates (`alias.source`; fixed text, no value in it). */
function isSnapshotSql(alias?: string): string {
  return `${alias ? alias + '.' : ''}source LIKE '${likeLiteral(SNAPSHOT_PREFIX).replaceAll("'", "''")}%'`
}
const SNAPSHOT = isSnapshotSql()

/** The default import labels (fxKind in src/fx/sources.ts), as LIKE patterns: "ECB eurofxref (...)" and so on. */
const IMPORT_LIKES = ['ECB eurofxref (', 'csv (', 'json ('].map((p) => `${likeLiteral(p)}%)`)

/** SQL: the kind of a row, as fxKind() computes it. */
function kindSql(): string {
  return `CASE WHEN ${SNAPSHOT} THEN 'snapshot' WHEN ${IMPORT_LIKES.map((l) => `source LIKE '${l}'`).join(' OR ')} THEN 'import' ELSE 'manual' END`
}

/**
 * The date of the rate a currency (SQL expression `cur`) is converted at on `day`, as of
 * `today` (docs/fx-localization-geoip.md, "Which rate is used"); the same four steps as the
 * SQLite adapter, each a walk of the (currency, date) primary key that stops at its first match.
 */
function pickDateSql(cur: string, day: string, today: string): string {
  const snap = isSnapshotSql('x')
  const from = `FROM fx_rates x WHERE x.currency = ${cur}`
  return `coalesce(
    (SELECT x.date ${from} AND x.date <= ${day} AND NOT (${snap}) ORDER BY x.date DESC LIMIT 1),
    (SELECT x.date ${from} AND x.date <= ${day} AND ${snap} ORDER BY x.date DESC LIMIT 1),
    (SELECT x.date ${from} AND x.date <= ${today} AND NOT (${snap}) ORDER BY x.date ASC LIMIT 1),
    (SELECT x.date ${from} AND ${snap} ORDER BY x.date ASC LIMIT 1))`
}

// Every currency on file without reading every row: a loose index scan of the primary key.
const ALL_SQL = `WITH RECURSIVE cur(c) AS (
    SELECT min(currency) FROM fx_rates
    UNION ALL SELECT (SELECT min(currency) FROM fx_rates WHERE currency > cur.c) FROM cur WHERE cur.c IS NOT NULL)
  SELECT f.currency, f.date, f.rate, f.source FROM cur JOIN fx_rates f ON f.currency = cur.c AND f.date = ${pickDateSql('cur.c', '$1', '$2')}
  ORDER BY f.currency`

const ONE_SQL = `SELECT currency, date, rate, source FROM fx_rates WHERE currency = $3 AND date = ${pickDateSql('$3::text', '$1', '$2')}`

/** A WHERE clause under construction: conditions, and parameters numbered from `first`. */
class Where {
  readonly params: unknown[] = []
  readonly parts: string[] = []
  constructor(private readonly first = 1) {}
  /** A placeholder for `value`. */
  p(value: unknown): string {
    this.params.push(value)
    return `$${this.first + this.params.length - 1}`
  }
  get sql(): string {
    return this.parts.length > 0 ? this.parts.join(' AND ') : 'true'
  }
}

/** SQL condition of a source filter (`*` is the only wildcard operators get; `?` and `[` are literal). */
function sourceFilterSql(filter: SourceFilter, w: Where): string {
  if ('kind' in filter) return `(${kindSql()}) = ${w.p(filter.kind)}`
  if (!filter.label.includes('*')) return `source = ${w.p(filter.label)}`
  return `source LIKE ${w.p(likeLiteral(filter.label).replaceAll('*', '%'))}`
}

function whereOf(filter: FxRateFilter, first = 1): Where {
  const w = new Where(first)
  if (filter.currencies?.length) w.parts.push(`currency = ANY(${w.p(filter.currencies)}::text[])`)
  if (filter.date) w.parts.push(`date = ${w.p(filter.date)}`)
  if (filter.before) w.parts.push(`date < ${w.p(filter.before)}`)
  if (filter.operatorOnly) w.parts.push(`NOT (${SNAPSHOT})`)
  if (filter.source) w.parts.push(sourceFilterSql(filter.source, w))
  return w
}

/**
 * SQLite's avg() of REAL values (Kahan-Babuska-Neumaier summation, then one division), in
 * the same order (the primary key's, by date), so an FX average is the same double on both adapters.
 */
function sqliteAverage(values: readonly number[]): number {
  let sum = 0
  let err = 0
  for (const r of values) {
    const t = sum + r
    err += Math.abs(sum) > Math.abs(r) ? sum - t + r : r - t + sum
    sum = t
  }
  return (sum + err) / values.length
}

const RATE = 'currency, date, rate, source'

/** PostgreSQL adapter of the config repository: FX rates, factors, rounding, gateways, settings. */
export class PgConfig implements ConfigRepository {
  constructor(private readonly store: PgStore) {}

  private get pg() {
    return this.store.pg
  }

  private async one<R>(sql: string, params: readonly unknown[]): Promise<R | undefined> {
    return (await this.pg.query<R>(sql, params))[0]
  }

  async ratesOn(day: string, today: string): Promise<FxRate[]> {
    return await this.pg.query<FxRate>(ALL_SQL, [day, today])
  }

  async rateOn(currency: string, day: string, today: string): Promise<FxRate | undefined> {
    return await this.one<FxRate>(ONE_SQL, [day, today, currency])
  }

  async latestSnapshotRate(currency: string): Promise<FxRate | undefined> {
    return await this.one<FxRate>(`SELECT ${RATE} FROM fx_rates WHERE currency = $1 AND ${SNAPSHOT} ORDER BY date DESC LIMIT 1`, [currency])
  }

  async nextOperatorRate(currency: string, day: string): Promise<FxRate | undefined> {
    return await this.one<FxRate>(`SELECT ${RATE} FROM fx_rates WHERE currency = $1 AND date > $2 AND NOT (${SNAPSHOT}) ORDER BY date ASC LIMIT 1`, [currency, day])
  }

  async fxHistory(filter: {currency?: string; onOrBefore?: string}): Promise<FxRate[]> {
    const w = new Where()
    if (filter.currency) w.parts.push(`currency = ${w.p(filter.currency)}`)
    if (filter.onOrBefore) w.parts.push(`date <= ${w.p(filter.onOrBefore)}`)
    return await this.pg.query<FxRate>(`SELECT ${RATE} FROM fx_rates WHERE ${w.sql} ORDER BY currency, date DESC`, w.params)
  }

  async fxScheduled(day: string, currency?: string): Promise<FxRate[]> {
    return await this.pg.query<FxRate>(
      `SELECT ${RATE} FROM fx_rates WHERE date > $1 AND NOT (${SNAPSHOT}) ${currency ? 'AND currency = $2' : ''} ORDER BY currency, date`,
      currency ? [day, currency] : [day],
    )
  }

  async storedRate(currency: string, date: string): Promise<FxRate | undefined> {
    return await this.one<FxRate>(`SELECT ${RATE} FROM fx_rates WHERE currency = $1 AND date = $2`, [currency, date])
  }

  async latestStoredRate(currency: string, day: string): Promise<FxRate | undefined> {
    return await this.one<FxRate>(`SELECT ${RATE} FROM fx_rates WHERE currency = $1 AND date <= $2 ORDER BY date DESC LIMIT 1`, [currency, day])
  }

  async saveFxRates(rates: readonly FxRate[]): Promise<number> {
    if (rates.length === 0) return 0
    // Row by row when a (currency, date) repeats: one statement cannot write a row twice.
    const keys = new Set(rates.map((r) => `${r.currency}\u0000${r.date}`))
    if (keys.size < rates.length) {
      let n = 0
      for (const r of rates) n += await this.saveFxRates([r])
      return n
    }
    return await this.pg.run(
      `INSERT INTO fx_rates (currency, date, rate, source) SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::text[])
       ON CONFLICT (currency, date) DO UPDATE SET rate = excluded.rate, source = excluded.source
       WHERE fx_rates.rate <> excluded.rate OR fx_rates.source <> excluded.source`,
      [rates.map((r) => r.currency), rates.map((r) => r.date), rates.map((r) => r.rate), rates.map((r) => r.source)],
    )
  }

  async fxAverage(currency: string, from: string, to: string): Promise<{days: number; rate: number} | undefined> {
    const rates = (await this.pg
      .queryArrays<[number]>('SELECT rate FROM fx_rates WHERE currency = $1 AND date >= $2 AND date <= $3 ORDER BY date', [currency, from, to]))
      .map(([r]) => r)
    return rates.length === 0 ? undefined : {days: rates.length, rate: sqliteAverage(rates)}
  }

  async hasOperatorRateBetween(currency: string, after: string, onOrBefore: string): Promise<boolean> {
    return (await this.pg.query(`SELECT 1 FROM fx_rates WHERE currency = $1 AND date > $2 AND date <= $3 AND NOT (${SNAPSHOT}) LIMIT 1`, [currency, after, onOrBefore])).length > 0
  }

  async fxMatching(filter: FxRateFilter): Promise<{currencies: {currency: string; from: string; removed: number; to: string}[]; sources: {removed: number; source: string}[]}> {
    const w = whereOf(filter)
    const currencies = await this.pg.query<{currency: string; from: string; removed: number; to: string}>(
      `SELECT currency, count(*) AS removed, min(date) AS "from", max(date) AS "to" FROM fx_rates WHERE ${w.sql} GROUP BY currency ORDER BY currency`,
      w.params,
    )
    const sources = await this.pg.query<{removed: number; source: string}>(`SELECT source, count(*) AS removed FROM fx_rates WHERE ${w.sql} GROUP BY source ORDER BY source`, w.params)
    return {currencies, sources}
  }

  async fxOperatorCurrenciesOn(filter: FxRateFilter, date: string): Promise<string[]> {
    const w = whereOf(filter)
    w.parts.push(`date = ${w.p(date)}`, `NOT (${SNAPSHOT})`)
    return (await this.pg.queryArrays<[string]>(`SELECT currency FROM fx_rates WHERE ${w.sql} ORDER BY currency`, w.params)).map(([c]) => c)
  }

  async fxFilterTakes(filter: FxRateFilter, row: FxRate): Promise<boolean> {
    // The same WHERE as the removal, asked of the row alone, so the rule is the same.
    const w = whereOf(filter, 4)
    const [hit] = await this.pg.query<{n: number}>(
      `SELECT count(*) AS n FROM (SELECT $1::text COLLATE "C" AS currency, $2::text COLLATE "C" AS date, $3::text COLLATE "C" AS source) AS t WHERE ${w.sql}`,
      [row.currency, row.date, row.source, ...w.params],
    )
    return hit.n > 0
  }

  async hasFxSource(source: string): Promise<boolean> {
    return (await this.pg.query('SELECT 1 FROM fx_rates WHERE source = $1 LIMIT 1', [source])).length > 0
  }

  async snapshotDate(currency: string, date?: string): Promise<string | undefined> {
    const rows = await this.pg.queryArrays<[string]>(
      `SELECT date FROM fx_rates WHERE currency = $1 ${date ? 'AND date = $2' : ''} AND ${SNAPSHOT} ORDER BY date LIMIT 1`,
      date ? [currency, date] : [currency],
    )
    return rows[0]?.[0]
  }

  async deleteFxRates(filter: FxRateFilter): Promise<number> {
    const w = whereOf(filter)
    return await this.pg.run(`DELETE FROM fx_rates WHERE ${w.sql}`, w.params)
  }

  async moneyUses(): Promise<{currency: string; use: string}[]> {
    return await this.pg.query<{currency: string; use: string}>(
      `SELECT currency, use FROM (
         SELECT currency, 'country prices' AS use FROM country_prices
         UNION SELECT currency, 'fixed-amount coupons' FROM coupons WHERE currency IS NOT NULL
         UNION SELECT currency, 'audience prices' FROM audience_prices WHERE currency IS NOT NULL
         UNION SELECT fallback_currency, 'gateway fallback' FROM gateways
         UNION SELECT currency, 'locked quotes' FROM locks
         UNION SELECT currency, 'subscriptions' FROM subscriptions WHERE currency IS NOT NULL
         UNION SELECT currency, 'charges' FROM charges WHERE currency IS NOT NULL
         UNION SELECT country, 'localization factors' FROM localization_factors) AS u
       ORDER BY currency COLLATE "C", use COLLATE "C"`,
    )
  }

  async localizationFactors(country?: string): Promise<LocalizationFactor[]> {
    return country
      ? await this.pg.query<LocalizationFactor>('SELECT country, factor, year, source FROM localization_factors WHERE country = $1', [country])
      : await this.pg.query<LocalizationFactor>('SELECT country, factor, year, source FROM localization_factors ORDER BY country')
  }

  async saveLocalizationFactors(factors: readonly LocalizationFactor[]): Promise<void> {
    if (factors.length === 0) return
    if (new Set(factors.map((f) => f.country)).size < factors.length) {
      for (const f of factors) await this.saveLocalizationFactors([f])
      return
    }
    await this.pg.run(
      `INSERT INTO localization_factors (country, factor, year, source) SELECT * FROM unnest($1::text[], $2::float8[], $3::bigint[], $4::text[])
       ON CONFLICT (country) DO UPDATE SET factor = excluded.factor, year = excluded.year, source = excluded.source`,
      [factors.map((f) => f.country), factors.map((f) => f.factor), factors.map((f) => f.year), factors.map((f) => f.source)],
    )
  }

  async deleteLocalizationFactors(countries?: readonly string[]): Promise<number> {
    if (!countries) return await this.pg.run('DELETE FROM localization_factors')
    return await this.pg.run('DELETE FROM localization_factors WHERE country = ANY($1::text[])', [[...new Set(countries)]])
  }

  async localizationFactor(country: string): Promise<number | undefined> {
    return (await this.one<{factor: number}>('SELECT factor FROM localization_factors WHERE country = $1', [country]))?.factor
  }

  async roundingRule(currency: string): Promise<string | undefined> {
    return (await this.one<{rule: string}>('SELECT rule FROM rounding_rules WHERE currency = $1', [currency]))?.rule
  }

  async roundingRules(): Promise<{currency: string; rule: string}[]> {
    return await this.pg.query('SELECT currency, rule FROM rounding_rules ORDER BY currency')
  }

  async gatewaySettings(): Promise<StoredGatewaySettings[]> {
    return await this.pg.query<StoredGatewaySettings>('SELECT gateway, accepted_currencies, fallback_currency, amount_format FROM gateways ORDER BY gateway')
  }

  async gatewayRuleOverrides(): Promise<RuleOverride[]> {
    return await this.pg.query<RuleOverride>('SELECT gateway, currency, exponent, divisible_by, min_amount, max_amount FROM gateway_currency_rules ORDER BY gateway, currency')
  }

  async saveRoundingRule(currency: string, rule: string, at: string): Promise<void> {
    await this.pg.run(
      'INSERT INTO rounding_rules (currency, rule, updated_at) VALUES ($1, $2, $3) ON CONFLICT (currency) DO UPDATE SET rule = excluded.rule, updated_at = excluded.updated_at',
      [currency, rule, at],
    )
  }

  async deleteRoundingRule(currency: string): Promise<boolean> {
    return await this.pg.run('DELETE FROM rounding_rules WHERE currency = $1', [currency]) > 0
  }

  async saveGatewaySettings(s: StoredGatewaySettings): Promise<void> {
    await this.pg.run(
      `INSERT INTO gateways (gateway, accepted_currencies, fallback_currency, amount_format) VALUES ($1, $2, $3, $4)
       ON CONFLICT (gateway) DO UPDATE SET accepted_currencies = excluded.accepted_currencies,
         fallback_currency = excluded.fallback_currency, amount_format = excluded.amount_format`,
      [s.gateway, s.accepted_currencies, s.fallback_currency, s.amount_format],
    )
  }

  async deleteGatewaySettings(gateway: string): Promise<boolean> {
    return await this.pg.run('DELETE FROM gateways WHERE gateway = $1', [gateway]) > 0
  }

  async saveGatewayRuleOverride(rule: {currency: string; divisible_by: number; exponent: number; gateway: string; max_amount: null | number; min_amount: null | number}, at: string): Promise<void> {
    await this.pg.run(
      `INSERT INTO gateway_currency_rules (gateway, currency, exponent, divisible_by, min_amount, max_amount, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (gateway, currency) DO UPDATE SET exponent = excluded.exponent, divisible_by = excluded.divisible_by,
         min_amount = excluded.min_amount, max_amount = excluded.max_amount, updated_at = excluded.updated_at`,
      [rule.gateway, rule.currency, rule.exponent, rule.divisible_by, rule.min_amount, rule.max_amount, at],
    )
  }

  async deleteGatewayRuleOverride(gateway: string, currency: string): Promise<boolean> {
    return await this.pg.run('DELETE FROM gateway_currency_rules WHERE gateway = $1 AND currency = $2', [gateway, currency]) > 0
  }

  async setting(key: string): Promise<string | undefined> {
    return (await this.one<{value: string}>('SELECT value FROM settings WHERE key = $1', [key]))?.value
  }

  async saveSetting(key: string, value: string): Promise<void> {
    await this.pg.run('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value])
  }

  async taxRates(): Promise<OperatorTaxRate[]> {
    return (await this.pg
      .query<{bp: number | string; category: string; country: string; from: string; source: string}>('SELECT country, category, valid_from AS "from", rate_bp AS bp, source FROM tax_rates ORDER BY country, category, valid_from'))
      .map((r) => ({...r, bp: Number(r.bp)}))
  }

  async saveTaxRate(r: OperatorTaxRate, at: string): Promise<void> {
    await this.pg.run(
      `INSERT INTO tax_rates (country, category, valid_from, rate_bp, source, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (country, category, valid_from) DO UPDATE SET rate_bp = excluded.rate_bp, source = excluded.source, updated_at = excluded.updated_at`,
      [r.country, r.category, r.from, r.bp, r.source, at],
    )
  }

  async deleteTaxRates(country: string, category: string, from?: string): Promise<number> {
    if (from === undefined) return await this.pg.run('DELETE FROM tax_rates WHERE country = $1 AND category = $2', [country, category])
    return await this.pg.run('DELETE FROM tax_rates WHERE country = $1 AND category = $2 AND valid_from = $3', [country, category, from])
  }

  async taxSettings(): Promise<TaxSettingRow[]> {
    return await this.pg.query<TaxSettingRow>('SELECT scope, subject, behavior, category FROM tax_settings ORDER BY scope, subject')
  }

  async saveTaxSetting(row: TaxSettingRow, at: string): Promise<void> {
    await this.pg.run(
      `INSERT INTO tax_settings (scope, subject, behavior, category, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (scope, subject) DO UPDATE SET behavior = excluded.behavior, category = excluded.category, updated_at = excluded.updated_at`,
      [row.scope, row.subject, row.behavior, row.category, at],
    )
  }

  async deleteTaxSetting(scope: TaxSettingRow['scope'], subject: string): Promise<boolean> {
    return await this.pg.run('DELETE FROM tax_settings WHERE scope = $1 AND subject = $2', [scope, subject]) > 0
  }
}
