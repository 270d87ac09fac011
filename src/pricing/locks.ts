import type {DB} from '../store/db.js'

/** What a lock keeps per product: enough to answer later calls without recomputing. */
export type LockedProduct = {
  /** Struck-through comparison price (baseline product, or the control price in an experiment). */
  baseline_minor: null | number
  /** Price without experiment and coupon: the "default price" of reference_interval_price. */
  control_minor: number
  currency: string
  interval: 'day' | 'month' | 'one_time' | 'week' | 'year'
  interval_count: number
  /** Which layer set the price: base, country_price, audience, experiment. */
  layer: string
  price_minor: number
  /** Coupon applied when the quote was made, kept with the lock. */
  coupon?: LockedCoupon
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

type Row = Omit<Lock, 'anonymous' | 'arm_id' | 'quote'> & {anonymous: number; arm_id: string; quote_json: string}

const statements = new WeakMap<DB, ReturnType<typeof prepare>>()

function prepare(db: DB) {
  return {
    byIp: db.prepare('SELECT * FROM locks WHERE anonymous = 1 AND ip = ? ORDER BY created_at LIMIT 1'),
    byKey: db.prepare('SELECT * FROM locks WHERE lock_key = ?'),
    delete: db.prepare('DELETE FROM locks WHERE lock_key = ?'),
    // Positional parameters: binding named ones costs more, and a batch writes one lock per request.
    upsert: db.prepare(`INSERT INTO locks (lock_key, user_id, ip, anonymous, country, currency, package_id, experiment_id, arm_id, quote_json, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (lock_key) DO UPDATE SET user_id = excluded.user_id, ip = excluded.ip, anonymous = excluded.anonymous, country = excluded.country,
        currency = excluded.currency, package_id = excluded.package_id, experiment_id = excluded.experiment_id, arm_id = excluded.arm_id,
        quote_json = excluded.quote_json, updated_at = excluded.updated_at`),
    userCountry: db.prepare('SELECT country FROM users WHERE user_id = ?'),
    userUpsert: db.prepare(`INSERT INTO users (user_id, country, created_at, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (user_id) DO UPDATE SET country = excluded.country, updated_at = excluded.updated_at WHERE users.country IS NOT excluded.country`),
  }
}

function stmts(db: DB) {
  let s = statements.get(db)
  if (!s) {
    s = prepare(db)
    statements.set(db, s)
  }
  return s
}

/**
 * The quote as stored: fields equal to their usual value are left out (a batch writes one
 * lock per request, so the row size is the write cost). unpackQuote restores them.
 */
function packQuote(lock: Lock): string {
  const q = lock.quote
  const products: Record<string, Record<string, unknown>> = {}
  for (const [id, p] of Object.entries(q.products)) {
    const {baseline_minor: baseline, control_minor: control, currency, ...rest} = p
    const packed: Record<string, unknown> = rest
    if (currency !== lock.currency) packed.currency = currency
    if (control !== p.price_minor) packed.control_minor = control
    if (baseline !== null) packed.baseline_minor = baseline
    products[id] = packed
  }
  const out: Record<string, unknown> = {country_source: q.country_source, currency_source: q.currency_source, products}
  if (q.audience.api_id !== 'default') out.audience = q.audience
  if (q.matching_audiences.length > 0) out.matching_audiences = q.matching_audiences
  if (q.experiment_type !== null) out.experiment_type = q.experiment_type
  if (q.products_to_select.length > 0) out.products_to_select = q.products_to_select
  return JSON.stringify(out)
}

function unpackQuote(json: string, currency: string): LockQuote {
  const q = JSON.parse(json) as Partial<LockQuote> & {products: Record<string, Partial<LockedProduct> & {price_minor: number}>}
  const products: Record<string, LockedProduct> = {}
  for (const [id, p] of Object.entries(q.products)) {
    products[id] = {...p, baseline_minor: p.baseline_minor ?? null, control_minor: p.control_minor ?? p.price_minor, currency: p.currency ?? currency} as LockedProduct
  }
  return {
    audience: q.audience ?? {api_id: 'default', name: 'default'},
    country_source: q.country_source ?? '',
    currency_source: q.currency_source ?? '',
    experiment_type: q.experiment_type ?? null,
    matching_audiences: q.matching_audiences ?? [],
    products,
    products_to_select: q.products_to_select ?? [],
  }
}

function fromRow(row: Row | undefined): Lock | undefined {
  if (!row) return undefined
  const arm = row.arm_id
  return {
    anonymous: row.anonymous === 1,
    arm_id: arm === '0' ? 0 : /^\d+$/.test(arm) ? Number(arm) : arm,
    country: row.country,
    created_at: row.created_at,
    currency: row.currency,
    experiment_id: row.experiment_id,
    ip: row.ip,
    lock_key: row.lock_key,
    package_id: row.package_id,
    quote: unpackQuote(row.quote_json, row.currency),
    updated_at: row.updated_at,
    user_id: row.user_id,
  }
}

export function getLock(db: DB, key: string): Lock | undefined {
  return fromRow(stmts(db).byKey.get(key) as Row | undefined)
}

/** The anonymous lock an IP got before the user was known. */
export function getAnonymousLock(db: DB, ip: string): Lock | undefined {
  return fromRow(stmts(db).byIp.get(ip) as Row | undefined)
}

export function saveLock(db: DB, lock: Lock): void {
  const l = lock
  stmts(db).upsert.run(l.lock_key, l.user_id, l.ip, l.anonymous ? 1 : 0, l.country, l.currency, l.package_id, l.experiment_id, String(l.arm_id), packQuote(l), l.created_at, l.updated_at)
}

export function deleteLock(db: DB, key: string): void {
  stmts(db).delete.run(key)
}

export function storedUserCountry(db: DB, userId: string): string | undefined {
  return (stmts(db).userCountry.get(userId) as {country: null | string} | undefined)?.country ?? undefined
}

export function saveUserCountry(db: DB, userId: string, country: string, now: string): void {
  stmts(db).userUpsert.run(userId, country, now, now)
}
