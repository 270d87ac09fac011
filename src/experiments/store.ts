import type {DB} from '../store/db.js'

/**
 * Experiments repository: every SQL statement on experiments, arms and exposures, and
 * the attribution query that reads subscriptions and charges.
 */

export type ExperimentType = 'packaging' | 'price'
export type Allocation = 'thompson' | 'uniform'
export type Status = 'draft' | 'running' | 'stopped'

export type Arm = {
  /** 'baseline', a number written as text, or a name. */
  id: string
  multiplier: null | number
  /** Packaging: product api_ids to show. */
  products: null | string[]
  usd_price_minor: null | number
}

/** The product columns an experiment needs (bounds and nominal values). */
export type ExperimentProduct = {
  api_id: string
  base_px_minor: number
  id: number
  interval: string
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
}

export type Experiment = {
  allocation: Allocation
  arms: Arm[]
  audience: null | string
  audience_id: null | number
  countries: string[]
  created_at: string
  id: number
  name: string
  products: ExperimentProduct[]
  seed: number
  started_at: null | string
  status: Status
  stopped_at: null | string
  type: ExperimentType
  updated_at: string
}

/** A validated experiment, ready to write. */
export type ExperimentDef = {
  allocation: Allocation
  arms: Arm[]
  audience_id: null | number
  countries: string[]
  name: string
  product_ids: number[]
  seed: number
  type: ExperimentType
}

type Row = {
  allocation: Allocation
  audience: null | string
  audience_id: null | number
  countries_json: string
  created_at: string
  id: number
  name: string
  seed: number
  started_at: null | string
  status: Status
  stopped_at: null | string
  type: ExperimentType
  updated_at: string
}

const SELECT = `SELECT e.id, e.name, e.type, e.status, e.allocation, e.audience_id, a.api_id AS audience, e.countries_json, e.seed,
  e.created_at, e.updated_at, e.started_at, e.stopped_at FROM experiments e LEFT JOIN audiences a ON a.id = e.audience_id`

function hydrate(db: DB, rows: Row[]): Experiment[] {
  if (rows.length === 0) return []
  const ids = rows.map((r) => r.id)
  const marks = ids.map(() => '?').join(',')
  const products = db
    .prepare(`SELECT ep.experiment_id, p.id, p.api_id, p.base_px_minor, p.interval, p.interval_count, p.min_px_minor, p.max_px_minor
      FROM experiment_products ep JOIN products p ON p.id = ep.product_id WHERE ep.experiment_id IN (${marks}) ORDER BY ep.experiment_id, ep.position`)
    .all(...ids) as (ExperimentProduct & {experiment_id: number})[]
  const arms = db
    .prepare(`SELECT experiment_id, arm_id, multiplier, usd_price_minor, products_json FROM arms WHERE experiment_id IN (${marks}) ORDER BY experiment_id, position`)
    .all(...ids) as {arm_id: string; experiment_id: number; multiplier: null | number; products_json: null | string; usd_price_minor: null | number}[]
  return rows.map((r) => {
    const {countries_json: countries, ...rest} = r
    return {
      ...rest,
      arms: arms
        .filter((a) => a.experiment_id === r.id)
        .map((a) => ({id: a.arm_id, multiplier: a.multiplier, products: a.products_json === null ? null : (JSON.parse(a.products_json) as string[]), usd_price_minor: a.usd_price_minor})),
      countries: JSON.parse(countries) as string[],
      products: products.filter((p) => p.experiment_id === r.id).map(({experiment_id: _e, ...p}) => p),
    }
  })
}

export function getExperiment(db: DB, id: number): Experiment | undefined {
  return hydrate(db, db.prepare(`${SELECT} WHERE e.id = ?`).all(id) as Row[])[0]
}

export function listExperiments(db: DB, status?: Status): Experiment[] {
  const rows = status ? (db.prepare(`${SELECT} WHERE e.status = ? ORDER BY e.id`).all(status) as Row[]) : (db.prepare(`${SELECT} ORDER BY e.id`).all() as Row[])
  return hydrate(db, rows)
}

