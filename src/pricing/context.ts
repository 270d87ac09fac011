import {isoDay, nowSeconds} from '../clock.js'
import {convertMinor} from '../currency.js'
import {describeRate, type FxRate, rateContext, ratesOn, rateText} from '../fx/rates.js'
import type {GatewayId} from '../domain.js'
import type {StorePort} from '../store/port.js'
import {DEFAULT_COUNTRY_SETTING, FALLBACK_COUNTRY} from '../settings.js'
import {Coupons} from './coupons.js'
import {Experiments} from './experiments.js'
import * as display from './display.js'
import {type GatewayRule, gatewayRule, type RuleOverride} from '../money/gateway-tables.js'
import {type Constraint, type Move, representablePrice} from '../money/representable.js'
import {GATEWAYS} from '../schemas/no-zod.js'
import {gatewayConstraint, type GatewayPrice, gatewayPrice, type GatewaySettings, gatewaySettingsMap, isGateway, ruleOverrides} from './gateways.js'
import {InvalidInputError} from '../errors.js'
import {type LockedProduct, QuoteChunk} from './locks.js'
import type {ProductPrice} from '../schemas/price.js'
import {applyRounding, type RuleChoice, ruleResolver} from './rounding.js'
import {Segments} from './segments.js'
import type {PricedProduct, PricingServices} from './types.js'
import {ValueCache} from './value-cache.js'
import {NO_TAX_SETTINGS, type OperatorTaxRate, productCategories, rateFor, resolveBehavior, type TaxBehavior, type TaxSettings, taxSettingsOf} from '../tax/tax.js'

/** The tax that applies to a product in a country today (docs/tax.md), with why. */
export type TaxChoice = {behavior: TaxBehavior; behaviorSource: string; bp: number; category: string; rateFrom: null | string; rateSource: string}

/**
 * A map that forgets everything once it holds `limit` entries: batches meet the same few
 * prices over and over, and memory must stay bounded however long the batch is.
 */
export class BoundedCache<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super()
  }

  override set(key: K, value: V): this {
    if (this.size >= this.limit) this.clear()
    return super.set(key, value)
  }
}

export type {PricedProduct} from './types.js'

/**
 * Everything one process needs to price requests, read from the store before the first
 * request (PricingContext.open: the catalog and its configuration, audiences, packages,
 * coupons, campaigns and experiments, today's rates) so that the calculation itself reads
 * memory only; what a chunk of requests adds (its locks, users, exposures and the bandit's
 * current posteriors) is read when the chunk begins (QuoteChunk). A batch of 100,000 requests does not re-read the catalog per request, and
 * an asynchronous store needs one await before a chunk, none inside the calculation.
 * The catalog is assumed not to change while a context lives (one command run; the server
 * builds a new context when the catalog version moves).
 */
export class PricingContext implements PricingServices {
  readonly store: StorePort
  readonly geoipDb?: string
  private products = new Map<string, PricedProduct>()
  private productsById = new Map<number, PricedProduct>()
  private rates = new Map<string, FxRate>()
  /** UTC day number the rates were read for. */
  private ratesDay = 0
  private _defaultCountry = FALLBACK_COUNTRY
  private rules = new Map<string, RuleChoice>()
  private ruleOfCurrency: (currency: string) => RuleChoice = () => {
    throw new Error('PricingContext.open() loads the rounding rules before a price')
  }
  private factors = new Map<string, number>()
  private gateways = {} as Record<GatewayId, GatewaySettings>
  private overrides = new Map<string, RuleOverride>()
  private geo?: typeof import('../geo/geoip.js')
  private taxRates: OperatorTaxRate[] = []
  private taxSettings: TaxSettings = NO_TAX_SETTINGS
  private taxCategories = new Map<string, string>()
  private taxChoices = new Map<string, TaxChoice>()
  readonly segments: Segments
  readonly coupons: Coupons
  readonly experiments: Experiments
  /** Per-product quotes and rendered prices already computed by this context (see price.ts). */
  readonly quotes = new BoundedCache<string, LockedProduct>(20_000)
  readonly rendered = new BoundedCache<string, ProductPrice>(20_000)
  /** The same, found without a key string (value-cache.ts); the string-keyed caches take what these have no room for. */
  readonly quoteValues = new ValueCache<LockedProduct>()
  readonly renderedValues = new ValueCache<ProductPrice>()
  /** The locks and user countries of the chunk of requests being priced (a single price: a chunk of one). */
  readonly chunk: QuoteChunk

