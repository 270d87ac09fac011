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

export type LockedCoupon = {
  api_id: string
  price_minor: number
  [k: string]: unknown
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
    upsert: db.prepare(`INSERT INTO locks (lock_key, user_id, ip, anonymous, country, currency, package_id, experiment_id, arm_id, quote_json, created_at, updated_at)
      VALUES (@lock_key, @user_id, @ip, @anonymous, @country, @currency, @package_id, @experiment_id, @arm_id, @quote_json, @created_at, @updated_at)
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

function fromRow(row: Row | undefined): Lock | undefined {
  if (!row) return undefined
  const {anonymous, arm_id: arm, quote_json: quoteJson, ...rest} = row
  return {
    ...rest,
    anonymous: anonymous === 1,
    arm_id: /^\d+$/.test(arm) ? Number(arm) : arm,
    quote: JSON.parse(quoteJson) as LockQuote,
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
  const {anonymous, arm_id: armId, quote, ...rest} = lock
  stmts(db).upsert.run({...rest, anonymous: anonymous ? 1 : 0, arm_id: String(armId), quote_json: JSON.stringify(quote)})
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