function writeParts(db: DB, id: number, def: ExperimentDef): void {
  db.prepare('DELETE FROM experiment_products WHERE experiment_id = ?').run(id)
  db.prepare('DELETE FROM arms WHERE experiment_id = ?').run(id)
  const product = db.prepare('INSERT INTO experiment_products (experiment_id, product_id, position) VALUES (?, ?, ?)')
  def.product_ids.forEach((p, i) => product.run(id, p, i))
  const arm = db.prepare('INSERT INTO arms (experiment_id, arm_id, position, multiplier, usd_price_minor, products_json) VALUES (?, ?, ?, ?, ?, ?)')
  def.arms.forEach((a, i) => arm.run(id, a.id, i, a.multiplier, a.usd_price_minor, a.products === null ? null : JSON.stringify(a.products)))
}

export function insertExperiment(db: DB, def: ExperimentDef, now: string): number {
  const r = db
    .prepare(`INSERT INTO experiments (name, type, status, allocation, audience_id, countries_json, seed, created_at, updated_at)
      VALUES (?, ?, 'draft', ?, ?, ?, ?, ?, ?)`)
    .run(def.name, def.type, def.allocation, def.audience_id, JSON.stringify(def.countries), def.seed, now, now)
  const id = Number(r.lastInsertRowid)
  writeParts(db, id, def)
  return id
}

export function replaceExperiment(db: DB, id: number, def: ExperimentDef, now: string): void {
  db.prepare('UPDATE experiments SET name = ?, type = ?, allocation = ?, audience_id = ?, countries_json = ?, seed = ?, updated_at = ? WHERE id = ?').run(
    def.name,
    def.type,
    def.allocation,
    def.audience_id,
    JSON.stringify(def.countries),
    def.seed,
    now,
    id,
  )
  writeParts(db, id, def)
}

export function setStatus(db: DB, id: number, status: Status, now: string): void {
  if (status === 'running') db.prepare("UPDATE experiments SET status = 'running', started_at = coalesce(started_at, ?), stopped_at = NULL, updated_at = ? WHERE id = ?").run(now, now, id)
  else db.prepare('UPDATE experiments SET status = ?, stopped_at = ?, updated_at = ? WHERE id = ?').run(status, status === 'stopped' ? now : null, now, id)
}

/** Delete an experiment with its products and arms (ON DELETE CASCADE). */
export function removeExperiment(db: DB, id: number): void {
  db.prepare('DELETE FROM experiments WHERE id = ?').run(id)
}

export function audienceIdOf(db: DB, apiId: string): number | undefined {
  return (db.prepare('SELECT id FROM audiences WHERE api_id = ?').get(apiId) as {id: number} | undefined)?.id
}

export function productsByApiId(db: DB, apiIds: string[]): Map<string, ExperimentProduct> {
  if (apiIds.length === 0) return new Map()
  const rows = db
    .prepare(`SELECT id, api_id, base_px_minor, interval, interval_count, min_px_minor, max_px_minor FROM products WHERE api_id IN (${apiIds.map(() => '?').join(',')})`)
    .all(...apiIds) as ExperimentProduct[]
  return new Map(rows.map((r) => [r.api_id, r]))
}

/** Experiments (other than `except`) running on any of these products. */
export function runningOn(db: DB, productIds: number[], except: number): {id: number; name: string}[] {
  if (productIds.length === 0) return []
  return db
    .prepare(`SELECT DISTINCT e.id, e.name FROM experiments e JOIN experiment_products ep ON ep.experiment_id = e.id
      WHERE e.status = 'running' AND e.id <> ? AND ep.product_id IN (${productIds.map(() => '?').join(',')}) ORDER BY e.id`)
    .all(except, ...productIds) as {id: number; name: string}[]
}

// ------------------------------------------------------------------ exposures

const statements = new WeakMap<DB, ReturnType<typeof prepareExposures>>()

function prepareExposures(db: DB) {
  return {
    insert: db.prepare('INSERT OR IGNORE INTO exposures (experiment_id, user_id, anonymous, arm_id, exposed_at) VALUES (?, ?, ?, ?, ?)'),
    // A re-assignment (override) to another arm starts the exposure again: earlier purchases were made at another price.
    reassign: db.prepare('UPDATE exposures SET arm_id = ?, anonymous = ?, exposed_at = ? WHERE experiment_id = ? AND user_id = ? AND arm_id <> ?'),
    // A user adopting an anonymous lock takes over its exposure (same visitor, now able to convert).
    adopt: db.prepare('UPDATE OR IGNORE exposures SET user_id = ?, anonymous = 0 WHERE experiment_id = ? AND user_id = ? AND anonymous = 1'),
    dropAnonymous: db.prepare('DELETE FROM exposures WHERE experiment_id = ? AND user_id = ? AND anonymous = 1'),
    armOf: db.prepare('SELECT arm_id FROM exposures WHERE experiment_id = ? AND user_id = ?'),
  }
}

