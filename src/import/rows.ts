import type {ProductRow} from '../catalog/lookup.js'
import {fromMinor, isCountry, isCurrency, minorDigits, minorToDecimalString, upperCode} from '../currency.js'
import {duplicateColumn} from '../csv-header.js'
import {type MomentOptions, readSeconds, resolveZone} from '../dates.js'
import {PricectlError} from '../errors.js'
import {type GatewayRule, gatewayRule, type RuleOverride} from '../money/gateway-tables.js'
import {fromGatewayUnits} from '../money/representable.js'
import {ruleOverrides} from '../pricing/gateways.js'
import {FxTable, monthlyMinor, usdMinor} from '../revenue/money.js'
import {chargeTaxUsd} from '../revenue/tax.js'
import type {ChargeValues, SubscriptionValues} from '../revenue/store.js'
import {CHARGE_STATUSES, dateOrderProblems, ImportedCharge, ImportedSubscription, SUBSCRIPTION_STATUSES} from '../schemas/revenue.js'
import {formatIssues} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import {type AmountCodes, amountCodes, amountProblem, parseUnits} from './amounts.js'
import {parseInterval} from './intervals.js'
import {RowMiss} from './loads.js'
import {ImportProducts, type RowFacts} from './products.js'
import {type ImportKind, normHeader, type Preset} from './presets.js'

/**
 * One export row -> the values of a subscription or charge, or the reason it is
 * rejected. Cells are read (dates, amounts, currency, status through the layout's
 * mapping) and the row validated with zod (the rules and messages of `create`), the
 * product is matched and USD amounts computed here, so the writer only decides
 * insert / update / unchanged / stale.
 *
 * The row's event (docs/revenue.md, "Import rows as events"): its timestamp is the latest
 * date among the layout's event columns (an export row is the record as of its last change),
 * leaving out a scheduled end (a column of `cancel_at`) unless the row is canceled: a date
 * still to come is not when the row was written. Its id is
 * `import:<timestamp>:<precedence>:<fingerprint>`: rows of one record with the same
 * timestamp are ordered by how far their status has moved (a refunded or lost-dispute
 * charge after the paid one; a canceled subscription after the active one), then by a hash
 * of their values, so any delivery order ends in one state; the same row imported again is
 * the same event (unchanged) and a re-run changes nothing.
 *
 * Loads: map() is synchronous and never reads the store, so a row costs no round trip
 * whatever the store. What it needs from the store (the origin gateway's table overrides, a
 * currency's FX rates, the products a cell names, the prices telling several apart) is read
 * once per import by load(), outside map(): a row needing something not read yet is a miss
 * (RowMiss, naming it); its caller loads it with one call and maps the row again (mapLoading
 * for one row; the import worker holds the records after it meanwhile). An export names a
 * handful of products and currencies, so a handful of rows miss.
 */

/**
 * The schemas (ImportedCharge, ImportedSubscription) run only for rows that may fail them:
 * zod's safeParse of every row was ~14% of the reading thread's busy time (docs/performance.md,
 * "Import"). A row passes them surely when its amounts are not negative, its
 * country (if any) is known, its status is one of the kind's, its ids are plain (below) and its
 * metadata is short; any other row is checked by the schema, whose messages the reasons are.
 */
const CHARGE_STATUS_SET: ReadonlySet<string> = new Set(CHARGE_STATUSES)
const SUBSCRIPTION_STATUS_SET: ReadonlySet<string> = new Set(SUBSCRIPTION_STATUSES)
/** Metadata as JSON of at most this many characters passes Metadata's bound (16,384) surely. */
const SURE_METADATA_CHARS = 4096

/**
 * Whether an id surely passes the schemas' Id: 1 to 255 characters, not blank (a printable
 * ASCII character other than space), no control character (C0, DEL, C1) and no surrogate.
 * False says nothing: the schema decides.
 */
function plainId(s: string): boolean {
  const n = s.length
  if (n === 0 || n > 255) return false
  let printable = false
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0xd800 && c <= 0xdfff)) return false
    if (c > 0x20 && c < 0x7f) printable = true
  }
  return printable
}

/**
 * A subscription import row's values: the record's, and the trial dates the row showed
 * whatever its status (the subscription's history keeps them: SUBSCRIPTION_IMPORT_COLUMNS).
 */
export type SubscriptionImportValues = SubscriptionValues & {seen_trial_end?: null | number; seen_trial_start?: null | number}

/** Mapped values (their latest_event_* fields are the row's event), or why the row is rejected. */
export type RowResult<V> = string | V

type Field = string

