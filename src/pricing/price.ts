import {nowIso} from '../clock.js'
import {convertMinor, countryCurrency, fromMinor, minorDigits as minorDigitsOf, mulDivHalfUp, scaleMinor} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import type {PriceRequest, PriceResult, ProductPrice} from '../schemas/price.js'
import {withinBounds} from '../experiments/bounds.js'
import {BoundedCache, type PricingContext} from './context.js'
import {ValueCache} from './value-cache.js'
import type {ChunkOptions, Lock, LockedProduct, LockedTax, LockQuote, RelabelledFrom} from './locks.js'
import {fastPriceRequest, validatePriceRequest} from './request.js'
import {BP_PER_UNIT, bpToPercent, grossOfNet, splitShown, taxLabel, taxWords} from '../tax/tax.js'
import type {ExplainStep, PricedProduct, Trace} from './types.js'

export type {ExplainStep, Trace} from './types.js'

export type PriceOptions = {
  /** The address of the HTTP request, for get_ip_from_request (the server sets it). */
  requestIp?: string
  /** Collect explain steps. */
  trace?: ExplainStep[]
  /** Validate and compute but write nothing (price explain --dry-run). */
  dryRun?: boolean
  /**
   * Answer only when the request writes nothing (a locked user asking for what the lock
   * holds); otherwise throw NEEDS_WRITE before computing anything, so the caller can take
   * the write lock and run it again. The server answers locked users this way without
   * waiting for another process's write lock.
   */
  readOnly?: boolean
  /**
   * Told when a lock won over a country or currency the request asked for (without
   * override / override_currency): the quote keeps the lock's. Human output says so; the
   * result itself stays the spec's shape. Unset (batch, server): not even compared.
   */
  onLockWins?: (conflict: LockConflict) => void
  /** Sees the computed lock before it is rendered (price preview reads each product's layer). */
  onQuote?: (lock: Lock) => void
  /** Sees a lock that answers the request as stored: reused, nothing added or changed, nothing written (priceLine). */
  onReuse?: (lock: Lock) => void
}

/** A country or currency the request asked for that the lock overruled. */
export type LockConflict = {
  /** When the lock was made. */
  created_at: string
  /** What the request asked for, where it differs from the lock. */
  asked: {country?: string; currency?: string}
  /** The lock's country and currency (what the quote keeps). */
  country: string
  currency: string
  /** User id, or the IP of an anonymous visitor. */
  lock_key: string
}

/** Thrown under `readOnly` when the request must write (a new lock, or a change to one). */
export const NEEDS_WRITE: Error = new Error('this price request writes a lock: run it in a write transaction')

const DEFAULT_AUDIENCE = {api_id: 'default', name: 'default'}

function note(trace: Trace, step: string, outcome: ExplainStep['outcome'], detail: string): void {
  trace?.push({detail, outcome, step})
}

/** Report (onLockWins, explain) a country or currency of the request that the lock overrules. */
function lockWins(lock: Lock, req: {country?: string; currency?: string; override_currency?: boolean}, options: PriceOptions, trace: Trace): void {
  const asked: LockConflict['asked'] = {}
  if (req.country && req.country !== lock.country) asked.country = req.country
  if (req.currency && !req.override_currency && req.currency !== lock.currency) asked.currency = req.currency
  if (asked.country === undefined && asked.currency === undefined) return
  const what = [asked.country && `country ${asked.country}`, asked.currency && `currency ${asked.currency}`].filter(Boolean).join(' and ')
  note(trace, 'lock', 'skipped', `${what} not applied: the lock holds ${lock.country} (${lock.currency}) since ${lock.created_at} (pass --override to recompute)`)
  options.onLockWins?.({asked, country: lock.country, created_at: lock.created_at, currency: lock.currency, lock_key: lock.lock_key})
}

/**
 * Calculate (or return the locked) price for one request: DESIGN.md "The price
 * calculation", steps 1-9. Validates everything before it writes the lock.
 */
export async function calculatePrice(ctx: PricingContext, input: unknown, options: PriceOptions = {}): Promise<PriceResult> {
  await ctx.ready(input)
  if (options.dryRun) return await priceRequest(ctx, input, options)
  // One write transaction taken before the lock is read (BEGIN IMMEDIATE, like a batch):
  // two processes pricing the same new user cannot both make a quote, a deferred read
  // never has to upgrade (SQLITE_BUSY), and lock, user country and exposure land together.
  // A read-only store (read-only media): a locked user's quote is read, a new one fails
  // with SQLITE_READONLY, reported as "the store is read-only".
  return await ctx.store.transaction(async () => await priceRequest(ctx, input, options), {write: true})
}

/**
 * One request priced in the chunk a batch opened (ctx.chunk): synchronous, so a batch pays
 * no promise per request; its locks come from and go to that chunk (read when it began,
 * written at its flush). `ctx.ready(input)` must have run for requests that carry an IP.
 */
export function priceInChunk(ctx: PricingContext, input: unknown, options: PriceOptions = {}): PriceResult {
  if (!ctx.chunk.open) throw new Error('priceInChunk: no chunk is open (priceRequest prices a request as a chunk of its own)')
  return calculate(ctx, input, options)
}

/**
 * One request as a chunk of its own: what it reads is read before the calculation, what it
 * writes is written before this returns. Requests of one context take turns.
 * `ctx.ready(input)` must have run for requests that carry an IP.
 */
export async function priceRequest(ctx: PricingContext, input: unknown, options: PriceOptions = {}): Promise<PriceResult> {
  const before = options.trace ? async () => await ctx.loadRateNotes() : undefined
  const chunk = {lockless: locklessDryRun(input, options), requestIp: options.requestIp, reuseOnly: options.readOnly && !options.dryRun}
  return (await inChunk(ctx, [input], chunk, () => calculate(ctx, input, options), before))!
}

/**
 * Requests priced as one chunk (the server's group of requests that write): what they read is
 * read once for all of them when the chunk begins, what they write is written once at its
 * flush, so a group of new users costs the round trips of one. When one of them throws,
 * nothing of the chunk is written and the answer is undefined: the caller prices them one at
 * a time, so that each gets its own outcome (a request that throws after it saved its lock
 * must not leave it). A user named twice gets the lock the first request made.
 * `ctx.ready(input)` must have run for requests that carry an IP.
 */
