import {nowSeconds} from '../clock.js'
import {fromMinor, toMinor} from '../currency.js'
import {ConflictError, InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {COUPON_SOURCES, CouponInput, type CouponOutput, CouponPatch, windowEnd, windowStart} from '../schemas/catalog.js'
import {formatIssues} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {orgId} from '../store/settings.js'
import {failRows, type Item, type RowError} from './products.js'

/**
 * Coupons: repository and rules. A percentage coupon keeps its percent; a fixed-amount
 * coupon keeps integer minor units of its currency.
 */

export type CouponSource = (typeof COUPON_SOURCES)[number]

/** A coupon as the price command reads it. */
export type Coupon = {
  active_from: null | string
  /** First second (UNIX) the coupon applies, or null (no start). */
  active_from_s: null | number
  active_till: null | string
  /** Last second (UNIX) the coupon applies (a bare date lasts through that day, UTC), or null. */
  active_till_s: null | number
  /** Fixed amount in minor units of `currency`; null for percentage coupons. */
  amount_minor: null | number
  api_id: string
  coupon_type: 'fixed_amount' | 'percentage'
  created_at: string
  currency: null | string
  /** Links to the same coupon in gateways; `id` is the service's own id of the link. */
  external: {external_id: string; id: number; source: CouponSource}[]
  id: number
  name: string
  /** Percent off (0 < p <= 100); null for fixed-amount coupons. */
  percent: null | number
  status: 'ACTIVE' | 'NOT_ACTIVE'
  updated_at: string
  /** The spec's `value`: the percent, or the fixed amount in currency units. */
  value: number
}

type Row = Omit<Coupon, 'active_from_s' | 'active_till_s' | 'external' | 'value'>

/** ISO 8601 with an explicit UTC offset, as the spec's created_at / updated_at. */
export function isoWithOffset(seconds = nowSeconds()): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')
}

function fromRow(r: Row, external: Coupon['external']): Coupon {
  return {
    ...r,
    active_from_s: r.active_from === null ? null : windowStart(r.active_from),
    active_till_s: r.active_till === null ? null : windowEnd(r.active_till),
    external,
    value: r.coupon_type === 'percentage' ? r.percent! : fromMinor(r.amount_minor!, r.currency!),
  }
}

function load(db: DB, apiId?: string): Coupon[] {
  const rows = (apiId === undefined ? db.prepare('SELECT * FROM coupons ORDER BY api_id').all() : db.prepare('SELECT * FROM coupons WHERE api_id = ?').all(apiId)) as Row[]
  if (rows.length === 0) return []
  const ext = (
    apiId === undefined
      ? db.prepare('SELECT id, coupon_id, source, external_id FROM coupon_external_coupons ORDER BY coupon_id, position').all()
      : db.prepare('SELECT id, coupon_id, source, external_id FROM coupon_external_coupons WHERE coupon_id = ? ORDER BY position').all(rows[0].id)
  ) as {coupon_id: number; external_id: string; id: number; source: CouponSource}[]
  const byCoupon = new Map<number, Coupon['external']>()
  for (const e of ext) {
    const l = byCoupon.get(e.coupon_id) ?? []
    l.push({external_id: e.external_id, id: e.id, source: e.source})
    byCoupon.set(e.coupon_id, l)
  }
  return rows.map((r) => fromRow(r, byCoupon.get(r.id) ?? []))
}

/** The coupon with `apiId`, or undefined. */
export function getCoupon(db: DB, apiId: string): Coupon | undefined {
  return load(db, apiId)[0]
}

export function requireCoupon(db: DB, apiId: string): Coupon {
  const c = getCoupon(db, apiId)
  if (!c) throw new NotFoundError(`no coupon with api_id ${JSON.stringify(apiId)} (list them with: pricectl coupons list)`)
  return c
}

/**
 * Where a moment stands against an active window (UNIX seconds; null = open end). Both
 * ends are inside: `active_from`'s second is the first second a coupon or campaign applies,
 * `active_till`'s the last (a bare date: 23:59:59 UTC). Coupons, campaigns and the coupons
 * kept in locks all ask this one function, so they cannot disagree about a boundary.
 */
export function inWindow(w: {active_from_s: null | number; active_till_s: null | number}, seconds: number): 'after' | 'before' | 'inside' {
  if (w.active_from_s !== null && seconds < w.active_from_s) return 'before'
  if (w.active_till_s !== null && seconds > w.active_till_s) return 'after'
  return 'inside'
}