export class RowMapper<V extends ChargeValues | SubscriptionValues> {
  readonly layout: Preset
  private readonly amountCodes: AmountCodes
  private readonly amountMinorUnit: boolean
  /** Dates without an offset are read in the layout's zone (--tz), UTC by default. */
  private readonly dateOptions: MomentOptions
  private readonly eventCols: number[]
  /** Event columns that are a scheduled end (read as cancel_at): event dates of canceled rows only. */
  private readonly scheduledCols: ReadonlySet<number>
  private readonly fields: Map<Field, number[]>
  private readonly fx: FxTable
  private readonly headers: string[]
  private readonly metadata: {index: number; key: string}[]
  private readonly products: ImportProducts
  /** Field -> value for rows whose columns for it are missing or empty (mapping "constants", --user-id). */
  private readonly constants: Map<Field, string>
  /** Rows whose USD amount is the gateway's converted amount, and its total difference to the store's FX. */
  private settled = {difference_minor: 0, rows: 0}
  /** Whether the layout reads a price id, the gateway's converted amounts, a tax (checked once, not per row). */
  private readonly hasPrice: boolean
  private readonly hasSettled: boolean
  private readonly hasTax: boolean
  /** Whether rows may name a product (a column or a constant): only then can matching need the pricing engine (loadPricingEngine). */
  readonly readsProducts: boolean
  private readonly refunded: Set<string>
  /** Stored gateway table overrides (read once per import, on the first row needing a rule: load) and the rules resolved so far, per currency. */
  private ruleOverrides: Map<string, RuleOverride> | undefined
  private readonly rules = new Map<string, GatewayRule>()
  private readonly statuses: Map<string, string> | undefined
  /** Every row through the schema, as if none passed surely (test/engine/import-rows-shortcut.test.ts compares the two). */
  schemaEveryRow = false

  /** No store read here (a layout is checked before any row: importer.ts); what rows need is read by load(). */
  constructor(
    private readonly store: StorePort,
    readonly kind: ImportKind,
    layout: Preset,
    header: string[],
    private readonly fallbackProduct: ProductRow | undefined,
  ) {
    this.layout = layout
    this.headers = header.map((h) => h.replace(/^\uFEFF/, '').trim())
    const dup = duplicateColumn(this.headers, normHeader)
    if (dup) throw new PricectlError(`the header names a column twice: ${dup}; rename or remove one so every cell is read from the column meant`, 2)
    const index = new Map<string, number>()
    for (const [i, h] of this.headers.entries()) index.set(normHeader(h), i)
    const cols = (names: string | string[]) => (Array.isArray(names) ? names : [names]).map((n) => index.get(normHeader(n))).filter((i): i is number => i !== undefined)
    this.fields = new Map(Object.entries(layout.columns).map(([f, names]) => [f, cols(names)]))
    this.constants = new Map(Object.entries(layout.constants ?? {}).map(([f, v]) => [f, v.trim()]))
    const required = ['origin_id', 'user_id', 'created', 'amount', 'currency', 'status']
    const missing = required.filter((f) => (this.fields.get(f)?.length ?? 0) === 0 && !this.constants.has(f))
    // Every row needs a product: from a column, or --product for all of them.
    if ((this.fields.get('product')?.length ?? 0) === 0 && !this.constants.has('product') && !fallbackProduct) missing.push('product')
    if (missing.length > 0) throw new PricectlError(missingColumns(layout, missing), 2)
    const has = (f: Field) => (this.fields.get(f)?.length ?? 0) > 0 || this.constants.has(f)
    this.hasPrice = has('price')
    this.readsProducts = has('product')
    this.hasSettled = has('converted_amount') && has('converted_currency')
    this.hasTax = has('tax')
    const eventNames = layout.event_timestamp ?? [layout.columns.created, layout.columns.canceled_at, layout.columns.trial_start].flat().filter((n): n is string => Boolean(n))
    this.eventCols = cols(eventNames)
    const cancelCols = new Set(this.fields.get('cancel_at') ?? [])
    this.scheduledCols = new Set(this.eventCols.filter((i) => cancelCols.has(i)))
    const metaIdx = new Map<number, string>()
    if (layout.metadata_suffix) {
      const suffix = layout.metadata_suffix.toLowerCase()
      for (const [i, h] of this.headers.entries()) {
        if (h.toLowerCase().endsWith(suffix) && h.length > suffix.length) metaIdx.set(i, h.slice(0, h.length - suffix.length).trim())
      }
    }
    for (const name of layout.metadata ?? []) {
      const i = index.get(normHeader(name))
      if (i !== undefined) metaIdx.set(i, name)
    }
    this.metadata = [...metaIdx].map(([i, key]) => ({index: i, key}))
    this.statuses = layout.statuses ? new Map(Object.entries(layout.statuses).map(([k, v]) => [k.trim().toLowerCase(), v])) : undefined
    this.refunded = new Set((layout.refunded_statuses ?? []).map((s) => s.trim().toLowerCase()))
    this.amountMinorUnit = layout.amount_unit === 'minor'
    this.dateOptions = {millis: true, zone: resolveZone(layout.time_zone, '--tz')}
    this.amountCodes = amountCodes(this.amountFormat, this.amountMinorUnit)
    this.fx = new FxTable(store.revenue)
    this.products = new ImportProducts(store, layout.product_types ?? [], layout.origin)
  }