export async function priceRequests(ctx: PricingContext, inputs: readonly unknown[], options: PriceOptions = {}): Promise<PriceResult[] | undefined> {
  return await inChunk(ctx, inputs, {requestIp: options.requestIp}, () => {
    const results: PriceResult[] = []
    for (const input of inputs) {
      try {
        results.push(calculate(ctx, input, options))
      } catch {
        return undefined
      }
    }
    return results
  })
}

/**
 * `price` in the context's chunk, begun with `inputs`: one caller at a time (another waits
 * while this one's reads and writes are awaited), everything the calculation reads read when
 * the chunk begins (docs/pricing.md "Storage"), and what it wrote written before this returns
 * (nothing when `price` answers undefined). `before` runs in the turn, before the reads.
 */
async function inChunk<T>(ctx: PricingContext, inputs: readonly unknown[], options: ChunkOptions, price: () => T | undefined, before?: () => Promise<void>): Promise<T | undefined> {
  const chunk = ctx.chunk
  const turn = chunk.claim()
  if (turn) await turn
  try {
    if (before) await before()
    await chunk.begin(inputs, options)
    try {
      const result = price()
      if (result !== undefined && chunk.dirty) await chunk.flush()
      return result
    } finally {
      chunk.close()
    }
  } finally {
    chunk.release()
  }
}

/** A dry run that recomputes for a given country without an IP (calculate, step 1): its lock is never read. */
function locklessDryRun(input: unknown, options: PriceOptions): boolean {
  if (!options.dryRun || options.trace || input === null || typeof input !== 'object') return false
  const r = input as {country?: unknown; get_ip_from_request?: unknown; ip?: unknown; override?: unknown}
  return r.override === true && typeof r.country === 'string' && r.country !== '' && r.ip === undefined && r.get_ip_from_request !== true
}

function calculate(ctx: PricingContext, input: unknown, options: PriceOptions): PriceResult {
  const req = validatePriceRequest(input)
  const trace = options.trace
  let ip = req.ip
  if (req.get_ip_from_request && !ip) {
    if (!options.requestIp) throw new InvalidInputError('get_ip_from_request: there is no HTTP request here to take the IP from; pass --ip ADDRESS')
    ip = options.requestIp
  }
  const lockKey = req.user_id ?? ip!
  for (const id of req.products ?? []) {
    if (!ctx.product(id)) throw new NotFoundError(`unknown product "${id}" (see "pricectl products list")`)
  }
  const integrations = req.integrations ?? []
  ctx.coupons.prepare(req)

  // 1. Identity and lock. A dry run that recomputes (override) for a given country and no IP
  // never uses the stored lock (it neither supplies the country nor is adopted): not read.
  // A price-impact snapshot quotes so in every country, twice per measured write.
  let lock = req.override && req.country && !ip && options.dryRun && !trace ? undefined : ctx.chunk.lock(lockKey)
  // No lock: a new quote or an adopted anonymous lock, both writes (the chunk read no anonymous lock).
  if (!lock && options.readOnly && !options.dryRun) throw NEEDS_WRITE
  let adopted = false
  if (!lock && req.user_id && ip) {
    const anonymous = ctx.chunk.anonymousLock(ip)
    if (anonymous) {
      lock = {...anonymous, anonymous: false, lock_key: req.user_id, user_id: req.user_id}
      adopted = true
      note(trace, 'lock', 'chose', `adopted the anonymous lock of IP ${ip} for user ${req.user_id}`)
    }
  }

  let changed = adopted
  if (lock && req.override) {
    note(trace, 'lock', 'skipped', `override: recomputing and replacing the lock made ${lock.created_at}`)
  }

  if (lock && !req.override) {
    if (!adopted) note(trace, 'lock', 'chose', `reused the lock of ${lockKey} made ${lock.created_at} (pass --override to recompute)`)
    if (options.onLockWins || trace) lockWins(lock, req, options, trace)
    note(trace, 'country', 'info', `${lock.country} (from the lock; ${lock.quote.country_source})`)
    if (req.override_currency && req.currency !== lock.currency) {
      lock = swapCurrency(ctx, lock, req.currency!, trace)
      changed = true
      note(trace, 'currency', 'applied', `override_currency: ${req.currency} replaces the locked currency, amounts kept`)
    } else {
      note(trace, 'currency', 'info', `${lock.currency} (from the lock; ${lock.quote.currency_source})`)
    }
    if (trace) {
      const m = lock.quote.matching_audiences.map((x) => x.api_id)
      note(trace, 'audience', 'info', `${lock.quote.audience.api_id} (from the lock; matching: ${m.length ? m.join(', ') : 'none'})`)
      if (lock.package_id) note(trace, 'package', 'info', `${lock.package_id} (from the lock)`)
    }
    const wanted = req.products ?? (lock.package_id ? Object.keys(lock.quote.products) : [])
    const fresh = new Set<string>()
    for (const id of wanted) {
      if (lock.quote.products[id]) continue
      // A product the lock lacks is priced under the same country, currency, audience and arm.
      lock.quote.products[id] = quoteProduct(ctx, ctx.product(id)!, lock.country, lock.currency, lock, trace)
      fresh.add(id)
      changed = true
    }
    // Locked coupons stay; a product without one can get one from the request (and, when new, from campaigns).
    if (ctx.coupons.apply(lock, req, trace, {fresh, products: wanted})) changed = true
    if (req.user_id && ip && lock.ip !== ip && !lock.ip) lock.ip = ip
    if (changed && !options.dryRun) {
      if (options.readOnly) throw NEEDS_WRITE
      lock.updated_at = nowIso()
      if (adopted) ctx.chunk.deleteLock(ip!)
      ctx.chunk.saveLock(lock)
      if (adopted) {
        ctx.chunk.saveUserCountry(req.user_id!, lock.country, lock.updated_at)
        // The IP was handed out as a user id and its lock row is gone: keep it resolvable (user get).
        ctx.chunk.saveUserCountry(ip!, lock.country, lock.updated_at)
      }
      // The adopted lock's visitor is now a user who can convert: the exposure follows.
      if (adopted && lock.experiment_id !== 0) ctx.experiments.adoptExposure(lock, ip!)
    }
    if (!changed) options.onReuse?.(lock)
    return render(ctx, lock, req, wanted, integrations, trace)
  }

  if (options.readOnly && !options.dryRun) throw NEEDS_WRITE
  // 2. Country: flag > stored user country > IP > store default. An override recomputes the
  // quote, not the country: the lock it replaces (not an adopted one) stands for a stored country.
  const {country, source: countrySource} = resolveCountry(ctx, req, ip, trace, adopted ? undefined : lock)
  // 3. Currency: flag > product's country price > country's currency > USD.
  const {currency, source: currencySource} = resolveCurrency(ctx, req, country, trace)
  // 4. Audience.
  const {audience, matching} = ctx.segments.audiences(country, req.features ?? {}, trace)
  // 5. Package.
  let products = req.products
  let packageId: null | string = null
  if (!products || products.length === 0) {
    const pkg = ctx.segments.package(req.package_id, country, audience, trace, matching)
    packageId = pkg.api_id
    products = pkg.products
  }

  const now = nowIso()
  lock = {
    anonymous: !req.user_id,
    arm_id: 0,
    country,
    created_at: now,
    currency,
    experiment_id: 0,
    ip: ip ?? null,
    lock_key: lockKey,
    package_id: packageId,
    quote: {
      audience,
      country_source: countrySource,
      currency_source: currencySource,
      experiment_type: null,
      matching_audiences: matching,
      products: {},
      products_to_select: [],
    },
    updated_at: now,
    user_id: req.user_id ?? null,
  }
  // Experiment: a running experiment that targets this request gives the lock an arm.
  const assignment = ctx.experiments.assign(
    {audienceId: audience.api_id, country, lockKey, products, runExperiment: req.run_experiment !== false, userId: req.user_id ?? null},
    trace,
  )
  if (assignment) {
    lock.experiment_id = assignment.experiment_id
    lock.arm_id = assignment.arm_id
    lock.quote.experiment_type = assignment.experiment_type
    lock.quote.products_to_select = assignment.products_to_select
  }
  // 6-7. Price layers and coupons, per product.
  for (const id of products) lock.quote.products[id] = quoteProduct(ctx, ctx.product(id)!, country, currency, lock, trace)
  ctx.coupons.apply(lock, req, trace)
  if (!options.dryRun) {
    ctx.chunk.saveLock(lock)
    if (req.user_id) ctx.chunk.saveUserCountry(req.user_id, country, now)
    if (assignment) ctx.experiments.recordExposure(lock)
  }
  note(trace, 'lock', 'applied', options.dryRun ? 'dry run: no lock written' : `stored a new lock for ${lockKey}`)
  options.onQuote?.(lock)
  return render(ctx, lock, req, products, integrations, trace)
}