  /** A context with everything read that a price needs (see the class). */
  static async open(store: StorePort, options: {geoipDb?: string} = {}): Promise<PricingContext> {
    const ctx = new PricingContext(store, options)
    await ctx.load()
    return ctx
  }

  private constructor(store: StorePort, options: {geoipDb?: string}) {
    this.store = store
    this.geoipDb = options.geoipDb
    this.chunk = new QuoteChunk(store.pricing, store.experiments, Boolean(store.readOnly))
    // The layers read rates, rounding rules and display helpers through this context.
    this.segments = new Segments(this)
    this.coupons = new Coupons(this)
    this.experiments = new Experiments(store, this, this.chunk)
  }

  /**
   * Read what pricing needs, a query or two per table: the whole catalog (a single price
   * meets one product, but reading a few hundred rows costs less than a round trip per
   * product and rule on a networked store), every factor, rule, gateway setting and
   * override, today's rates, the default country, and what the layers read.
   */
  private async load(): Promise<void> {
    const store = this.store
    for (const row of await store.pricing.catalogSnapshot()) {
      const p: PricedProduct = {...row, countryPrices: new Map(row.countryPrices.map((c) => [c.country, {amountMinor: c.amountMinor, currency: c.currency}]))}
      this.products.set(row.api_id, p)
      this.productsById.set(p.id, p)
    }
    for (const f of await store.config.localizationFactors()) this.factors.set(f.country, f.factor)
    this.ruleOfCurrency = await ruleResolver(store)
    this.gateways = await gatewaySettingsMap(store)
    this.overrides = await ruleOverrides(store)
    this.ratesDay = Math.floor(nowSeconds() / 86_400)
    this.rates = await ratesOn(store, undefined, isoDay(this.ratesDay * 86_400))
    this._defaultCountry = await store.config.setting(DEFAULT_COUNTRY_SETTING) ?? FALLBACK_COUNTRY
    const taxRows = await store.config.taxSettings()
    this.taxSettings = taxSettingsOf(taxRows)
    this.taxCategories = productCategories(taxRows)
    this.taxRates = await store.config.taxRates()
    this.segments.load(await store.segments.listAudiences(), await store.segments.listPackages())
    await this.coupons.load(store)
    await this.experiments.load()
  }

  /** Load what a request needs asynchronously: the geolocation module, only when it carries an IP. */
  async ready(input: unknown): Promise<void> {
    if (this.needsReady(input)) this.geo = await import('../geo/geoip.js')
  }

  /** Whether ready() has loaded what a request with an IP needs (then no request needs it). */
  get geoReady(): boolean {
    return this.geo !== undefined
  }

  /** Whether ready() has anything to load for this request (a batch awaits only then). */
  needsReady(input: unknown): boolean {
    if (this.geo) return false
    const r = input as null | {get_ip_from_request?: unknown; ip?: unknown}
    return Boolean(r && typeof r === 'object' && (r.ip || r.get_ip_from_request))
  }

  /** Country of an IP; the database itself is opened on the first lookup. */
  geolocate(ip: string): {country: null | string; reason: string; source: string} {
    if (!this.geo) throw new Error('PricingContext.ready() must run before an IP is resolved')
    return this.geo.resolveCountry(ip, {dbPath: this.geoipDb})
  }

  /**
   * The tax of a product in a country today: its behaviour (country > US/CA > product >
   * store) and the rate of its category (operator rates dated today or earlier > the
   * bundled table), remembered per country and product for this context.
   */
  tax(country: string, product: string): TaxChoice {
    const key = `${country}|${product}`
    let choice = this.taxChoices.get(key)
    if (choice === undefined) {
      const b = resolveBehavior(this.taxSettings, country, product)
      const r = rateFor(this.taxRates, country, this.taxCategories.get(product) ?? 'standard', isoDay(this.ratesDay * 86_400))
      choice = {behavior: b.behavior, behaviorSource: b.source, bp: r.bp, category: r.category, rateFrom: r.from, rateSource: r.source}
      if (this.taxChoices.size < 20_000) this.taxChoices.set(key, choice)
    }
    return choice
  }