  /** Column names of the header, as read (for the rejects file). */
  get header(): string[] {
    return this.headers
  }

  /** The first non-empty cell of a field's columns. */
  private cell(cells: string[], field: Field): string {
    const idx = this.fields.get(field)
    if (idx) {
      for (let k = 0; k < idx.length; k++) {
        const v = cells[idx[k]]
        if (v !== undefined && v !== '') {
          const t = v.trim()
          if (t !== '') return t
        }
      }
    }
    return this.constants.get(field) ?? ''
  }

  private columnName(field: Field): string {
    const idx = this.fields.get(field)
    return idx && idx.length > 0 ? idx.map((i) => this.headers[i]).join(' / ') : field
  }

  private date(cells: string[], field: Field): number | string | undefined {
    const raw = this.cell(cells, field)
    if (raw === '') return undefined
    const t = readSeconds(raw, this.dateOptions)
    return typeof t === 'string' ? this.dateReason(raw, this.columnName(field), t) : t
  }

  private dateReason(raw: string, column: string, problem: string): string {
    return `bad date ${JSON.stringify(raw)} in ${column} (${problem}; expected YYYY-MM-DD[ HH:MM[:SS]], an ISO date-time, or UNIX seconds; without an offset ${this.dateOptions.zone ? `in ${this.dateOptions.zone}` : 'in UTC'})`
  }

  private get amountFormat() {
    return {decimal: this.layout.decimal_separator ?? '.', thousands: this.layout.thousands_separator ?? null}
  }

  /** The gateway's rule for a currency (origin gateway's table, with the store's overrides). */
  private rule(currency: string): GatewayRule {
    let r = this.rules.get(currency)
    if (r === undefined) {
      if (this.ruleOverrides === undefined) throw new RowMiss({kind: 'rules'})
      const gateway = this.layout.origin
      r = gatewayRule(gateway, currency, this.ruleOverrides.get(`${gateway}|${currency}`))
      this.rules.set(currency, r)
    }
    return r
  }

  /**
   * An amount cell in storage minor units of `currency`, or the reason it is refused.
   * Major units are read under the layout's separators with at most the currency's
   * storage decimals; minor units are the origin gateway's integer amount, converted with
   * its currency table (Stripe ISK 240000 is 2400 kr), refused when storage cannot hold
   * it exactly. Nothing is rounded: the record keeps what the gateway charged.
   */
  private amount(raw: string, currency: string, field: Field): number | string {
    if (this.amountMinorUnit) {
      const rule = this.rule(currency)
      const units = parseUnits(raw, this.amountCodes, 0)
      if (!Number.isNaN(units)) {
        const minor = fromGatewayUnits(units, currency, rule)
        if (minor !== undefined && Number.isSafeInteger(minor)) return minor
        const digits = minorDigits(currency)
        return `bad amount ${JSON.stringify(raw)} in ${this.columnName(field)}: ${units} ${this.layout.origin} units of ${currency} (exponent ${rule.exponent}) is ${minorToDecimalString(units, rule.exponent)} ${currency}, which ${minor === undefined ? `${currency} cannot hold exactly (${digits} decimals, ISO 4217)` : 'is out of range'}`
      }
      return `bad amount ${JSON.stringify(raw)} in ${this.columnName(field)}: ${amountProblem(raw, this.amountFormat, true, currency, 0, '')}`
    }
    const digits = minorDigits(currency)
    const minor = parseUnits(raw, this.amountCodes, digits)
    if (!Number.isNaN(minor)) return minor
    return `bad amount ${JSON.stringify(raw)} in ${this.columnName(field)}: ${amountProblem(raw, this.amountFormat, false, currency, digits, 'ISO 4217')}`
  }

  private eventTimestamp(cells: string[], created: number, status: string): number | string {
    let latest = created
    const canceled = status === 'canceled'
    for (const i of this.eventCols) {
      if (!canceled && this.scheduledCols.has(i)) continue
      const raw = cells[i]?.trim()
      if (!raw) continue
      const t = readSeconds(raw, this.dateOptions)
      if (typeof t === 'string') return this.dateReason(raw, this.headers[i], t)
      if (t > latest) latest = t
    }
    return latest
  }

