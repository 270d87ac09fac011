import {isoWithOffset} from '../catalog/coupons.js'
import {fromMinor, toMinor} from '../currency.js'
import {ConflictError, InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {AudienceInput, type AudienceOutput} from '../schemas/segments.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {patchFields, refuseRename, resolveProducts} from './common.js'
import {type Rule, ruleText} from './rules.js'

/** Audiences: repository (all audience SQL lives here) and their JSON shape. */

export type AudiencePrice = {
  /** Fixed local price in minor units of `currency`; null for a multiplier. */
  amount_minor: null | number
  currency: null | string
  multiplier: null | number
  product: string
  product_id: number
}

export type Audience = {
  api_id: string
  created_at: string
  id: number
  name: string
  prices: AudiencePrice[]
  priority: number
  rules: Rule[]
  updated_at: string
}

type Row = {api_id: string; created_at: string; id: number; name: string; priority: number; rules_json: string; updated_at: string}

/** Highest priority first; equal priorities by api_id, so the order never depends on insertion. */
const ORDER = 'ORDER BY priority DESC, api_id'

function pricesOf(db: DB, audienceIds: number[]): Map<number, AudiencePrice[]> {
  const out = new Map<number, AudiencePrice[]>()
  if (audienceIds.length === 0) return out
  const rows = db
    .prepare(`SELECT ap.audience_id, ap.product_id, p.api_id AS product, ap.multiplier, ap.amount_minor, ap.currency
      FROM audience_prices ap JOIN products p ON p.id = ap.product_id
      WHERE ap.audience_id IN (${audienceIds.map(() => '?').join(',')}) ORDER BY ap.audience_id, ap.position`)
    .all(...audienceIds) as (AudiencePrice & {audience_id: number})[]
  for (const {audience_id: id, ...price} of rows) {
    const list = out.get(id) ?? []
    list.push(price)
    out.set(id, list)
  }
  return out
}

function load(db: DB, apiId?: string): Audience[] {
  const rows = (apiId === undefined ? db.prepare(`SELECT * FROM audiences ${ORDER}`).all() : db.prepare('SELECT * FROM audiences WHERE api_id = ?').all(apiId)) as Row[]
  const prices = pricesOf(db, rows.map((r) => r.id))
  return rows.map(({rules_json: rules, ...r}) => ({...r, prices: prices.get(r.id) ?? [], rules: JSON.parse(rules) as Rule[]}))
}

export function listAudiences(db: DB): Audience[] {
  return load(db)
}

export function getAudience(db: DB, apiId: string): Audience | undefined {
  return load(db, apiId)[0]
}

export function requireAudience(db: DB, apiId: string): Audience {
  const a = getAudience(db, apiId)
  if (!a) throw new NotFoundError(`no audience with api_id ${JSON.stringify(apiId)} (list them with: pricectl audiences list)`)
  return a
}

export function audienceResponse(a: Audience): AudienceOutput {
  return {
    api_id: a.api_id,
    created_at: a.created_at,
    name: a.name,
    prices: a.prices.map((p) => ({
      amount: p.amount_minor === null ? null : fromMinor(p.amount_minor, p.currency!),
      currency: p.currency,
      multiplier: p.multiplier,
      product: p.product,
    })),
    priority: a.priority,
    rules: a.rules,
    rules_text: a.rules.map((r) => ruleText(r)),
    updated_at: a.updated_at,
  }
}

/** An audience as input (what `get --json` prints minus read-only fields), for merging an update. */
function inputOf(a: Audience): Record<string, unknown> {
  const {created_at: _c, rules_text: _t, updated_at: _u, ...rest} = audienceResponse(a)
  return rest
}

type Def = {api_id: string; name: string; prices: Omit<AudiencePrice, 'product'>[]; priority: number; rules: Rule[]}

function parseDef(db: DB, input: unknown, what: string): Def {
  const a = validate(AudienceInput, input, what)
  const prices = a.prices ?? []
  const ids = resolveProducts(db, prices.map((p) => p.product), (i) => `prices[${i}].product`, what)
  return {
    api_id: a.api_id,
    name: a.name,
    prices: prices.map((p, i) => ({
      amount_minor: p.amount === null || p.amount === undefined ? null : toMinor(p.amount, p.currency!, `prices[${i}].amount`),
      currency: p.amount === null || p.amount === undefined ? null : p.currency!,
      multiplier: p.multiplier ?? null,
      product_id: ids[i],
    })),
    priority: a.priority ?? 0,
    rules: a.rules ?? [],
  }
}

function defOf(a: Audience): Def {
  return {
    api_id: a.api_id,
    name: a.name,
    prices: a.prices.map(({product: _p, ...p}) => p),
    priority: a.priority,
    rules: a.rules,
  }
}

function same(a: Def, b: Def): boolean {
  const key = (d: Def) => JSON.stringify({...d, prices: d.prices.map((p) => [p.product_id, p.multiplier, p.amount_minor, p.currency])})
  return key(a) === key(b)
}

function write(db: DB, d: Def, existing: Audience | undefined): void {
  const ts = isoWithOffset()
  let id: number
  if (existing) {
    id = existing.id
    db.prepare('UPDATE audiences SET name = ?, priority = ?, rules_json = ?, updated_at = ? WHERE id = ?').run(d.name, d.priority, JSON.stringify(d.rules), ts, id)
    db.prepare('DELETE FROM audience_prices WHERE audience_id = ?').run(id)
  } else {
    id = Number(
      db.prepare('INSERT INTO audiences (api_id, name, priority, rules_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(d.api_id, d.name, d.priority, JSON.stringify(d.rules), ts, ts).lastInsertRowid,
    )
  }
  const ins = db.prepare('INSERT INTO audience_prices (audience_id, product_id, position, multiplier, amount_minor, currency) VALUES (?, ?, ?, ?, ?, ?)')
  d.prices.forEach((p, i) => ins.run(id, p.product_id, i, p.multiplier, p.amount_minor, p.currency))
}

export function createAudience(db: DB, input: unknown): Audience {
  const d = parseDef(db, input, 'audience')
  if (getAudience(db, d.api_id)) {
    throw new ConflictError(`api_id: audience ${JSON.stringify(d.api_id)} already exists (change it with: pricectl audiences update ${d.api_id} ...)`)
  }
  db.transaction(() => write(db, d, undefined)).immediate()
  return getAudience(db, d.api_id)!
}

/** Given fields replace stored ones; `rules` and `prices` are replaced as whole lists. */
export function updateAudience(db: DB, apiId: string, patch: Record<string, unknown>): {audience: Audience; changed: boolean} {
  const existing = requireAudience(db, apiId)
  const fields = patchFields(patch, ['created_at', 'updated_at', 'rules_text'])
  refuseRename(fields, apiId, 'audiences')
  const d = parseDef(db, {...inputOf(existing), ...fields}, 'audience update')
  if (same(d, defOf(existing))) return {audience: existing, changed: false}
  db.transaction(() => write(db, d, existing)).immediate()
  return {audience: getAudience(db, apiId)!, changed: true}
}

/** What refers to an audience: packages and campaigns segmented on it, experiments targeting it. */
export function audienceUses(db: DB, id: number): {campaigns: string[]; experiments: number[]; packages: string[]} {
  const names = (sql: string) => (db.prepare(sql).all(id) as {api_id: string}[]).map((r) => r.api_id)
  return {
    campaigns: names('SELECT api_id FROM campaigns WHERE audience_id = ? ORDER BY api_id'),
    experiments: (db.prepare('SELECT id FROM experiments WHERE audience_id = ? ORDER BY id').all(id) as {id: number}[]).map((r) => r.id),
    packages: names('SELECT api_id FROM packages WHERE audience_id = ? ORDER BY api_id'),
  }
}

/**
 * Delete an audience. Packages and campaigns segmented on it would otherwise lose their
 * audience and apply to more users than meant, so they are refused unless `force`, which
 * deletes them too. Experiments targeting it are always refused.
 */
export function deleteAudience(db: DB, apiId: string, options: {force?: boolean} = {}): {audience: Audience; campaigns: string[]; packages: string[]} {
  const audience = requireAudience(db, apiId)
  const uses = audienceUses(db, audience.id)
  if (uses.experiments.length) {
    throw new OperationalError(`audience ${JSON.stringify(apiId)} is targeted by experiment${uses.experiments.length === 1 ? '' : 's'} ${uses.experiments.join(', ')}; change or delete ${uses.experiments.length === 1 ? 'it' : 'them'} first`)
  }
  const segmented = [...uses.packages.map((p) => `package ${p}`), ...uses.campaigns.map((c) => `campaign ${c}`)]
  if (segmented.length && !options.force) {
    throw new OperationalError(`audience ${JSON.stringify(apiId)} is used by ${segmented.join(', ')}; pass --force to delete the audience and those packages and campaigns`)
  }
  db.transaction(() => {
    db.prepare('DELETE FROM campaigns WHERE audience_id = ?').run(audience.id)
    db.prepare('DELETE FROM packages WHERE audience_id = ?').run(audience.id)
    db.prepare('DELETE FROM audiences WHERE id = ?').run(audience.id)
  }).immediate()
  return {audience, campaigns: uses.campaigns, packages: uses.packages}
}