function resolveCountry(ctx: PricingContext, req: PriceRequest, ip: string | undefined, trace: Trace, replaced?: Lock): {country: string; source: string} {
  if (req.country) {
    note(trace, 'country', 'chose', `${req.country} from the request`)
    return {country: req.country, source: 'request'}
  }
  const stored = req.user_id ? ctx.chunk.userCountry(req.user_id) : undefined
  if (stored) {
    note(trace, 'country', 'chose', `${stored}, stored for user ${req.user_id}`)
    return {country: stored, source: 'stored user country'}
  }
  if (replaced) {
    // An anonymous visitor's stored country is its lock's (what "user get IP" answers).
    note(trace, 'country', 'chose', `${replaced.country}, stored in the lock of ${replaced.lock_key} that --override replaces`)
    return {country: replaced.country, source: 'stored user country'}
  }
  if (ip) {
    const geo = ctx.geolocate(ip)
    if (geo.country) {
      note(trace, 'country', 'chose', `${geo.country} from IP ${ip} (${geo.source})`)
      return {country: geo.country, source: `IP ${ip}`}
    }
    note(trace, 'country', 'skipped', `IP ${ip} gave no country: ${geo.reason}`)
  }
  note(trace, 'country', 'chose', `${ctx.defaultCountry}, the store's default country`)
  return {country: ctx.defaultCountry, source: 'default country'}
}

function resolveCurrency(ctx: PricingContext, req: PriceRequest, country: string, trace: Trace): {currency: string; source: string} {
  let currency: string
  let source: string
  if (req.currency) {
    currency = req.currency
    source = 'request'
  } else {
    // The first requested product with a price for the country (the products are known: calculate checked them).
    let withCountryPrice: undefined | {currency: string}
    for (const id of req.products ?? NO_PRODUCTS) {
      withCountryPrice = ctx.product(id)!.countryPrices.get(country)
      if (withCountryPrice) break
    }
    const local = countryCurrency(country)
    if (withCountryPrice) {
      currency = withCountryPrice.currency
      source = sourceText('country price for ', country)
    } else if (local) {
      currency = local
      source = sourceText('currency of ', country)
    } else {
      currency = 'USD'
      source = 'fallback'
    }
  }
  if (!ctx.rate(currency)) {
    throw new InvalidInputError(`no FX rate for ${currency}: add one with "pricectl fx set ${currency} RATE" or "pricectl fx import FILE"`)
  }
  note(trace, 'currency', 'chose', `${currency} (${source})`)
  return {currency, source}
}

const NO_PRODUCTS: readonly string[] = []

/**
 * `what` and the country as one text, made once per country: the source is kept in each
 * lock's quote, and packedQuote compares it with the one remembered (a text made per
 * request would be flattened and compared character by character).
 */
function sourceText(what: 'country price for ' | 'currency of ', country: string): string {
  const texts = what === 'currency of ' ? currencyOfTexts : countryPriceTexts
  let text = texts.get(country)
  if (text === undefined) {
    text = what + country
    if (texts.size < 1024) texts.set(country, text)
  }
  return text
}

const countryPriceTexts = new Map<string, string>()
const currencyOfTexts = new Map<string, string>()

/**
 * Layers 6: base price < country price < audience price < experiment arm. The layers are
 * pure for a context, so a quote made once is reused (a copy: the coupon layer adds to it).
 */
function quoteProduct(ctx: PricingContext, product: PricedProduct, country: string, currency: string, lock: Lock, trace: Trace): LockedProduct {
  if (trace) return quoteLayers(ctx, product, country, currency, lock, trace)
  const parts = QUOTE_PARTS
  parts[0] = product.id
  parts[1] = product.baseline_id
  parts[2] = currency
  parts[3] = lock.quote.audience.api_id
  parts[4] = lock.experiment_id
  parts[5] = lock.arm_id
  const quote = ctx.quoteValues.get(country, parts, undefined)
  if (quote) return {...quote}
  return {...quoteMissed(ctx, product, country, currency, lock, [...parts])}
}