  private status(raw: string): string | undefined {
    if (!this.statuses) return raw
    return this.statuses.get(raw.toLowerCase())
  }

  private statusReason(raw: string): string {
    const known = this.statuses ? [...new Set(Object.keys(this.layout.statuses!))].join(', ') : ''
    return raw === '' ? `missing status: ${this.columnName('status')} is empty` : `unknown status ${JSON.stringify(raw)} in ${this.columnName('status')} (expected one of ${known})`
  }

  /** Common fields; a string is the reason the row is rejected. */
  private base(cells: string[]) {
    const originId = this.cell(cells, 'origin_id')
    if (originId === '') return `missing id: ${this.columnName('origin_id')} is empty`
    const userId = this.cell(cells, 'user_id')
    if (userId === '') return `missing user id: ${this.columnName('user_id')} ${this.fields.get('user_id')!.length > 1 ? 'are' : 'is'} empty`
    const created = this.date(cells, 'created')
    if (created === undefined) return `missing date: ${this.columnName('created')} is empty`
    if (typeof created === 'string') return created
    const statusRaw = this.cell(cells, 'status')
    const status = this.status(statusRaw)
    if (status === undefined || status === '') return this.statusReason(statusRaw)
    const currencyRaw = this.cell(cells, 'currency')
    const currency = upperCode(currencyRaw)
    if (!isCurrency(currency)) return `currency: unknown currency ${JSON.stringify(currencyRaw)} in ${this.columnName('currency')} (expected an ISO 4217 code such as USD)`
    const amountMinor = this.amount(this.cell(cells, 'amount'), currency, 'amount')
    if (typeof amountMinor === 'string') return amountMinor
    const event = this.eventTimestamp(cells, created, status)
    if (typeof event === 'string') return event
    const countryRaw = this.cell(cells, 'country')
    const productRef = this.cell(cells, 'product')
    return {amountMinor, country: countryRaw === '' ? undefined : upperCode(countryRaw), created, currency, event, originId, productRef, status, statusRaw, userId}
  }

  /** The row's product; a cell naming several products is told by the row's price id (`price`), else its amount. */
  private product(ref: string, facts: RowFacts, price: string, interval?: string, intervalCount?: number): ProductRow | string {
    if (ref === '') return this.fallbackProduct ?? `missing product: ${this.columnName('product')} is empty (pass --product API_ID for rows without one)`
    let p = this.products.match(ref, interval, intervalCount)
    if (p !== undefined && 'kind' in p) {
      const chosen = this.products.choose(p, ref, facts, price, this.columnName('product'))
      if ('reason' in chosen) return chosen.reason
      p = chosen
    }
    if (!p) {
      const how = (this.layout.product_types ?? []).length > 0 ? `no ${this.layout.product_types!.join('/')} integration or api_id` : 'no api_id'
      return `unknown product ${JSON.stringify(ref)} in ${this.columnName('product')} (${how} matches; add the integration to the product with "pricectl products update")`
    }
    return p
  }

  /** The FX rate of a currency on a day (undefined: the store has none); its rates read first (a miss). */
  private fxRate(currency: string, created: number): number | undefined {
    if (this.fx.missing(currency)) throw new RowMiss({currency, kind: 'fx'})
    return this.fx.rate(currency, created)
  }

  private rate(currency: string, created: number): number | string {
    const r = this.fxRate(currency, created)
    return r === undefined ? noRate(currency) : r
  }

  /**
   * The gateway's own USD figures of a charge row: its converted amount (and converted
   * refund) when the converted currency is USD, in exact minor units; undefined when the
   * row carries none (the store's FX converts then), a string when a cell is no amount.
   */
  private settledUsd(cells: string[], amountMinor: number, refundedMinor: number): string | undefined | {amount: number; refunded?: number} {
    if (!this.hasSettled) return undefined
    const cur = this.cell(cells, 'converted_currency')
    if (cur !== 'usd' && cur !== 'USD' && (cur.length !== 3 || upperCode(cur) !== 'USD')) return undefined
    const raw = this.cell(cells, 'converted_amount')
    if (raw === '') return undefined
    const amount = this.amount(raw, 'USD', 'converted_amount')
    if (typeof amount === 'string') return amount
    if (amount < 0) return `bad amount ${JSON.stringify(raw)} in ${this.columnName('converted_amount')}: is negative (what the gateway settled is never below zero)`
    if (refundedMinor === 0) return {amount, refunded: 0}
    // A full refund is the whole settled amount; a partial one the converted refund when the row has one.
    if (refundedMinor === amountMinor) return {amount, refunded: amount}
    const refundedRaw = this.cell(cells, 'converted_amount_refunded')
    if (refundedRaw === '') return {amount}
    const refunded = this.amount(refundedRaw, 'USD', 'converted_amount_refunded')
    if (typeof refunded === 'string') return refunded
    return refunded > 0 && refunded <= amount ? {amount, refunded} : {amount}
  }

