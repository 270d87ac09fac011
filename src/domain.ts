/**
 * The plain types the engine and the storage port (src/store/port.ts) exchange: locks and
 * their quotes, product rows, users, FX rates, localization factors, gateway rules, audience
 * rules and the catalog records products are made of. Type declarations only: this module
 * imports nothing and holds no code, so the port can depend on it without depending on the
 * engine (docs/architecture.md, "What may import what"; test/architecture.test.ts checks it).
 * The engine modules that work with a type re-export it from here, and where a zod schema
 * or a constant list describes the same values, its module checks at compile time that both
 * agree (src/schemas/catalog.ts, src/fx/sources.ts, src/money/gateway-tables.ts,
 * src/segments/rules.ts).
 */

// ---------------------------------------------------------------- catalog

/** A product's billing interval (one_time: no recurrence). */
export type ProductInterval = 'day' | 'month' | 'one_time' | 'week' | 'year'

/** A recurring interval (a trial's, a gateway_a_with_interval integration's). */
export type RecurringInterval = 'day' | 'month' | 'week' | 'year'

/** The product columns other parts of the engine need (pricing, revenue, experiments). */
export type ProductRow = {
  api_id: string
  base_px_minor: number
  baseline_id: null | number
  id: number
  interval: ProductInterval
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
  name: string
}

/** An integration of a product with a gateway, discriminated by `type` (the spec's integration objects). */
export type IntegrationInput =
  | {currency: string; gateway_d_plan_id: string; type: 'gateway_d'}
  | {gateway_a_product_id: string; interval: RecurringInterval; interval_count: number; type: 'gateway_a_with_interval'}
  | {gateway_a_product_id: string; type: 'gateway_a'}
  | {gateway_c_plan_id: string; type: 'gateway_c'}

/** A free trial offered with a product: `interval_count` x `interval` (e.g. 14 x day). */
export type Trial = {interval: RecurringInterval; interval_count: number}

/** A feature group as a stored product shows it. */
export type FeatureGroupOutput = {api_id: string; description: string; id: number; name: string}

/** A feature of a stored product. Boolean features carry no unit and value 0. */
export type FeatureOutput = {
  api_id: string
  description: string
  feature_group: FeatureGroupOutput | null
  group_id: null | number
  name: string
  status: 'active' | 'inactive'
  type: 'boolean' | 'numeric'
  unit: null | string
  value: number
}

/** The gateway a coupon's external link belongs to. */
export type CouponSource = 'GATEWAY_A' | 'GATEWAY_C' | 'GATEWAY_D'

/** A user as `user get` shows it. */
export type User = {country: null | string; created_at: string; updated_at: string; user_id: string}

// ---------------------------------------------------------------- locks and quotes

/** What a lock keeps per product: enough to answer later calls without recomputing. */
export type LockedProduct = {
  /** Struck-through comparison price (baseline product, or the control price in an experiment). */
  baseline_minor: null | number
  /** Price without experiment and coupon: the "default price" of reference_interval_price. */
  control_minor: number
  currency: string
  interval: ProductInterval
  interval_count: number
  /** Which layer set the price: base, country_price, audience, experiment. */
  layer: string
  price_minor: number
  /** Coupon applied when the quote was made, kept with the lock. */
  coupon?: LockedCoupon
  /**
   * The tax the price was shown with (docs/tax.md): its behaviour and rate in basis points,
   * kept so a lock answers with the breakdown the user saw after a rate change. Absent in
   * locks made before tax in prices: those read as exclusive at today's rate.
   */
  tax?: LockedTax
  /**
   * The amounts before the first `override_currency` relabelling, in their currency: every
   * later relabelling starts from them, so a chain never compounds (9.99 EUR -> JPY -> EUR
   * is 9.99 EUR again). Absent when the product was never relabelled.
   */
  relabelled_from?: RelabelledFrom
}

/** The tax a locked product was shown with: `price_minor` is gross under `inclusive`, net under `exclusive`. */
export type LockedTax = {behavior: TaxBehavior; bp: number}

/** What a product's amounts were before it was relabelled (LockedProduct.relabelled_from). */
export type RelabelledFrom = {
  baseline_minor: null | number
  /** The price after the coupon, when the product had one. */
  coupon_minor?: number
  control_minor: number
  currency: string
  price_minor: number
}

/**
 * The coupon a lock's product got, with everything its coupon block needs: a reused lock
 * renders it even after the coupon or campaign is changed or deleted.
 */