/** Reused for each look-up (ValueCache.get only reads it, set copies it): no array per product per request. */
const QUOTE_PARTS: unknown[] = [undefined, undefined, undefined, undefined, undefined, undefined]

/** quoteProduct's quote not found by value: by key string, or made now (`parts` its own: quoteLayers may quote a baseline product). */
function quoteMissed(ctx: PricingContext, product: PricedProduct, country: string, currency: string, lock: Lock, parts: unknown[]): LockedProduct {
  const key = `${product.id}|${product.baseline_id}|${country}|${currency}|${lock.quote.audience.api_id}|${lock.experiment_id}|${lock.arm_id}`
  let quote = ctx.quotes.get(key)
  if (!quote) {
    quote = quoteLayers(ctx, product, country, currency, lock, undefined)
    if (!ctx.quoteValues.set(country, parts, undefined, quote)) ctx.quotes.set(key, quote)
  }
  return quote
}

function quoteLayers(ctx: PricingContext, product: PricedProduct, country: string, currency: string, lock: Lock, trace: Trace): LockedProduct {
  const step = `price ${product.api_id}`
  const rate = ctx.rate(currency)!
  // Base: USD base price -> local currency, times the country's localization factor, then rounded.
  const converted = convertMinor(product.base_px_minor, 'USD', 1, currency, rate.rate)
  const factor = ctx.localizationFactor(country)
  const localized = factor === undefined ? converted : scaleMinor(converted, factor)
  // Tax (docs/tax.md): PPP and FX act on the net price; under `inclusive` the rounding rule
  // rounds the gross (net x (1 + rate)), so a .99 price point is what the customer sees.
  const tax = ctx.tax(country, product.api_id)
  const inclusive = tax.behavior === 'inclusive'
  let price: number
  let layer = 'base'
  // At a rate of 0 the gross is the net: the branches below round it (or keep a USD base price) as they always did.
  if (inclusive && tax.bp > 0) {
    const gross = grossOfNet(localized, tax.bp)
    const rounded = ctx.round(gross, currency)
    price = rounded.minor
    if (currency !== 'USD') ctx.noteRate(trace, currency)
    note(
      trace,
      step,
      'applied',
      `base ${fromMinor(product.base_px_minor, 'USD')} USD` +
        (currency === 'USD' ? '' : ` x ${ctx.describeRate(currency)}`) +
        (factor === undefined ? ', no localization factor' : ` x factor ${factor} for ${country}`) +
        ` = ${fromMinor(localized, currency)} net, x ${1 + tax.bp / BP_PER_UNIT} (${bpToPercent(tax.bp)}% tax, inclusive) = ${fromMinor(gross, currency)} gross, rounded by ${rounded.source} rule "${rounded.rule}" to ${fromMinor(price, currency)}`,
    )
  } else if (currency === 'USD' && factor === undefined) {
    // Nothing was converted or localized: the base price is used as the operator set it.
    price = product.base_px_minor
    note(trace, step, 'applied', `base ${fromMinor(price, 'USD')} USD used as set (no conversion, no localization factor, not rounded)`)
  } else {
    const rounded = ctx.round(localized, currency)
    price = rounded.minor
    ctx.noteRate(trace, currency)
    note(
      trace,
      step,
      'applied',
      `base ${fromMinor(product.base_px_minor, 'USD')} USD x ${ctx.describeRate(currency)}` +
        (factor === undefined ? ', no localization factor' : ` x factor ${factor} for ${country}`) +
        ` = ${fromMinor(localized, currency)}, rounded by ${rounded.source} rule "${rounded.rule}" to ${fromMinor(price, currency)}`,
    )
  }
  const cp = product.countryPrices.get(country)
  if (cp) {
    if (cp.currency === currency) {
      price = cp.amountMinor
      note(trace, step, 'applied', `country price ${fromMinor(cp.amountMinor, currency)} ${currency} for ${country} wins over the base price (used as given, not re-rounded${inclusive ? '; the shown price, tax included' : ''})`)
    } else {
      const cpRate = ctx.rate(cp.currency)
      if (!cpRate) throw new InvalidInputError(`no FX rate for ${cp.currency} (country price of ${product.api_id} for ${country}): add one with "pricectl fx set ${cp.currency} RATE"`)
      const r = ctx.round(convertMinor(cp.amountMinor, cp.currency, cpRate.rate, currency, rate.rate), currency)
      price = r.minor
      ctx.noteRate(trace, cp.currency)
      ctx.noteRate(trace, currency)
      note(
        trace,
        step,
        'applied',
        `country price ${fromMinor(cp.amountMinor, cp.currency)} ${cp.currency} for ${country}, converted to ${currency} as requested at ${ctx.describeRate(cp.currency)} and ${ctx.describeRate(currency)}, rounded to ${fromMinor(price, currency)}`,
      )
    }
    layer = 'country_price'
  } else {
    note(trace, step, 'skipped', `no country price for ${country}`)
  }
  const audiencePrice = ctx.segments.audiencePrice(lock.quote.audience.api_id, product, price, currency, trace)
  if (audiencePrice !== undefined) {
    price = audiencePrice
    layer = 'audience'
  }
  // The displayed price is the charged price: a point the display or a gateway the product
  // is linked to (any gateway's exactness when it names none) cannot represent moves to the
  // nearest one that all can. The gateways a request names do not change the lock: each
  // gateway object is the locked price made chargeable for its gateway (gatewayPrice).
  const charging = product.gateways
  price = fitPrice(ctx, price, currency, charging, step, trace)
  const control = price
  let baseline = baselinePrice(ctx, product, country, currency, lock, trace)
  const armPrice = lock.experiment_id === 0 ? undefined : ctx.experiments.armPrice(lock, product, control, currency, trace, country)
  if (armPrice !== undefined) {
    price = fitPrice(ctx, armPrice, currency, charging, step, trace, (m) => withinBounds(m, currency, rate.rate, product.min_px_minor, product.max_px_minor))
    layer = 'experiment'
    // In an experiment the control price is what the experimental price is compared with.
    baseline = control
  }
  return {baseline_minor: baseline, control_minor: control, currency, interval: product.interval, interval_count: product.interval_count, layer, price_minor: price, tax: {behavior: tax.behavior, bp: tax.bp}}
}

/**
 * Move a price to the nearest point the display and the charging gateways represent
 * exactly; `fits` (an experiment's bounds) keeps the move on the side that stays inside.
 */