  /**
   * The row's tax (docs/revenue.md, "Tax"): the tax part of its amount, read like the amount
   * (the layout's separators and unit, the currency's exponent), 0 when the layout has no tax
   * column or the cell is empty; a string is the reason the row is rejected (not an amount,
   * negative, more than the amount).
   */
  private tax(cells: string[], currency: string, amountMinor: number): number | string {
    if (!this.hasTax) return 0
    const raw = this.cell(cells, 'tax')
    if (raw === '') return 0
    const tax = this.amount(raw, currency, 'tax')
    if (typeof tax === 'string') return tax
    const digits = minorDigits(currency)
    if (tax < 0) return `bad amount ${JSON.stringify(raw)} in ${this.columnName('tax')}: is negative (a tax is part of what the customer paid)`
    if (tax > amountMinor) return `tax: ${minorToDecimalString(tax, digits)} in ${this.columnName('tax')} is more than the amount ${minorToDecimalString(amountMinor, digits)} (the amount is what the customer paid, tax included)`
    return tax
  }

  /** The settled-amount figures since the last call (the worker sends them with each batch). */
  takeSettled(): {difference_minor: number; rows: number} {
    const s = this.settled
    this.settled = {difference_minor: 0, rows: 0}
    return s
  }

  /**
   * Map one record (as many cells as the header), without reading the store: a RowMiss
   * when it needs something not read yet (load it, then map the record again). Nothing of
   * a missed row is counted (takeSettled).
   */
  map(cells: string[]): RowMiss | RowResult<V> {
    try {
      return (this.kind === 'charges' ? this.charge(cells) : this.subscription(cells)) as RowResult<V>
    } catch (error) {
      if (error instanceof RowMiss) return error
      // toMinor and friends throw input errors that already name the field and value.
      if (error instanceof PricectlError) return error.message
      throw error
    }
  }

  /** Read what a miss names from the store: the one load of a miss; the row is then mapped again. */
  async load(miss: RowMiss): Promise<void> {
    const need = miss.need
    switch (need.kind) {
      case 'fx': {
        await this.fx.load(need.currency)
        break
      }

      case 'prices': {
        await this.products.loadPrices(need.several)
        break
      }

      case 'product': {
        await this.products.loadMatch(need.ref, need.interval, need.intervalCount)
        break
      }

      case 'rules': {
        this.ruleOverrides ??= await ruleOverrides(this.store)
        break
      }
    }
  }

  /** Map one record, loading what it misses first (a caller mapping rows one at a time). */
  async mapLoading(cells: string[]): Promise<RowResult<V>> {
    for (;;) {
      const r = this.map(cells)
      if (!(r instanceof RowMiss)) return r
      await this.load(r)
    }
  }