  localizationFactor(country: string): number | undefined {
    return this.factors.get(country)
  }

  /** Apply the currency's rounding rule (stored, else built-in default). */
  round(amountMinor: number, currency: string): {minor: number; rule: string; source: string} {
    let r = this.rules.get(currency)
    if (!r) {
      r = this.ruleOfCurrency(currency)
      this.rules.set(currency, r)
    }
    return {minor: applyRounding(r.rule, amountMinor, currency), rule: r.text, source: r.source}
  }

  private gatewayPrices = new BoundedCache<string, GatewayPrice>(20_000)

  /** A gateway's settings (stored, else the default); an unknown gateway id is an input error. */
  private settingsOf(gateway: string): GatewaySettings {
    if (!isGateway(gateway)) throw new InvalidInputError(`unknown gateway ${JSON.stringify(gateway)} (expected one of ${GATEWAYS.join(', ')})`)
    return this.gateways[gateway]
  }

  /** A gateway's rule for a currency: the store's override, else its shipped table. */
  ruleOf(gateway: string, currency: string): GatewayRule {
    const key = `${gateway}|${currency}`
    let rule = this.resolvedRules.get(key)
    if (rule === undefined) {
      const g = this.settingsOf(gateway).gateway
      rule = gatewayRule(g, currency, this.overrides.get(`${g}|${currency}`))
      this.resolvedRules.set(key, rule)
    }
    return rule
  }

  /**
   * ruleOf and chargeConstraints by their arguments: every product of every quote asks them
   * again (a price-impact snapshot prices each product in ~150 countries), and their
   * inputs (settings, overrides) are read once per context. Read-only values: callers copy.
   */
  private resolvedRules = new Map<string, GatewayRule>()
  private charged = new Map<string, Constraint[]>()

  /** The gateway object of a locked price: that price made chargeable for the gateway (gateways.ts gatewayPrice). */
  gatewayPrice(gateway: string, priceMinor: number, currency: string, country: string, plans?: readonly string[]): GatewayPrice {
    const key = `${gateway}|${priceMinor}|${currency}|${country}|${plans?.join(',') ?? ''}`
    const known = this.gatewayPrices.get(key)
    if (known) return known
    const settings = this.settingsOf(gateway)
    const result = gatewayPrice({country, currency, format: (m, c) => this.formatCached(m, c, country), plans, priceMinor, rateOf: (c: string) => this.rate(c)?.rate, ruleOf: (c) => this.ruleOf(gateway, c), settings})
    this.gatewayPrices.set(key, result)
    return result
  }

  /** Why a gateway's object moves a locked price (price explain): representablePrice's moves for that gateway alone. */
  gatewayMoves(gateway: string, minor: number, currency: string): Move[] {
    const g = this.settingsOf(gateway).gateway
    return representablePrice(minor, currency, [{gateway: g, rule: this.ruleOf(g, currency)}], 'nearest', false).moves
  }

  /** What the gateways that charge `currency` themselves ask of its price points (fallback gateways ask nothing). */
  constraints(currency: string, gateways: readonly string[]): Constraint[] {
    const out: Constraint[] = []
    for (const g of gateways) {
      if (!isGateway(g) || out.some((c) => c.gateway === g)) continue
      const c = gatewayConstraint(this.settingsOf(g), currency, (cur) => this.ruleOf(g, cur))
      if (c) out.push(c)
    }
    return out
  }

  /**
   * What a product's price points must satisfy, whatever gateways a request names (docs/money.md,
   * "The displayed price is the charged price"): the rules of the gateways it is linked to
   * (its integrations), bounds included; a product linked to none may be charged through any
   * gateway, so every gateway's exactness applies, not their bounds. `exact` drops the
   * bounds in any case (a relabelled price is never raised to a minimum).
   */
  chargeConstraints(currency: string, linked: readonly string[], exact = false): Constraint[] {
    const key = `${currency}|${exact ? 1 : 0}|${linked.join(',')}`
    let out = this.charged.get(key)
    if (out === undefined) {
      const all = linked.length === 0
      const constraints = this.constraints(currency, all ? GATEWAYS : linked)
      out = all || exact ? constraints.map((c) => ({gateway: c.gateway, rule: {divisible_by: c.rule.divisible_by, exponent: c.rule.exponent, max_amount: null, min_amount: null}})) : constraints
      this.charged.set(key, out)
    }
    return out
  }