function fitPrice(ctx: PricingContext, minor: number, currency: string, gateways: readonly string[], step: string, trace: Trace, fits?: (minor: number) => boolean): number {
  let r = ctx.representable(minor, currency, gateways)
  if (fits && r.minor !== minor && !fits(r.minor)) {
    const other = ctx.representable(minor, currency, gateways, r.minor > minor ? 'down' : 'up')
    if (fits(other.minor)) r = other
  }
  for (const m of r.moves) note(trace, step, 'applied', `${fromMinor(m.from, currency)} ${currency} moved to ${fromMinor(m.to, currency)}: ${m.reason}`)
  return r.minor
}

/** Months in one billing period as a fraction, for comparing a product with its baseline. */
function monthsPerPeriod(interval: string, count: number): [bigint, bigint] {
  const n = BigInt(count)
  if (interval === 'day') return [n * 12n, 365n]
  if (interval === 'week') return [n * 12n, 52n]
  if (interval === 'year') return [n * 12n, 1n]
  return [n, 1n]
}

/**
 * The baseline product's price for the same country and currency, brought to this
 * product's billing period (a yearly plan is compared with 12 months of the monthly one).
 */
function baselinePrice(ctx: PricingContext, product: PricedProduct, country: string, currency: string, lock: Lock, trace: Trace): null | number {
  if (product.baseline_id === null) return null
  const base = ctx.productById(product.baseline_id)
  if (!base || base.id === product.id) return null
  const quoted = quoteProduct(ctx, {...base, baseline_id: null}, country, currency, lock, undefined)
  if (base.interval === 'one_time' || product.interval === 'one_time') return quoted.price_minor
  const [bn, bd] = monthsPerPeriod(base.interval, base.interval_count)
  const [pn, pd] = monthsPerPeriod(product.interval, product.interval_count)
  const scaled = mulDivHalfUp(quoted.price_minor, pn * bd, pd * bn)
  note(trace, `price ${product.api_id}`, 'info', `baseline ${base.api_id}: ${fromMinor(quoted.price_minor, currency)} ${currency} per its period = ${fromMinor(scaled, currency)} per this product's period`)
  return scaled
}

/**
 * override_currency: the same amounts, now in another currency ("without recomputing the
 * amount"): each amount as it was before the first relabelling (relabelled_from), rounded
 * half up to the new currency's minor unit, then to the nearest point the display and the
 * product's gateways represent exactly; never raised to a gateway's minimum (a gateway
 * object is, see gatewayPrice). Relabelling back to the first currency restores the
 * amounts as they were. Refused when a price that is not zero would become zero:
 * relabelling must not make a product free.
 */
function swapCurrency(ctx: PricingContext, lock: Lock, currency: string, trace: Trace): Lock {
  const products: Record<string, LockedProduct> = {}
  for (const [id, p] of Object.entries(lock.quote.products)) {
    const from: RelabelledFrom = p.relabelled_from ?? {
      baseline_minor: p.baseline_minor,
      control_minor: p.control_minor,
      currency: p.currency,
      price_minor: p.price_minor,
      ...(p.coupon ? {coupon_minor: p.coupon.price_minor} : {}),
    }
    const linked = ctx.product(id)?.gateways ?? []
    const relabel = (minor: number, fromCurrency: string, what: string) => {
      if (fromCurrency === currency) return minor
      const shift = minorDigitsOf(currency) - minorDigitsOf(fromCurrency)
      const scaled = shift >= 0 ? minor * 10 ** shift : mulDivHalfUp(minor, 1n, 10n ** BigInt(-shift))
      const moved = ctx.representable(scaled, currency, linked, 'nearest', true).minor
      if (minor > 0 && moved === 0) {
        throw new InvalidInputError(
          `override_currency: the ${what} of ${id}: ${fromMinor(minor, fromCurrency)} ${fromCurrency} would become ${fromMinor(moved, currency)} ${currency}, a paid product made free; ` +
            `pass --override --currency ${currency} to recompute the price in ${currency} instead`,
        )
      }
      if (moved !== scaled) note(trace, `price ${id}`, 'applied', `${fromMinor(scaled, currency)} ${currency} moved to ${fromMinor(moved, currency)} so it can be shown and charged exactly`)
      return moved
    }
    const back = from.currency === currency
    const {relabelled_from: _was, ...rest} = p
    const coupon = p.coupon
      ? {...p.coupon, price_minor: from.coupon_minor === undefined ? relabel(p.coupon.price_minor, p.currency, 'price after coupon') : relabel(from.coupon_minor, from.currency, 'price after coupon')}
      : undefined
    products[id] = {
      ...rest,
      baseline_minor: from.baseline_minor === null ? null : relabel(from.baseline_minor, from.currency, 'baseline price'),
      control_minor: relabel(from.control_minor, from.currency, 'control price'),
      coupon,
      currency,
      price_minor: relabel(from.price_minor, from.currency, 'price'),
      ...(back ? {} : {relabelled_from: from}),
    }
    if (!coupon) delete products[id].coupon
    if (p.relabelled_from) note(trace, `price ${id}`, 'info', `relabelled from the amounts of ${fromMinor(from.price_minor, from.currency)} ${from.currency}, as before the first override_currency`)
  }
  return {...lock, currency, quote: {...lock.quote, currency_source: 'override_currency', products}}
}

/** Build the spec's price result from a lock (fresh or reused). */
function render(ctx: PricingContext, lock: Lock, req: PriceRequest, products: string[], integrations: string[], trace: Trace): PriceResult {
  const out: Record<string, ProductPrice> = {}
  for (const id of products) {
    const p = lock.quote.products[id]
    out[id] = renderProduct(ctx, lock, p, integrations, ctx.product(id)?.planCurrencies, id)
    if (trace) {
      noteTax(ctx, lock, id, p, trace)
      noteConversions(ctx, id, p, out[id], trace)
    }
  }
  if (trace) note(trace, 'display', 'info', `formatted for ${lock.country} in ${ctx.display.locale(lock.country)}`)
  const experimented = lock.experiment_id !== 0
  return {
    audience: lock.quote.audience,
    country: lock.country,
    currency: lock.currency,
    currency_symbol: ctx.display.symbol(lock.currency, lock.country),
    matching_audiences: lock.quote.matching_audiences,
    package_id: lock.package_id,
    products: out,
    success: true,
    user_id: req.user_id ?? lock.lock_key,
    variants: {
      arm_id: lock.arm_id,
      experiment_id: lock.experiment_id,
      experiment_type: experimented ? lock.quote.experiment_type : null,
      experimented_on: experimented,
      products_to_select: lock.quote.products_to_select,
      treatment_group: null,
    },
  }
}

