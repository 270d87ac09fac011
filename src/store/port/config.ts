import type {FxRate} from '../../fx/rates.js'
import type {RuleOverride} from '../../money/gateway-tables.js'

/** A gateway's stored settings, as written (accepted currencies: '*' or a JSON array). */
export type StoredGatewaySettings = {accepted_currencies: string; amount_format: 'decimal' | 'minor'; fallback_currency: string; gateway: string}

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
  ratesOn(day: string, today: string): FxRate[]
  /** The same rule for one currency; undefined when it has none usable. */
  rateOn(currency: string, day: string, today: string): FxRate | undefined
  /** The latest bundled-snapshot rate of a currency. */
  latestSnapshotRate(currency: string): FxRate | undefined
  /** The earliest operator (non-snapshot) rate of a currency dated after `day`. */
  nextOperatorRate(currency: string, day: string): FxRate | undefined

  /** The localization factor of a country, undefined when none is on file. */
  localizationFactor(country: string): number | undefined
  /** The stored rounding rule text of a currency, undefined when the default applies. */
  roundingRule(currency: string): string | undefined
  /** Every stored rounding rule, sorted by currency. */
  roundingRules(): {currency: string; rule: string}[]
  /** Every gateway's stored settings (gateways without are left out). */
  gatewaySettings(): StoredGatewaySettings[]
  /** Every stored gateway currency-rule override. */
  gatewayRuleOverrides(): RuleOverride[]
  /** Store a currency's rounding rule (canonical text) with when it was set. */
  saveRoundingRule(currency: string, rule: string, at: string): void
  /** Drop a currency's stored rounding rule; false when none was stored. */
  deleteRoundingRule(currency: string): boolean
  /** Store a gateway's settings (replacing what was stored). */
  saveGatewaySettings(settings: StoredGatewaySettings): void
  /** Drop a gateway's stored settings; false when none were stored. */
  deleteGatewaySettings(gateway: string): boolean
  /** Store a gateway currency-rule override (replacing what was stored). */
  saveGatewayRuleOverride(rule: {currency: string; divisible_by: number; exponent: number; gateway: string; max_amount: null | number; min_amount: null | number}, at: string): void
  /** Drop a gateway currency-rule override; false when none was stored. */
  deleteGatewayRuleOverride(gateway: string, currency: string): boolean
  /** A store-wide setting, undefined when unset. */
  setting(key: string): string | undefined
}