export type LockedCoupon = {
  api_id: string
  /** Campaign that applied it, or null when the request's coupons mapping named it. */
  campaign: null | string
  /** Upper-case gateway sources of its external coupons (GATEWAY_A, ...). */
  coupon_source: string[]
  /** Currency of a fixed-amount coupon; null for a percentage. */
  currency_code: null | string
  /** Id of the coupon in its first external source, and the store's id of that link. */
  external_coupon_id: null | string
  /** The store's coupon id. */
  id: number
  /** Price after the coupon, minor units of the product's currency; never below zero. */
  price_minor: number
  service_external_coupon_id: null | number
  source: 'campaign' | 'request'
  type: 'fixed_amount' | 'percentage'
  /** Last second (UNIX) the coupon may be used: the earlier end of the coupon and campaign windows. */
  valid_till_s: null | number
  /** Percent, or the fixed amount in `currency_code` units. */
  value: number
}

export type LockQuote = {
  audience: {api_id: string; name: string}
  /** How the country and currency were found, for `price explain` on a reused lock. */
  country_source: string
  currency_source: string
  experiment_type: 'packaging' | 'price' | null
  matching_audiences: {api_id: string; name: string}[]
  products: Record<string, LockedProduct>
  products_to_select: string[]
}

/** The quote a user (or an anonymous visitor, by IP) got, kept so later calls answer the same. */
export type Lock = {
  anonymous: boolean
  arm_id: number | string
  country: string
  created_at: string
  currency: string
  experiment_id: number
  ip: null | string
  lock_key: string
  package_id: null | string
  quote: LockQuote
  updated_at: string
  user_id: null | string
}

// ---------------------------------------------------------------- FX, localization, gateways

/** One stored FX rate: units of `currency` per USD on `date` (YYYY-MM-DD), with where it came from. */
export type FxRate = {currency: string; date: string; rate: number; source: string}

/** What kind of source an FX rate has: the bundled snapshot, set by hand, or imported. */
export type FxKind = 'import' | 'manual' | 'snapshot'

/** Which FX rates a command means: by kind, or by source label. */
export type SourceFilter = {kind: FxKind} | {label: string}

/** A country's price level relative to the US (1 = US prices), with its source and year. */
export type LocalizationFactor = {country: string; factor: number; source: string; year: null | number}

/** A payment gateway's id. */
export type GatewayId = 'gateway_a' | 'gateway_b' | 'gateway_c' | 'gateway_d'

/** How a gateway takes amounts in one currency. Amounts are in the gateway's units (10^-exponent). */
export type GatewayRule = {
  /** Amounts must be whole multiples of this many gateway units (Stripe ISK: 100, KWD: 10). */
  divisible_by: number
  /** Decimal places of the gateway's amounts (Stripe JPY 0, ISK 2, KWD 3). */
  exponent: number
  /** Largest amount it charges, in its units; null when it publishes none. */
  max_amount: null | number
  /** Smallest amount it charges, in its units; null when it publishes none. */
  min_amount: null | number
}

/** A stored override of a gateway's rule for one currency (`gateways rules set`). */
export type RuleOverride = Partial<GatewayRule> & {currency: string; gateway: GatewayId}

// ---------------------------------------------------------------- audience rules

export type FeatureOperator = 'eq' | 'exists' | 'gt' | 'gte' | 'in' | 'lt' | 'lte' | 'neq'
export type CountryOperator = 'in' | 'not_in'

export type Literal = boolean | number | string

export type CountryRule = {operator: CountryOperator; type: 'country'; values: string[]}
export type FeatureRule =
  | {feature: string; operator: 'eq' | 'neq'; type: 'feature'; value: Literal}
  | {feature: string; operator: 'exists'; type: 'feature'}
  | {feature: string; operator: 'gt' | 'gte' | 'lt' | 'lte'; type: 'feature'; value: number}
  | {feature: string; operator: 'in'; type: 'feature'; values: Literal[]}
/** An audience rule: a country test or a feature test (src/segments/rules.ts parses and evaluates them). */
export type Rule = CountryRule | FeatureRule

// ---------------------------------------------------------------- checks

/** True when A and B are the same type. */
export type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/**
 * Compiles only for `true`: a module that derives a type from a constant list or a zod schema
 * declares `type _Checked = Expect<SameType<Derived, DomainType>>`, so the two cannot drift apart.
 */
export type Expect<T extends true> = T

// ---------------------------------------------------------------- tax

/** Whether a shown price includes tax (`inclusive`, gross) or has it added at checkout (`exclusive`, net). */
export type TaxBehavior = 'exclusive' | 'inclusive'

/** An operator's tax rate: from `from` (YYYY-MM-DD) on, for a country and a category ('' = the standard rate), in basis points. */
export type OperatorTaxRate = {bp: number; category: string; country: string; from: string; source: string}

/** A stored tax setting: the behaviour of the store (subject ''), a country or a product, and a product's tax category. */
export type TaxSettingRow = {behavior: null | TaxBehavior; category: null | string; scope: 'country' | 'product' | 'store'; subject: string}