/** Whether a coupon can be applied at `seconds`: ACTIVE and inside its window. */
export function isCouponActive(c: Coupon, seconds = nowSeconds()): boolean {
  return c.status === 'ACTIVE' && inWindow(c, seconds) === 'inside'
}

/**
 * Coupons, optionally filtered. `name` matches case-insensitively anywhere in the
 * coupon's name ("spring" finds "Spring Sale 25%").
 */
export function listCoupons(db: DB, filter: {name?: string; status?: string} = {}): Coupon[] {
  const q = filter.name?.toLowerCase()
  return load(db).filter((c) => (q === undefined || c.name.toLowerCase().includes(q)) && (filter.status === undefined || c.status === filter.status))
}

/** The spec's coupon object. */
export function couponResponse(db: DB, c: Coupon): CouponOutput {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    api_id: c.api_id,
    coupon_external_coupons: c.external.map((e) => ({external_coupon: {id: e.external_id, source: e.source}})),
    coupon_type: {coupon_type: c.coupon_type},
    created_at: c.created_at,
    currency: c.currency,
    name: c.name,
    org: orgId(db),
    status: c.status,
    updated_at: c.updated_at,
    value: c.value,
  }
}

// ---------------------------------------------------------------- writing

type CouponDef = {
  active_from: null | string
  active_till: null | string
  amount_minor: null | number
  api_id: string
  coupon_type: 'fixed_amount' | 'percentage'
  currency: null | string
  external: {external_id: string; source: CouponSource}[]
  name: string
  percent: null | number
  status: 'ACTIVE' | 'NOT_ACTIVE'
}

function defOf(c: Coupon): CouponDef {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    amount_minor: c.amount_minor,
    api_id: c.api_id,
    coupon_type: c.coupon_type,
    currency: c.currency,
    external: c.external.map((e) => ({external_id: e.external_id, source: e.source})),
    name: c.name,
    percent: c.percent,
    status: c.status,
  }
}

/** A coupon as input (what `coupons get` prints, minus read-only fields), for merging an update. */
function inputOf(c: Coupon): Record<string, unknown> {
  return {
    active_from: c.active_from,
    active_till: c.active_till,
    api_id: c.api_id,
    coupon_external_coupons: c.external.map((e) => ({external_coupon: {id: e.external_id, source: e.source}})),
    coupon_type: {coupon_type: c.coupon_type},
    currency: c.currency,
    name: c.name,
    status: c.status,
    value: c.value,
  }
}

function parseDef(value: unknown, problems: string[]): CouponDef | undefined {
  const r = CouponInput.safeParse(value)
  if (!r.success) {
    problems.push(formatIssues(r.error.issues, value))
    return undefined
  }
  const c = r.data
  const type = c.coupon_type.coupon_type
  try {
    return {
      active_from: c.active_from ?? null,
      active_till: c.active_till ?? null,
      amount_minor: type === 'fixed_amount' ? toMinor(c.value, c.currency!, 'value') : null,
      api_id: c.api_id,
      coupon_type: type,
      currency: type === 'fixed_amount' ? c.currency! : null,
      external: (c.coupon_external_coupons ?? []).map((e) => ({external_id: e.external_coupon.id, source: e.external_coupon.source})),
      name: c.name,
      percent: type === 'percentage' ? c.value : null,
      status: c.status ?? 'ACTIVE',
    }
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error
    problems.push(error.message)
    return undefined
  }
}