  /**
   * The nearest price point the display and a product's gateways (`linked`, see
   * chargeConstraints) represent exactly, and what moved it.
   */
  representable(minor: number, currency: string, linked: readonly string[], direction: 'down' | 'nearest' | 'up' = 'nearest', exact = false): {minor: number; moves: Move[]} {
    return representablePrice(minor, currency, this.chargeConstraints(currency, linked, exact), direction)
  }

  /** Batches format the same few prices over and over: remember them (bounded). */
  private formatted = new BoundedCache<string, string>(20_000)
  private formatCached(minor: number, currency: string, country: string): string {
    const key = `${minor}|${currency}|${country}`
    let text = this.formatted.get(key)
    if (text === undefined) {
      text = display.formatMoney(minor, currency, country)
      this.formatted.set(key, text)
    }
    return text
  }

  toUsdMinor(minor: number, currency: string): number {
    if (currency === 'USD') return minor
    return convertMinor(minor, currency, this.rate(currency)!.rate, 'USD', 1)
  }

  readonly display = {
    discount: (priceMinor: number, baselineMinor: number) => display.discountToBaseline(priceMinor, baselineMinor),
    format: (minor: number, currency: string, country: string) => this.formatCached(minor, currency, country),
    locale: (country: string) => display.localeForCountry(country),
    referenceInterval: (minor: number, interval: string, count: number) => display.referenceIntervalMinor(minor, interval, count),
    strike: (baselineText: string, priceText: string) => display.priceWithBaselineStrike(baselineText, priceText),
    symbol: (currency: string, country: string) => display.currencySymbol(currency, country),
  }

  product(apiId: string): PricedProduct | undefined {
    return this.products.get(apiId)
  }

  productById(id: number): PricedProduct | undefined {
    return this.productsById.get(id)
  }

  /**
   * The rate (units per USD) a currency is priced at today: operator rates before the
   * bundled snapshot, none dated after today (src/fx/rates.ts).
   */
  rate(currency: string): FxRate | undefined {
    return this.rates.get(currency)
  }

  /**
   * Whether the rates were read on an earlier day than today: a long-lived context (the
   * server's) is then replaced, so a rate scheduled for today is used from today on.
   */
  ratesStale(): boolean {
    return this.ratesDay !== Math.floor(nowSeconds() / 86_400)
  }

  /** For `price explain`: a currency's rate today with its date and source, as a conversion note names it. */
  describeRate(currency: string): string {
    const r = this.rate(currency)
    return r ? rateText(r) : `no FX rate for ${currency}`
  }

  /** What noteRate says of each rate besides its value (rateContext), read by loadRateNotes. */
  private rateNotes?: Map<string, string[]>

  /**
   * For `price explain`, before its chunk begins: what noteRate says of every rate (which
   * rate it outranks, what is scheduled after it), read once, so the calculation reads memory only.
   */
  async loadRateNotes(): Promise<void> {
    if (this.rateNotes) return
    const notes = new Map<string, string[]>()
    for (const [currency, r] of this.rates) notes.set(currency, await rateContext(this.store, r))
    this.rateNotes = notes
  }

  /**
   * For `price explain`: one "fx" step per converted currency naming the rate used (value,
   * date, source and whether it is the bundled snapshot or the operator's), what it
   * outranks and what is scheduled after it.
   */
  noteRate(trace: undefined | {detail: string; outcome: 'applied' | 'chose' | 'info' | 'skipped'; step: string}[], currency: string): void {
    if (!trace || currency === 'USD') return
    const r = this.rate(currency)
    if (!r || trace.some((s) => s.step === `fx ${currency}`)) return
    const more = this.rateNotes?.get(currency)
    if (more === undefined) throw new Error(`internal error: price explain needs the notes on the ${currency} rate, read before its chunk (loadRateNotes)`)
    trace.push({detail: `${describeRate(r)}${more.map((m) => `; ${m}`).join('')}`, outcome: 'chose', step: `fx ${currency}`})
  }

  get defaultCountry(): string {
    return this._defaultCountry
  }
}