/** Explain: the rates behind price_usd and behind each gateway that charges in its fallback currency, and each gateway object that moved. */
function noteConversions(ctx: PricingContext, id: string, p: LockedProduct, rendered: ProductPrice, trace: ExplainStep[]): void {
  ctx.noteRate(trace, p.currency)
  for (const [g, gp] of Object.entries(rendered.integrations)) {
    if (gp.adjusted_from !== undefined) {
      const reasons = ctx.gatewayMoves(g, p.price_minor, p.currency).map((m) => m.reason)
      note(trace, `price ${id}`, 'applied', `${g} is sent ${gp.formatted} (adjusted_from ${gp.adjusted_from} ${p.currency}): ${reasons.join('; ')}; the lock keeps ${fromMinor(p.price_minor, p.currency)} ${p.currency}`)
    }
    if (gp.currency === p.currency) continue
    ctx.noteRate(trace, gp.currency)
    const rates = [p.currency, gp.currency].filter((c) => c !== 'USD').map((c) => ctx.describeRate(c))
    note(
      trace,
      `price ${id}`,
      'applied',
      `${g === 'gateway_d' && ctx.product(id)?.planCurrencies.length ? `gateway_d has no ${p.currency} plan for ${id}` : `${g} does not accept ${p.currency}`}: ${fromMinor(p.price_minor, p.currency)} ${p.currency} is charged as ${gp.formatted} (${gp.currency}), converted at ${rates.join(' and ')}`,
    )
  }
}

/**
 * A product's price object. Without a coupon it depends only on the locked amounts, the
 * country and the gateways, so it is made once per context and shared (callers only read it).
 */
function renderProduct(ctx: PricingContext, lock: Lock, p: LockedProduct, integrations: string[], plans: readonly string[] | undefined, id: string): ProductPrice {
  const tax = lockedTax(ctx, lock, p, id)
  if (p.coupon) return renderProductNow(ctx, lock, p, integrations, plans, tax)
  // Plans are compared as one more part: the product's list, the same array for every request of a context.
  const parts = RENDER_PARTS
  parts[0] = p.currency
  parts[1] = p.price_minor
  parts[2] = p.baseline_minor
  parts[3] = p.control_minor
  parts[4] = p.interval
  parts[5] = p.interval_count
  parts[6] = p.layer
  parts[7] = plans
  parts[8] = tax.behavior
  parts[9] = tax.bp
  let rendered = ctx.renderedValues.get(lock.country, parts, integrations)
  if (rendered) return rendered
  const key = `${lock.country}|${integrations.join(',')}|${p.currency}|${p.price_minor}|${p.baseline_minor}|${p.control_minor}|${p.interval}|${p.interval_count}|${p.layer}|${plans?.join(',') ?? ''}|${tax.behavior}|${tax.bp}`
  rendered = ctx.rendered.get(key)
  if (!rendered) {
    rendered = renderProductNow(ctx, lock, p, integrations, plans, tax)
    if (!ctx.renderedValues.set(lock.country, parts, integrations, rendered)) ctx.rendered.set(key, rendered)
  }
  return rendered
}

/** Reused for each look-up, as QUOTE_PARTS (renderProductNow does not render another product). */
const RENDER_PARTS: unknown[] = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined]

/**
 * The tax a locked product was shown with; a lock made before tax in prices has none and
 * reads as exclusive (its price was shown net) at today's rate of its country.
 */
function lockedTax(ctx: PricingContext, lock: Lock, p: LockedProduct, id: string): LockedTax {
  return p.tax ?? {behavior: 'exclusive', bp: ctx.tax(lock.country, id).bp}
}

/** The quote's `tax` object (docs/tax.md): the locked price split into net and tax, in the currency's number form. */
function taxObject(ctx: PricingContext, country: string, currency: string, priceMinor: number, tax: LockedTax): ProductPrice['tax'] {
  const split = splitShown(priceMinor, tax.bp, tax.behavior)
  return {
    behavior: tax.behavior,
    country,
    display: taxWords(tax.behavior, country, ctx.display.locale(country)),
    gross: fromMinor(split.gross, currency),
    label: taxLabel(country),
    net: fromMinor(split.net, currency),
    rate: bpToPercent(tax.bp),
    tax: fromMinor(split.tax, currency),
  }
}

/** Explain: the tax step of a product (its rate, behaviour and why, and the split of the shown price). */
function noteTax(ctx: PricingContext, lock: Lock, id: string, p: LockedProduct, trace: ExplainStep[]): void {
  const t = lockedTax(ctx, lock, p, id)
  const now = ctx.tax(lock.country, id)
  const split = splitShown(p.price_minor, t.bp, t.behavior)
  const c = p.currency
  const label = taxLabel(lock.country)
  const why = p.tax
    ? `${t.behavior} (${now.behavior === t.behavior ? now.behaviorSource : 'as locked'})`
    : 'exclusive (a lock made before tax in prices: shown net)'
  const rate = p.tax && now.bp !== t.bp ? `${bpToPercent(t.bp)}% as locked (today ${bpToPercent(now.bp)}%)` : `${bpToPercent(t.bp)}% (${now.rateSource}${now.rateFrom ? `, from ${now.rateFrom}` : ''}${now.category === 'standard' ? '' : `, category ${now.category}`})`
  const amounts =
    t.behavior === 'inclusive'
      ? `${fromMinor(split.gross, c)} ${c} shown incl. ${label} = ${fromMinor(split.net, c)} net + ${fromMinor(split.tax, c)} ${label}`
      : `${fromMinor(split.net, c)} ${c} shown net + ${fromMinor(split.tax, c)} ${label} added at checkout = ${fromMinor(split.gross, c)}`
  note(trace, `tax ${id}`, 'applied', `${lock.country} ${label} ${rate}, ${why}: ${amounts}`)
}