/** Insert or replace; a coupon identical to the stored one is not touched (updated_at stays). */
function writeDef(db: DB, d: CouponDef, existing: Coupon | undefined): 'inserted' | 'unchanged' | 'updated' {
  if (existing && JSON.stringify(defOf(existing)) === JSON.stringify(d)) return 'unchanged'
  const ts = isoWithOffset()
  let id: number
  if (existing) {
    id = existing.id
    db.prepare('UPDATE coupons SET name = ?, currency = ?, coupon_type = ?, percent = ?, amount_minor = ?, active_from = ?, active_till = ?, status = ?, updated_at = ? WHERE id = ?').run(
      d.name, d.currency, d.coupon_type, d.percent, d.amount_minor, d.active_from, d.active_till, d.status, ts, id,
    )
    db.prepare('DELETE FROM coupon_external_coupons WHERE coupon_id = ?').run(id)
  } else {
    id = Number(
      db
        .prepare('INSERT INTO coupons (api_id, name, currency, coupon_type, percent, amount_minor, active_from, active_till, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(d.api_id, d.name, d.currency, d.coupon_type, d.percent, d.amount_minor, d.active_from, d.active_till, d.status, ts, ts).lastInsertRowid,
    )
  }
  const ext = db.prepare('INSERT INTO coupon_external_coupons (coupon_id, position, source, external_id) VALUES (?, ?, ?, ?)')
  d.external.forEach((e, i) => ext.run(id, i, e.source, e.external_id))
  return existing ? 'updated' : 'inserted'
}

export function createCoupon(db: DB, input: unknown): Coupon {
  const problems: string[] = []
  const d = parseDef(input, problems)
  if (!d) throw new InvalidInputError(`invalid coupon: ${problems.join('; ')}`)
  if (getCoupon(db, d.api_id)) throw new ConflictError(`api_id: coupon ${JSON.stringify(d.api_id)} already exists (change it with: pricectl coupons update ${d.api_id} ...)`)
  db.transaction(() => writeDef(db, d, undefined)).immediate()
  return getCoupon(db, d.api_id)!
}

/**
 * Update: given fields replace stored ones (external coupons as a whole list). Switching
 * to a percentage coupon drops the currency unless the update names one.
 */
export function updateCoupon(db: DB, apiId: string, patch: Record<string, unknown>): {changed: boolean; coupon: Coupon} {
  const existing = requireCoupon(db, apiId)
  const parsed = CouponPatch.safeParse(patch)
  if (!parsed.success) throw new InvalidInputError(`invalid coupon update: ${formatIssues(parsed.error.issues, patch)}`)
  const fields = Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && !['created_at', 'org', 'updated_at'].includes(k)))
  if ('api_id' in fields && fields.api_id !== apiId) {
    throw new InvalidInputError(`api_id: ${JSON.stringify(fields.api_id)} cannot replace ${JSON.stringify(apiId)}; api_id is immutable (create a new coupon with: pricectl coupons create --api-id ...)`)
  }
  const merged = {...inputOf(existing), ...fields}
  const type = parsed.data.coupon_type?.coupon_type
  if (type === 'percentage' && !('currency' in fields)) merged.currency = null
  const problems: string[] = []
  const d = parseDef(merged, problems)
  if (!d) throw new InvalidInputError(`invalid coupon update: ${problems.join('; ')}`)
  const outcome = db.transaction(() => writeDef(db, d, existing)).immediate()
  return {changed: outcome !== 'unchanged', coupon: getCoupon(db, apiId)!}
}

/** Upsert complete coupons (demo): all validated first, nothing written on any failure. */
export function upsertCoupons(db: DB, items: Item[]): {inserted: string[]; unchanged: string[]; updated: string[]} {
  const errors: RowError[] = []
  const defs: CouponDef[] = []
  const seen = new Set<string>()
  for (const item of items) {
    if (item.error !== undefined) {
      errors.push({label: item.label, message: item.error})
      continue
    }
    const problems: string[] = []
    const d = parseDef(item.value, problems)
    for (const message of problems) errors.push({label: item.label, message})
    if (!d) continue
    if (seen.has(d.api_id)) errors.push({label: item.label, message: `api_id: ${JSON.stringify(d.api_id)} appears twice`})
    seen.add(d.api_id)
    defs.push(d)
  }
  if (errors.length) failRows(errors, items.length)
  const result = {inserted: [] as string[], unchanged: [] as string[], updated: [] as string[]}
  db.transaction(() => {
    for (const d of defs) result[writeDef(db, d, getCoupon(db, d.api_id))].push(d.api_id)
  }).immediate()
  return result
}

/** Delete a coupon; one that campaigns use is kept unless `force` (the campaigns go with it). */
export function deleteCoupon(db: DB, apiId: string, options: {force?: boolean} = {}): Coupon {
  const c = requireCoupon(db, apiId)
  const campaigns = (db.prepare('SELECT api_id FROM campaigns WHERE coupon_id = ? ORDER BY api_id').all(c.id) as {api_id: string}[]).map((r) => r.api_id)
  if (campaigns.length > 0 && !options.force) {
    throw new OperationalError(`coupon ${JSON.stringify(apiId)} is used by campaign${campaigns.length === 1 ? '' : 's'} ${campaigns.join(', ')}; pass --force to delete the coupon and those campaigns`)
  }
  db.prepare('DELETE FROM coupons WHERE id = ?').run(c.id)
  return c
}