function exposureStatements(db: DB) {
  let s = statements.get(db)
  if (!s) {
    s = prepareExposures(db)
    statements.set(db, s)
  }
  return s
}

/**
 * Record that a visitor (lock key) got an arm. Returns what changed for the visitor
 * counts: 'new' (one more visitor on the arm), 'moved' (from `previous` to this arm), or
 * 'same'.
 */
export function recordExposure(db: DB, experimentId: number, visitor: string, anonymous: boolean, armId: string, at: number): {change: 'moved' | 'new' | 'same'; previous?: string} {
  const s = exposureStatements(db)
  if (s.insert.run(experimentId, visitor, anonymous ? 1 : 0, armId, at).changes === 1) return {change: 'new'}
  const previous = (s.armOf.get(experimentId, visitor) as {arm_id: string} | undefined)?.arm_id
  if (s.reassign.run(armId, anonymous ? 1 : 0, at, experimentId, visitor, armId).changes === 1) return {change: 'moved', previous}
  return {change: 'same'}
}

/** Move the anonymous exposure of an IP to the user who adopted its lock. */
export function adoptExposure(db: DB, experimentId: number, ip: string, userId: string): void {
  const s = exposureStatements(db)
  if (s.adopt.run(userId, experimentId, ip).changes === 0) s.dropAnonymous.run(experimentId, ip)
}

// ------------------------------------------------------------------ attribution

export type ArmCounts = {conversions: number; revenue_minor: number; visitors: number}

/**
 * Visitors, conversions and revenue per arm, from the store. A conversion is a
 * subscription (pending excluded) or a succeeded charge of an exposed user for a product
 * of the experiment, created at or after the exposure; it is worth amount_usd_monthly
 * (one-time subscriptions: amount_usd) or the charge's amount_usd less refunds, in cents.
 * Computed from the tables, so records written one by one and bulk imports count alike.
 */
export function armCounts(db: DB, experimentId: number): Map<string, ArmCounts> {
  const out = new Map<string, ArmCounts>()
  const visitors = db.prepare('SELECT arm_id, count(*) AS n FROM exposures WHERE experiment_id = ? GROUP BY arm_id').all(experimentId) as {arm_id: string; n: number}[]
  for (const v of visitors) out.set(v.arm_id, {conversions: 0, revenue_minor: 0, visitors: v.n})
  const conversions = db
    .prepare(
      `SELECT arm_id, count(DISTINCT user_id) AS conversions, coalesce(sum(value), 0) AS revenue FROM (
        SELECT e.arm_id, e.user_id, coalesce(s.amount_usd_monthly_minor, s.amount_usd_minor, 0) AS value
          FROM exposures e JOIN subscriptions s ON s.user_id = e.user_id
          WHERE e.experiment_id = @id AND e.anonymous = 0 AND s.status <> 'pending'
            AND s.product_id IN (SELECT product_id FROM experiment_products WHERE experiment_id = @id)
            AND (s.created IS NULL OR s.created >= e.exposed_at)
        UNION ALL
        SELECT e.arm_id, e.user_id, coalesce(c.amount_usd_minor, 0) - c.amount_refunded_usd_minor AS value
          FROM exposures e JOIN charges c ON c.user_id = e.user_id
          WHERE e.experiment_id = @id AND e.anonymous = 0 AND c.status = 'succeeded'
            AND c.product_id IN (SELECT product_id FROM experiment_products WHERE experiment_id = @id)
            AND (c.created IS NULL OR c.created >= e.exposed_at)
      ) GROUP BY arm_id`,
    )
    .all({id: experimentId}) as {arm_id: string; conversions: number; revenue: number}[]
  for (const c of conversions) {
    const row = out.get(c.arm_id) ?? {conversions: 0, revenue_minor: 0, visitors: 0}
    row.conversions = c.conversions
    row.revenue_minor = c.revenue
    out.set(c.arm_id, row)
  }
  return out
}
