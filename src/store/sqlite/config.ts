import type {OperatorTaxRate, TaxSettingRow} from '../../domain.js'
import type {FxRate} from '../../fx/rates.js'
import type {RuleOverride} from '../../money/gateway-tables.js'
import type {DB} from '../db.js'
import {setSetting} from '../settings.js'
import type {ConfigRepository, StoredGatewaySettings} from '../port/config.js'
import {ALL_SQL, ONE_SQL, SNAPSHOT, SqliteFx} from './fx.js'

/**
 * SQLite adapter of the config repository: every statement prepared once per store, on
 * first use. FX rate writes, removals and localization factors are in ./fx.ts.
 */
export class SqliteConfig extends SqliteFx implements ConfigRepository {
  private s?: ReturnType<SqliteConfig['prepare']>

  constructor(db: DB) {
    super(db)
  }

  private get stmts() {
    return (this.s ??= this.prepare())
  }

  private prepare() {
    const db = this.db
    return {
      factor: db.prepare('SELECT factor FROM localization_factors WHERE country = ?').pluck(),
      nextOperator: db.prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND date > ? AND NOT (${SNAPSHOT}) ORDER BY date ASC LIMIT 1`),
      rateOn: db.prepare(ONE_SQL),
      ratesOn: db.prepare(ALL_SQL),
      rule: db.prepare('SELECT rule FROM rounding_rules WHERE currency = ?').pluck(),
      setting: db.prepare('SELECT value FROM settings WHERE key = ?').pluck(),
      snapshot: db.prepare(`SELECT currency, date, rate, source FROM fx_rates WHERE currency = ? AND ${SNAPSHOT} ORDER BY date DESC LIMIT 1`),
    }
  }

  async ratesOn(day: string, today: string): Promise<FxRate[]> {
    return this.stmts.ratesOn.all({day, today}) as FxRate[]
  }

  async rateOn(currency: string, day: string, today: string): Promise<FxRate | undefined> {
    return this.stmts.rateOn.get({currency, day, today}) as FxRate | undefined
  }

  async latestSnapshotRate(currency: string): Promise<FxRate | undefined> {
    return this.stmts.snapshot.get(currency) as FxRate | undefined
  }

  async nextOperatorRate(currency: string, day: string): Promise<FxRate | undefined> {
    return this.stmts.nextOperator.get(currency, day) as FxRate | undefined
  }

  async localizationFactor(country: string): Promise<number | undefined> {
    return this.stmts.factor.get(country) as number | undefined
  }

  async roundingRule(currency: string): Promise<string | undefined> {
    return this.stmts.rule.get(currency) as string | undefined
  }

  async roundingRules(): Promise<{currency: string; rule: string}[]> {
    return this.db.prepare('SELECT currency, rule FROM rounding_rules ORDER BY currency').all() as {currency: string; rule: string}[]
  }

  async gatewaySettings(): Promise<StoredGatewaySettings[]> {
    return this.db.prepare('SELECT gateway, accepted_currencies, fallback_currency, amount_format FROM gateways ORDER BY gateway').all() as StoredGatewaySettings[]
  }

  async gatewayRuleOverrides(): Promise<RuleOverride[]> {
    return this.db.prepare('SELECT gateway, currency, exponent, divisible_by, min_amount, max_amount FROM gateway_currency_rules ORDER BY gateway, currency').all() as RuleOverride[]
  }

  async saveRoundingRule(currency: string, rule: string, at: string): Promise<void> {
    this.db.prepare('INSERT INTO rounding_rules (currency, rule, updated_at) VALUES (?, ?, ?) ON CONFLICT (currency) DO UPDATE SET rule = excluded.rule, updated_at = excluded.updated_at').run(currency, rule, at)
  }

  async deleteRoundingRule(currency: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM rounding_rules WHERE currency = ?').run(currency).changes > 0
  }

  async saveGatewaySettings(s: StoredGatewaySettings): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO gateways (gateway, accepted_currencies, fallback_currency, amount_format) VALUES (?, ?, ?, ?)
         ON CONFLICT (gateway) DO UPDATE SET accepted_currencies = excluded.accepted_currencies,
           fallback_currency = excluded.fallback_currency, amount_format = excluded.amount_format`,
      )
      .run(s.gateway, s.accepted_currencies, s.fallback_currency, s.amount_format)
  }

  async deleteGatewaySettings(gateway: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM gateways WHERE gateway = ?').run(gateway).changes > 0
  }

  async saveGatewayRuleOverride(rule: {currency: string; divisible_by: number; exponent: number; gateway: string; max_amount: null | number; min_amount: null | number}, at: string): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO gateway_currency_rules (gateway, currency, exponent, divisible_by, min_amount, max_amount, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (gateway, currency) DO UPDATE SET exponent = excluded.exponent, divisible_by = excluded.divisible_by,
           min_amount = excluded.min_amount, max_amount = excluded.max_amount, updated_at = excluded.updated_at`,
      )
      .run(rule.gateway, rule.currency, rule.exponent, rule.divisible_by, rule.min_amount, rule.max_amount, at)
  }

  async deleteGatewayRuleOverride(gateway: string, currency: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM gateway_currency_rules WHERE gateway = ? AND currency = ?').run(gateway, currency).changes > 0
  }

  async setting(key: string): Promise<string | undefined> {
    return this.stmts.setting.get(key) as string | undefined
  }

  async saveSetting(key: string, value: string): Promise<void> {
    setSetting(this.db, key, value)
  }

  async taxRates(): Promise<OperatorTaxRate[]> {
    return this.db.prepare('SELECT country, category, valid_from AS "from", rate_bp AS bp, source FROM tax_rates ORDER BY country, category, valid_from').all() as OperatorTaxRate[]
  }

  async saveTaxRate(r: OperatorTaxRate, at: string): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO tax_rates (country, category, valid_from, rate_bp, source, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (country, category, valid_from) DO UPDATE SET rate_bp = excluded.rate_bp, source = excluded.source, updated_at = excluded.updated_at`,
      )
      .run(r.country, r.category, r.from, r.bp, r.source, at)
  }

  async deleteTaxRates(country: string, category: string, from?: string): Promise<number> {
    if (from === undefined) return this.db.prepare('DELETE FROM tax_rates WHERE country = ? AND category = ?').run(country, category).changes
    return this.db.prepare('DELETE FROM tax_rates WHERE country = ? AND category = ? AND valid_from = ?').run(country, category, from).changes
  }

  async taxSettings(): Promise<TaxSettingRow[]> {
    return this.db.prepare('SELECT scope, subject, behavior, category FROM tax_settings ORDER BY scope, subject').all() as TaxSettingRow[]
  }

  async saveTaxSetting(row: TaxSettingRow, at: string): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO tax_settings (scope, subject, behavior, category, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (scope, subject) DO UPDATE SET behavior = excluded.behavior, category = excluded.category, updated_at = excluded.updated_at`,
      )
      .run(row.scope, row.subject, row.behavior, row.category, at)
  }

  async deleteTaxSetting(scope: TaxSettingRow['scope'], subject: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM tax_settings WHERE scope = ? AND subject = ?').run(scope, subject).changes > 0
  }
}