  private charge(cells: string[]): RowResult<ChargeValues> {
    const b = this.base(cells)
    if (typeof b === 'string') return b
    let refundedMinor: number | string = 0
    const refundedRaw = this.cell(cells, 'amount_refunded')
    if (refundedRaw !== '') refundedMinor = this.amount(refundedRaw, b.currency, 'amount_refunded')
    if (typeof refundedMinor === 'string') return refundedMinor
    // "Refunded" with no refunded amount: the whole charge was refunded.
    if (refundedMinor === 0 && this.refunded.has(b.statusRaw.toLowerCase())) refundedMinor = b.amountMinor
    let metadata: Record<string, string> | undefined
    for (const m of this.metadata) {
      const v = cells[m.index]
      if (v !== undefined && v !== '') (metadata ??= {})[m.key] = v
    }
    const metadataJson = metadata === undefined ? undefined : JSON.stringify(metadata)
    const productId = b.productRef === '' ? (this.fallbackProduct?.api_id ?? '-') : b.productRef
    const sure =
      b.amountMinor >= 0 &&
      refundedMinor >= 0 &&
      (b.country === undefined || isCountry(b.country)) &&
      (metadataJson === undefined || metadataJson.length <= SURE_METADATA_CHARS) &&
      CHARGE_STATUS_SET.has(b.status) &&
      plainId(b.originId) &&
      plainId(b.userId) &&
      plainId(productId)
    if (!sure || this.schemaEveryRow) {
      // The schema checks the values as the decimal amounts of `create` (its messages name them).
      const r = ImportedCharge.safeParse({
        amount: fromMinor(b.amountMinor, b.currency),
        amount_refunded: fromMinor(refundedMinor, b.currency),
        country: b.country,
        metadata,
        origin_id: b.originId,
        product: productId,
        status: b.status,
        user_id: b.userId,
      })
      if (!r.success) return formatIssues(r.error.issues)
    }
    if (refundedMinor > b.amountMinor) {
      const digits = minorDigits(b.currency)
      return `amount_refunded: ${minorToDecimalString(refundedMinor, digits)} is more than the amount ${minorToDecimalString(b.amountMinor, digits)}`
    }
    const taxMinor = this.tax(cells, b.currency, b.amountMinor)
    if (typeof taxMinor === 'string') return taxMinor
    const priceRef = this.hasPrice ? this.cell(cells, 'price') : ''
    const product = this.product(b.productRef, taxMinor === 0 ? b : {...b, netMinor: b.amountMinor - taxMinor}, priceRef)
    if (typeof product === 'string') return product
    const amountMinor = b.amountMinor
    const settled = this.settledUsd(cells, amountMinor, refundedMinor)
    if (typeof settled === 'string') return settled
    let amountUsd: number
    let refundedUsd: number
    const rate = this.fxRate(b.currency, b.created)
    if (settled) {
      // What the gateway settled in USD is the record's USD amount (docs/revenue.md, "What the gateway settled").
      amountUsd = settled.amount
      if (settled.refunded !== undefined) refundedUsd = settled.refunded
      else if (rate === undefined) return noRate(b.currency)
      else refundedUsd = usdMinor(refundedMinor, b.currency, rate)
      this.settled.rows++
      if (rate !== undefined) this.settled.difference_minor += amountUsd - usdMinor(amountMinor, b.currency, rate)
    } else {
      if (rate === undefined) return noRate(b.currency)
      amountUsd = usdMinor(amountMinor, b.currency, rate)
      refundedUsd = usdMinor(refundedMinor, b.currency, rate)
    }
    const values: ChargeValues = {
      amount_minor: amountMinor,
      amount_refunded_minor: refundedMinor,
      amount_refunded_usd_minor: refundedUsd,
      amount_usd_minor: amountUsd,
      country: b.country ?? null,
      created: b.created,
      currency: b.currency,
      latest_event_id: '',
      latest_event_timestamp: b.event,
      metadata_json: metadataJson ?? null,
      origin: this.layout.origin,
      origin_id: b.originId,
      product_id: product.id,
      status: b.status,
      tax_minor: taxMinor,
      ...chargeTaxUsd(amountMinor, taxMinor, amountUsd, refundedUsd),
      user_id: b.userId,
    }
    const moved = refundedMinor === 0 ? 0 : refundedMinor < amountMinor ? 1 : 2
    values.latest_event_id = importEventId(b.event, (CHARGE_PRECEDENCE[b.status] ?? 0) + moved, chargeFingerprint(values))
    return values
  }