function renderProductNow(ctx: PricingContext, lock: Lock, p: LockedProduct, integrations: string[], plans: readonly string[] | undefined, tax: LockedTax): ProductPrice {
  const {country} = lock
  const {currency} = p
  const priceText = ctx.display.format(p.price_minor, currency, country)
  const struck = p.baseline_minor !== null && p.baseline_minor > p.price_minor
  const gateways: ProductPrice['integrations'] = {}
  // A gateway_d price object is in the currency of one of the product's gateway_d plans (spec: the plan carries it).
  // Every gateway is sent the shown price and whether it includes tax (docs/tax.md, "Gateways").
  for (const g of integrations) gateways[g] = {...ctx.gatewayPrice(g, p.price_minor, currency, country, g === 'gateway_d' ? plans : undefined), tax_behavior: tax.behavior}
  const result: ProductPrice = {
    display: {
      // Spec: an experimental price is compared with the control, also when it is higher (negative discount).
      discount_to_baseline: struck || (p.layer === 'experiment' && p.baseline_minor !== null) ? ctx.display.discount(p.price_minor, p.baseline_minor!) : 0,
      price: priceText,
      price_with_baseline_strike: struck ? ctx.display.strike(ctx.display.format(p.baseline_minor!, currency, country), priceText) : priceText,
      reference_interval_price: ctx.display.format(ctx.display.referenceInterval(p.control_minor, p.interval, p.interval_count), currency, country),
    },
    integrations: gateways,
    interval: p.interval,
    interval_count: p.interval_count,
    price: fromMinor(p.price_minor, currency),
    price_usd: fromMinor(ctx.toUsdMinor(p.price_minor, currency), 'USD'),
  }
  // A locked coupon whose validity has passed is no longer shown.
  const coupon = p.coupon ? ctx.coupons.render(lock, p) : undefined
  if (coupon) result.coupon = coupon
  result.tax = taxObject(ctx, country, currency, p.price_minor, tax)
  return result
}

/** Where writePriceLine puts a result: text to encode, and bytes already encoded. */
export type JsonSink = {bytes(b: Buffer): void; text(s: string): void}

/** Small ids of the shared product price objects (see renderProduct), for prefix keys. */
const sharedIds = new WeakMap<ProductPrice, number>()
let nextSharedId = 0
/** Everything of a line before the user id, encoded, by what it is made of. */
const prefixes = new BoundedCache<string, Buffer>(10_000)
const variantEnds = new BoundedCache<string, Buffer>(1000)
/** variantEnds of a price experiment's arms (most experimented lines), by experiment and arm: no key text per line. */
const priceArmEnds = new BoundedCache<number, Map<number | string, Buffer>>(100)
const NO_VARIANTS_END = Buffer.from(',"variants":{"arm_id":0,"experiment_id":0,"experiment_type":null,"experimented_on":false,"products_to_select":[],"treatment_group":null}}\n')

/**
 * One line of `price --input`: `JSON.stringify(result)` of a result made by render(), byte
 * for byte, then a newline, as UTF-8 into a sink. A batch prints the same few shared
 * product objects under the same few headers over and over, so everything before the user
 * id is serialized and encoded once per combination. Keys in render()'s order.
 */
export function writePriceLine(r: PriceResult, sink: JsonSink): void {
  sink.bytes(linePrefix(r))
  sink.text(JSON.stringify(r.user_id))
  sink.bytes(variantsEnd(r.variants))
}

/** Everything of writePriceLine's line before the user id, encoded. */
function linePrefix(r: PriceResult): Buffer {
  // First by value (the shared product objects by identity), without building a key string.
  // One array reused for each line (the cache copies what it keeps).
  const parts = PREFIX_PARTS
  parts[0] = r.currency
  parts[1] = r.currency_symbol
  parts[2] = r.package_id
  parts[3] = r.audience.api_id
  parts[4] = r.audience.name
  parts[5] = r.matching_audiences.length
  let n = 6
  for (const a of r.matching_audiences) {
    parts[n++] = a.api_id
    parts[n++] = a.name
  }
  let shared = true
  for (const id in r.products) {
    const p = r.products[id]
    if (p.coupon) {
      shared = false
      break
    }
    parts[n++] = id
    parts[n++] = p
  }
  // Setting an array's length is a slow call: only when the line has another shape than the last.
  if (parts.length !== n) parts.length = n
  let prefix = shared ? prefixValues.get(r.country, parts, undefined) : undefined
  if (prefix === undefined) {
    prefix = prefixByKey(r)
    if (shared) prefixValues.set(r.country, parts, undefined, prefix)
  }
  return prefix
}

const PREFIX_PARTS: unknown[] = []

/** Prefixes by value; what it has no room for goes to `prefixes` by key string. */
const prefixValues = new ValueCache<Buffer>(32, 256)

/** Everything of a line before the user id, from the string-keyed cache (or made now). */
function prefixByKey(r: PriceResult): Buffer {
  let key: string | undefined = `${r.country}\u0000${r.currency}\u0000${r.currency_symbol}\u0000${r.package_id}\u0000${r.audience.api_id}\u0000${r.audience.name}\u0000`
  for (const a of r.matching_audiences) key += `${a.api_id}\u0001${a.name}\u0001`
  for (const id in r.products) {
    const p = r.products[id]
    // A product with a coupon is rendered per request (its validity depends on the clock).
    if (p.coupon) {
      key = undefined
      break
    }
    let n = sharedIds.get(p)
    if (n === undefined) {
      n = nextSharedId++
      sharedIds.set(p, n)
    }
    key += `\u0002${id}\u0000${n}`
  }
  let prefix = key === undefined ? undefined : prefixes.get(key)
  if (prefix === undefined) {
    prefix = Buffer.from(
      `{"audience":${JSON.stringify(r.audience)},"country":${JSON.stringify(r.country)},"currency":${JSON.stringify(r.currency)}` +
        `,"currency_symbol":${JSON.stringify(r.currency_symbol)},"matching_audiences":${JSON.stringify(r.matching_audiences)}` +
        `,"package_id":${JSON.stringify(r.package_id)},"products":${JSON.stringify(r.products)},"success":true,"user_id":`,
    )
    if (key !== undefined) prefixes.set(key, prefix)
  }
  return prefix
}

