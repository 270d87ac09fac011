import type {FxRate, LocalizationFactor, OperatorTaxRate, RuleOverride, SourceFilter, TaxSettingRow} from '../../domain.js'

/** A gateway's stored settings, as written (accepted currencies: '*' or a JSON array). */
export type StoredGatewaySettings = {accepted_currencies: string; amount_format: 'decimal' | 'minor'; fallback_currency: string; gateway: string}

/** Which fx_rates rows a removal (fx delete, fx prune) takes; every field given must match. */
export type FxRateFilter = {
  /** Strictly before this day. */
  before?: string
  currencies?: string[]
  /** Exactly this day. */
  date?: string
  /** Only operator rates (manual and imported), never the bundled snapshot's. */
  operatorOnly?: boolean
  source?: SourceFilter
}

/**
 * The config part of the storage port (see ../port.ts): FX rates, localization factors,
 * rounding rules, gateway settings and store-wide settings, as the price calculation reads
 * them. A pricing context reads each once (every rate in one call) and caches it.
 */
export interface ConfigRepository {
  /**
   * The rate each currency on file is priced at on `day`, as of `today` (both YYYY-MM-DD):
   * the latest operator rate dated on or before the day, else the latest snapshot rate on
   * or before it, else the earliest operator rate up to today, else the earliest snapshot
   * rate (src/fx/rates.ts). One entry per currency, sorted by currency; USD only when stored.
   */
  ratesOn(day: string, today: string): Promise<FxRate[]>
  /** The same rule for one currency; undefined when it has none usable. */
  rateOn(currency: string, day: string, today: string): Promise<FxRate | undefined>
  /** The latest bundled-snapshot rate of a currency. */
  latestSnapshotRate(currency: string): Promise<FxRate | undefined>
  /** The earliest operator (non-snapshot) rate of a currency dated after `day`. */
  nextOperatorRate(currency: string, day: string): Promise<FxRate | undefined>

  /** Stored rows, newest first per currency (sorted by currency): one currency's, on or before a day when given. */
  fxHistory(filter: {currency?: string; onOrBefore?: string}): Promise<FxRate[]>
  /** Operator rates dated after `day` (scheduled), by currency then date; one currency's when given. */
  fxScheduled(day: string, currency?: string): Promise<FxRate[]>
  /** The row stored for a currency and day. */
  storedRate(currency: string, date: string): Promise<FxRate | undefined>
  /** The latest row of a currency dated on or before `day`, whatever its kind. */
  latestStoredRate(currency: string, day: string): Promise<FxRate | undefined>
  /**
   * Store rates, replacing the row of the same currency and day; a row already holding the
   * same rate and source is left alone. Returns how many rows were written.
   */
  saveFxRates(rates: readonly FxRate[]): Promise<number>
  /** Mean and count of a currency's rates dated from..to (inclusive); undefined when none. */
  fxAverage(currency: string, from: string, to: string): Promise<{days: number; rate: number} | undefined>
  /** Whether a currency has an operator rate dated after `after` and on or before `onOrBefore`. */
  hasOperatorRateBetween(currency: string, after: string, onOrBefore: string): Promise<boolean>
  /** What a removal would take: per currency (count, first and last date) and per source, sorted. */
  fxMatching(filter: FxRateFilter): Promise<{currencies: {currency: string; from: string; removed: number; to: string}[]; sources: {removed: number; source: string}[]}>
  /** Currencies with an operator row dated `date` that the filter takes. */
  fxOperatorCurrenciesOn(filter: FxRateFilter, date: string): Promise<string[]>
  /** Whether the filter would take this row (stored or not). */
  fxFilterTakes(filter: FxRateFilter, row: FxRate): Promise<boolean>
  /** Whether any row carries this source label. */
  hasFxSource(source: string): Promise<boolean>
  /** The date of a currency's bundled-snapshot row (that day's, when given). */
  snapshotDate(currency: string, date?: string): Promise<string | undefined>
  /** Remove the rows the filter takes; returns how many. */
  deleteFxRates(filter: FxRateFilter): Promise<number>
  /**
   * Currencies the store prices or records money in, each with what uses it ('country prices',
   * 'fixed-amount coupons', 'audience prices', 'gateway fallback', 'locked quotes',
   * 'subscriptions', 'charges'), and the countries with a localization factor ('localization factors').
   */
  moneyUses(): Promise<{currency: string; use: string}[]>

  /** Every localization factor, by country, or one country's. */
  localizationFactors(country?: string): Promise<LocalizationFactor[]>
  /** Store factors, replacing those of the same countries. */
  saveLocalizationFactors(factors: readonly LocalizationFactor[]): Promise<void>
  /** Delete the factors of these countries (every factor when undefined); returns how many. */
  deleteLocalizationFactors(countries?: readonly string[]): Promise<number>
  /** The localization factor of a country, undefined when none is on file. */
  localizationFactor(country: string): Promise<number | undefined>
  /** The stored rounding rule text of a currency, undefined when the default applies. */
  roundingRule(currency: string): Promise<string | undefined>
  /** Every stored rounding rule, sorted by currency. */
  roundingRules(): Promise<{currency: string; rule: string}[]>
  /** Every gateway's stored settings (gateways without are left out). */
  gatewaySettings(): Promise<StoredGatewaySettings[]>
  /** Every stored gateway currency-rule override. */
  gatewayRuleOverrides(): Promise<RuleOverride[]>
  /** Store a currency's rounding rule (canonical text) with when it was set. */
  saveRoundingRule(currency: string, rule: string, at: string): Promise<void>
  /** Drop a currency's stored rounding rule; false when none was stored. */
  deleteRoundingRule(currency: string): Promise<boolean>
  /** Store a gateway's settings (replacing what was stored). */
  saveGatewaySettings(settings: StoredGatewaySettings): Promise<void>
  /** Drop a gateway's stored settings; false when none were stored. */
  deleteGatewaySettings(gateway: string): Promise<boolean>
  /** Store a gateway currency-rule override (replacing what was stored). */
  saveGatewayRuleOverride(rule: {currency: string; divisible_by: number; exponent: number; gateway: string; max_amount: null | number; min_amount: null | number}, at: string): Promise<void>
  /** Drop a gateway currency-rule override; false when none was stored. */
  deleteGatewayRuleOverride(gateway: string, currency: string): Promise<boolean>
  /** A store-wide setting, undefined when unset. */
  setting(key: string): Promise<string | undefined>
  /** Store a store-wide setting (replacing its value). */
  saveSetting(key: string, value: string): Promise<void>

  /** Every operator tax rate (docs/tax.md), by country, category and date. */
  taxRates(): Promise<OperatorTaxRate[]>
  /** Store an operator tax rate, replacing the one of the same country, category and date. */
  saveTaxRate(rate: OperatorTaxRate, at: string): Promise<void>
  /** Remove a country's operator rates of a category ('' = standard), only the one dated `from` when given; returns how many. */
  deleteTaxRates(country: string, category: string, from?: string): Promise<number>
  /** Every tax setting (store, countries, products), by scope and subject. */
  taxSettings(): Promise<TaxSettingRow[]>
  /** Store a tax setting, replacing the one of the same scope and subject. */
  saveTaxSetting(row: TaxSettingRow, at: string): Promise<void>
  /** Drop a tax setting; false when none was stored. */
  deleteTaxSetting(scope: TaxSettingRow['scope'], subject: string): Promise<boolean>
}