  private subscription(cells: string[]): RowResult<SubscriptionValues> {
    const b = this.base(cells)
    if (typeof b === 'string') return b
    let interval: string | undefined
    let intervalCount: number | undefined
    const intervalRaw = this.cell(cells, 'interval')
    if (intervalRaw !== '') {
      const iv = parseInterval(intervalRaw)
      if (!iv) return `bad interval ${JSON.stringify(intervalRaw)} in ${this.columnName('interval')} (expected day, week, month or year, optionally with a count such as "3 month")`
      interval = iv.interval
      intervalCount = iv.count
    }
    const countRaw = this.cell(cells, 'interval_count')
    if (countRaw !== '') {
      if (!/^\d+$/.test(countRaw) || Number(countRaw) < 1) return `bad interval count ${JSON.stringify(countRaw)} in ${this.columnName('interval_count')}`
      intervalCount = Number(countRaw)
    }
    let quantity = 1
    const qtyRaw = this.cell(cells, 'quantity')
    if (qtyRaw !== '') {
      if (!/^\d+$/.test(qtyRaw)) return `bad quantity ${JSON.stringify(qtyRaw)} in ${this.columnName('quantity')}`
      quantity = Number(qtyRaw)
    }
    const dates: Record<string, number | undefined> = {}
    for (const f of ['cancel_at', 'canceled_at', 'trial_start', 'trial_end']) {
      const d = this.date(cells, f)
      if (typeof d === 'string') return d
      dates[f] = d
    }
    // Exports keep trial dates after a trial and cancel dates of pending cancellations;
    // the spec allows them only with their status, so they are dropped otherwise.
    const canceled = b.status === 'canceled'
    const trialing = b.status === 'trialing'
    const productId = b.productRef === '' ? (this.fallbackProduct?.api_id ?? '-') : b.productRef
    const sure =
      b.amountMinor >= 0 &&
      (b.country === undefined || isCountry(b.country)) &&
      SUBSCRIPTION_STATUS_SET.has(b.status) &&
      plainId(b.originId) &&
      plainId(b.userId) &&
      plainId(productId)
    if (!sure || this.schemaEveryRow) {
      const r = ImportedSubscription.safeParse({
        amount: fromMinor(b.amountMinor, b.currency),
        country: b.country,
        origin_id: b.originId,
        product: productId,
        status: b.status,
        user_id: b.userId,
      })
      if (!r.success) return formatIssues(r.error.issues)
    }
    const input = {
      cancel_at: canceled ? dates.cancel_at : undefined,
      canceled_at: canceled ? dates.canceled_at : undefined,
      trial_end: trialing ? dates.trial_end : undefined,
      trial_start: trialing ? dates.trial_start : undefined,
    }
    const order = dateOrderProblems({...input, created: b.created})
    if (order.length > 0) return order.map((p) => `${ORDER_PROBLEMS[p.field] ?? 'dates out of order'}: ${p.field}: ${p.message}`).join('; ')
    const amountMinor = b.amountMinor * quantity
    if (!Number.isSafeInteger(amountMinor)) return `amount ${minorToDecimalString(b.amountMinor, minorDigits(b.currency))} x quantity ${quantity} is too large`
    // The tax of the whole subscription (the export's tax column is the invoice's, not the unit's).
    const taxMinor = this.tax(cells, b.currency, amountMinor)
    if (typeof taxMinor === 'string') return taxMinor
    const product = this.product(b.productRef, taxMinor === 0 || quantity !== 1 ? b : {...b, netMinor: b.amountMinor - taxMinor}, '', interval, intervalCount)
    if (typeof product === 'string') return product
    const rate = this.rate(b.currency, b.created)
    if (typeof rate === 'string') return rate
    const finalInterval = interval ?? product.interval
    const finalCount = intervalCount ?? product.interval_count
    const usd = usdMinor(amountMinor, b.currency, rate)
    const values: SubscriptionValues = {
      amount_minor: amountMinor,
      amount_usd_minor: usd,
      amount_usd_monthly_minor: monthlyMinor(usd, finalInterval, finalCount),
      cancel_at: input.cancel_at ?? null,
      canceled_at: input.canceled_at ?? null,
      country: b.country ?? null,
      created: b.created,
      currency: b.currency,
      interval: finalInterval,
      interval_count: finalCount,
      latest_event_id: '',
      latest_event_timestamp: b.event,
      origin: this.layout.origin,
      origin_id: b.originId,
      product_id: product.id,
      status: b.status,
      tax_minor: taxMinor,
      trial_end: input.trial_end ?? null,
      trial_start: input.trial_start ?? null,
      user_id: b.userId,
    }
    values.latest_event_id = importEventId(b.event, SUBSCRIPTION_PRECEDENCE[b.status] ?? 0, subscriptionFingerprint(values, dates.trial_start, dates.trial_end))
    const out: SubscriptionImportValues = values
    out.seen_trial_start = dates.trial_start ?? null
    out.seen_trial_end = dates.trial_end ?? null
    return out
  }
}

/**
 * How far a status has moved, for rows of one record with the same timestamp (a status only
 * moves forward: pending, then paid or failed, then refunded in part, then in full; a
 * subscription from pending through trialing and active to canceled).
 */
const CHARGE_PRECEDENCE: Record<string, number> = {failed: 1, pending: 0, succeeded: 1}
const SUBSCRIPTION_PRECEDENCE: Record<string, number> = {active: 2, canceled: 3, pending: 0, trialing: 1}

/**
 * FNV-1a (32-bit) over UTF-16 code units, folded in value by value: the fingerprint of
 * `values` is that of the text of each value followed by \u0001 (null and absent as the
 * separator alone), then `tax:<n>\u0001` when the tax is not 0 (so a row without tax keeps the
 * event id it had before charges kept tax). Folding each value in, whole numbers digit by
 * digit, instead of hashing their concatenation spares the reading thread the strings of a
 * row (test/engine/import-fingerprint.test.ts holds both fingerprints to the concatenation's hash).
 */
export function fingerprint(values: readonly unknown[], taxMinor: number): string {
  let h = FNV_OFFSET
  for (const v of values) h = foldCell(h, v)
  return fingerprintEnd(h, taxMinor)
}

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
/** The digits of a whole number, least significant first (foldCell). */
const DIGITS = new Uint8Array(16)

