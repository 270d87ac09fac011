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

const COLUMNS = 'lock_key, user_id, ip, anonymous, country, currency, package_id, experiment_id, arm_id, quote_json, created_at, updated_at'
type RawRow = [string, null | string, null | string, number, string, string, null | string, number, string, string, string, string]

const statements = new WeakMap<DB, ReturnType<typeof prepare>>()

function prepare(db: DB) {
  return {
    anonymous: db.prepare('SELECT country, created_at, updated_at FROM locks WHERE lock_key = ? AND anonymous = 1'),
    byIp: db.prepare(`SELECT ${COLUMNS} FROM locks WHERE anonymous = 1 AND ip = ? ORDER BY created_at LIMIT 1`).raw(),
    byKey: db.prepare(`SELECT ${COLUMNS} FROM locks WHERE lock_key = ?`).raw(),
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
 * lock per request, so the row size is the write cost). unpackQuote restores them. Written
 * out by hand: it runs once per new lock, and building it as text skips a copy of the quote.
 */
function packQuote(lock: Lock): string {
  const q = lock.quote
  let products = ''
  for (const id in q.products) {
    products += `${products ? ',' : ''}${JSON.stringify(id)}:${packProduct(q.products[id], lock.currency)}`
  }
  let out = `{"country_source":${JSON.stringify(q.country_source)},"currency_source":${JSON.stringify(q.currency_source)},"products":{${products}}`
  if (q.audience.api_id !== 'default') out += `,"audience":${JSON.stringify(q.audience)}`
  if (q.matching_audiences.length > 0) out += `,"matching_audiences":${JSON.stringify(q.matching_audiences)}`
  if (q.experiment_type !== null) out += `,"experiment_type":${JSON.stringify(q.experiment_type)}`
  if (q.products_to_select.length > 0) out += `,"products_to_select":${JSON.stringify(q.products_to_select)}`
  return out + '}'
}

function packProduct(p: LockedProduct, lockCurrency: string): string {
  let out = `{"interval":${JSON.stringify(p.interval)},"interval_count":${p.interval_count},"layer":${JSON.stringify(p.layer)},"price_minor":${p.price_minor}`
  if (p.baseline_minor !== null) out += `,"baseline_minor":${p.baseline_minor}`
  if (p.control_minor !== p.price_minor) out += `,"control_minor":${p.control_minor}`
  if (p.currency !== lockCurrency) out += `,"currency":${JSON.stringify(p.currency)}`
  if (p.coupon) out += `,"coupon":${JSON.stringify(p.coupon)}`
  return out + '}'
}

function unpackQuote(json: string, currency: string): LockQuote {
  // Filled in place: the parsed objects are fresh, and a batch reads one lock per request.
  const q = JSON.parse(json) as LockQuote
  for (const id in q.products) {
    const p = q.products[id] as Partial<LockedProduct> & {price_minor: number}
    if (p.baseline_minor === undefined) p.baseline_minor = null
    if (p.control_minor === undefined) p.control_minor = p.price_minor
    if (p.currency === undefined) p.currency = currency
  }
  q.audience ??= {api_id: 'default', name: 'default'}
  q.country_source ??= ''
  q.currency_source ??= ''
  q.experiment_type ??= null
  q.matching_audiences ??= []
  q.products_to_select ??= []
  return q
}

function fromRow(row: RawRow | undefined): Lock | undefined {
  if (!row) return undefined
  const arm = row[8]
  return {
    anonymous: row[3] === 1,
    arm_id: arm === '0' ? 0 : /^\d+$/.test(arm) ? Number(arm) : arm,
    country: row[4],
    created_at: row[10],
    currency: row[5],
    experiment_id: row[7],
    ip: row[2],
    lock_key: row[0],
    package_id: row[6],
    quote: unpackQuote(row[9], row[5]),
    updated_at: row[11],
    user_id: row[1],
  }
}

export function getLock(db: DB, key: string): Lock | undefined {
  return fromRow(stmts(db).byKey.get(key) as RawRow | undefined)
}

/** The anonymous lock an IP got before the user was known. */
export function getAnonymousLock(db: DB, ip: string): Lock | undefined {
  return fromRow(stmts(db).byIp.get(ip) as RawRow | undefined)
}

/**
 * The country of an anonymous visitor, whose user id is its IP (the lock key): read from
 * the lock row, so pricing a visitor stays one write (no users row per visitor).
 */
export function anonymousVisitor(db: DB, key: string): {country: string; created_at: string; updated_at: string} | undefined {
  return stmts(db).anonymous.get(key) as {country: string; created_at: string; updated_at: string} | undefined
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