/** `,"variants":{...}}` and the newline, encoded once per arm. */
function variantsEnd(v: PriceResult['variants']): Buffer {
  if (v.experiment_id === 0 && v.arm_id === 0 && v.products_to_select.length === 0 && v.treatment_group === null) return NO_VARIANTS_END
  if (v.experiment_type === 'price' && v.experimented_on && v.products_to_select.length === 0 && v.treatment_group === null) {
    let arms = priceArmEnds.get(v.experiment_id)
    if (arms === undefined) priceArmEnds.set(v.experiment_id, (arms = new Map()))
    let end = arms.get(v.arm_id)
    if (end === undefined) {
      end = Buffer.from(`,"variants":${JSON.stringify(v)}}\n`)
      if (arms.size < 100) arms.set(v.arm_id, end)
    }
    return end
  }
  const key = `${v.experiment_id}\u0000${typeof v.arm_id}\u0000${v.arm_id}\u0000${v.experiment_type}\u0000${v.experimented_on}\u0000${v.treatment_group}\u0000${v.products_to_select.join('\u0000')}`
  let end = variantEnds.get(key)
  if (end === undefined) {
    end = Buffer.from(`,"variants":${JSON.stringify(v)}}\n`)
    variantEnds.set(key, end)
  }
  return end
}

/**
 * The lines printed for reused locks in one batch, by lock fingerprint
 * (PricingRepository.loadLockFingerprints), the request's product list and its gateways:
 * a reused lock's line is the same but for the user id for every request that has these
 * (docs/performance.md "Locked users: fingerprints and printed lines").
 */
export class LockedLines {
  /**
   * By a number made of the fingerprint's length and first characters, then compared whole:
   * each fingerprint is a new string of a few hundred characters, and a Map keyed by it
   * would hash all of them per request.
   */
  private buckets = new Map<number, LockedLine[]>()
  private size = 0

  get(print: string, products: readonly string[] | undefined, integrations: readonly string[]): LockedLine | undefined {
    const lines = this.buckets.get(bucketOf(print))
    if (lines === undefined) return undefined
    for (const line of lines) if (line.print === print && sameList(line.products, products) && sameList(line.integrations, integrations)) return line
    return undefined
  }

  set(line: LockedLine): void {
    if (this.size >= 4096) return
    const bucket = bucketOf(line.print)
    let lines = this.buckets.get(bucket)
    if (lines === undefined) {
      lines = []
      this.buckets.set(bucket, lines)
    }
    if (lines.length >= 64) return
    lines.push(line)
    this.size++
  }
}

/** A small integer of a fingerprint's length and first 24 characters (the lock's country, currency, package and arm come first). */
function bucketOf(print: string): number {
  let h = print.length
  const n = Math.min(print.length, 24)
  for (let i = 0; i < n; i++) h = (Math.imul(h, 31) + print.charCodeAt(i)) | 0
  return h
}

type LockedLine = {end: Buffer; integrations: readonly string[]; prefix: Buffer; print: string; products: readonly string[] | undefined}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true
  if (a === undefined || b === undefined || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const NO_GATEWAYS: readonly string[] = []

/**
 * One request of `price --input` priced and written as writePriceLine writes its result,
 * inside a chunk the batch opened. A locked user's request that the lock answers as stored
 * (a user id, no IP, no override, no coupons or features: fastPriceRequest's shape) whose
 * lock the chunk read as a fingerprint (QuoteChunk.begin) is printed from an earlier line
 * of the same fingerprint, products and gateways, without reading the lock whole or
 * computing anything: that line holds everything the calculation reads for it (the lock's
 * country, currency, package, arm and quote, the request's products and gateways, and this
 * context's catalog, rates and display). Its first such line is calculated, and remembered
 * only when the calculation reused the lock as stored and the quote holds no coupon (a
 * coupon's block depends on the clock). Anything else is priceRequest.
 */
export function priceLine(ctx: PricingContext, input: unknown, sink: JsonSink, lines: LockedLines): void {
  // Only a request whose lock was read as a fingerprint is looked at twice (new users are not).
  const userId = input !== null && typeof input === 'object' ? (input as {user_id?: unknown}).user_id : undefined
  let print = typeof userId === 'string' ? ctx.chunk.fingerprint(userId) : undefined
  const req = print === undefined ? undefined : lockedRequest(input, userId)
  if (req === undefined) print = undefined
  if (print === undefined) {
    writePriceLine(priceInChunk(ctx, input), sink)
    return
  }
  const integrations = req!.integrations ?? NO_GATEWAYS
  const known = lines.get(print, req!.products, integrations)
  ctx.chunk.fingerprintUsed(known !== undefined)
  if (known !== undefined) {
    sink.bytes(known.prefix)
    sink.text(JSON.stringify(req!.user_id))
    sink.bytes(known.end)
    return
  }
  let reused = false
  const result = priceInChunk(ctx, input, {onReuse: (lock) => (reused = !hasCoupon(lock))})
  const prefix = linePrefix(result)
  const end = variantsEnd(result.variants)
  if (reused) lines.set({end, integrations: [...integrations], prefix, print, products: req!.products ? [...req!.products] : undefined})
  sink.bytes(prefix)
  sink.text(JSON.stringify(result.user_id))
  sink.bytes(end)
}

/** The request as priceLine reads it when a stored lock answers it as it is (lockedShape), else undefined. */
function lockedRequest(input: unknown, userId: unknown): PriceRequest | undefined {
  const req = fastPriceRequest(input)
  return req === undefined || !lockedShape(req) || req.user_id !== userId ? undefined : req
}

/**
 * Which requests, whose locks were read as `prints` (undefined: no lock), priceLine prints
 * from an earlier line of `lines` (QuoteChunk.begin reads the other locks whole). A line
 * remembered later in the same chunk is printed too; the lock read whole is then not used.
 */
export function printsFromLine(lines: LockedLines, prints: readonly (string | undefined)[], requests: readonly unknown[]): boolean[] {
  const fromLine = new Array<boolean>(prints.length).fill(false)
  for (let i = 0; i < prints.length; i++) {
    const print = prints[i]
    if (print === undefined) continue
    const input = requests[i]
    const userId = input !== null && typeof input === 'object' ? (input as {user_id?: unknown}).user_id : undefined
    const req = lockedRequest(input, userId)
    fromLine[i] = req !== undefined && lines.get(print, req.products, req.integrations ?? NO_GATEWAYS) !== undefined
  }
  return fromLine
}

/** A request a stored lock answers as it is: a user id, no IP to adopt or record, no override. */
function lockedShape(req: PriceRequest): boolean {
  return req.user_id !== undefined && req.ip === undefined && !req.get_ip_from_request && !req.override && !req.override_currency && req.coupons === undefined && req.features === undefined
}

function hasCoupon(lock: Lock): boolean {
  for (const id in lock.quote.products) if (lock.quote.products[id].coupon) return true
  return false
}