/** A value and its separator folded in: a whole number digit by digit, no string made. */
function foldCell(h: number, v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) {
    let n = 0
    let rest = v
    do {
      DIGITS[n++] = rest % 10
      rest = Math.floor(rest / 10)
    } while (rest > 0)
    while (n > 0) h = Math.imul(h ^ (0x30 + DIGITS[--n]), FNV_PRIME)
  } else if (v !== null && v !== undefined) {
    const text = typeof v === 'string' ? v : String(v as number)
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME)
  }
  return Math.imul(h ^ 1, FNV_PRIME)
}

function fingerprintEnd(h: number, taxMinor: number): string {
  if (taxMinor !== 0) {
    for (let i = 0; i < 4; i++) h = Math.imul(h ^ 'tax:'.charCodeAt(i), FNV_PRIME)
    h = foldCell(h, taxMinor)
  }
  return HEX[h >>> 24] + HEX[(h >>> 16) & 0xff] + HEX[(h >>> 8) & 0xff] + HEX[h & 0xff]
}

/** Each byte as two lowercase hex digits (a fingerprint's 8). */
const HEX = Array.from({length: 256}, (_, b) => b.toString(16).padStart(2, '0'))

export function chargeFingerprint(v: ChargeValues): string {
  let h = foldCell(FNV_OFFSET, v.product_id)
  h = foldCell(h, v.country)
  h = foldCell(h, v.created)
  h = foldCell(h, v.status)
  h = foldCell(h, v.currency)
  h = foldCell(h, v.amount_minor)
  h = foldCell(h, v.amount_refunded_minor)
  h = foldCell(h, v.amount_usd_minor)
  h = foldCell(h, v.amount_refunded_usd_minor)
  h = foldCell(h, v.metadata_json)
  return fingerprintEnd(h, v.tax_minor)
}

export function subscriptionFingerprint(v: SubscriptionValues, trialStart: number | undefined, trialEnd: number | undefined): string {
  return fingerprint(
    [v.product_id, v.country, v.created, v.interval, v.interval_count, v.status, v.cancel_at, v.canceled_at, trialStart, trialEnd, v.currency, v.amount_minor, v.amount_usd_minor],
    v.tax_minor,
  )
}

/** What a moment out of order is, named in a reject reason (its kind, src/import/reasons.ts). */
const ORDER_PROBLEMS: Record<string, string> = {
  cancel_at: 'cancel before created',
  canceled_at: 'cancel before created',
  trial_end: 'trial ends before it starts',
}

function noRate(currency: string): string {
  return `no FX rate for ${currency} (add one with "pricectl fx set ${currency} RATE")`
}

/** How to supply each field a file may lack a column for. */
const SUPPLY: Record<string, string> = {
  product: 'pass --product API_ID for one product on every row',
  user_id: 'pass --user-id-column COLUMN (a column of the file that holds it, such as Customer ID or a metadata column) or --user-id VALUE (one user id on every row, such as the connected account\'s id)',
}

/** The refusal of a file without a column for required fields: which, and how to supply each. */
function missingColumns(layout: Preset, missing: string[]): string {
  const names = missing.map((f) => (layout.columns[f] ? `${f} (${[layout.columns[f]].flat().join(' or ')})` : f))
  const how = missing.filter((f) => SUPPLY[f]).map((f) => `for ${f}, ${SUPPLY[f]}`)
  return `the file has no column for ${names.join(', ')} (${layout.name}); ${how.length > 0 ? `${how.join('; ')}; or ` : ''}pass --mapping FILE naming the columns of this layout (or a value in its constants; see docs/revenue.md)`
}

/**
 * The event id of an export row: its moment, how far its status moved, and a hash of its
 * values. A row is the record as of its latest date, so the same row read again (a re-run,
 * a resumed run) is the same event: "unchanged".
 */
function importEventId(ts: number, precedence: number, fingerprint: string): string {
  return `import:${ts}:${precedence}:${fingerprint}`
}

/**
 * Export dates, through the one date reader (src/dates.ts): `YYYY-MM-DD`,
 * `YYYY-MM-DD HH:MM[:SS[.fff]]` and ISO date-times (UTC unless an offset follows, or in
 * `zone`), UNIX seconds (10 digits) or milliseconds (13 digits). Undefined when the
 * cell is no date.
 */
export function parseDate(s: string, zone?: string): number | undefined {
  const t = readSeconds(s, zone === undefined ? MILLIS : {millis: true, zone})
  return typeof t === 'number' ? t : undefined
}

const MILLIS: MomentOptions = {millis: true}

export {minorDigits}
export {parseInterval} from './intervals.js'
