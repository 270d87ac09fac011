import {isoWithOffset} from '../catalog/coupons.js'
import {ConflictError, InvalidInputError, NotFoundError} from '../errors.js'
import {PackageInput, type PackageOutput} from '../schemas/segments.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'
import {patchFields, refuseRename, resolveAudience, resolveProducts, segmentText} from './common.js'

/** Packages: named sets of products, segmented by countries and/or audience. */

export type Package = {
  api_id: string
  audience: null | string
  audience_id: null | number
  countries: string[]
  created_at: string
  id: number
  name: string
  product_ids: number[]
  /** api_ids in the package's order. */
  products: string[]
  updated_at: string
}

type Row = {api_id: string; audience: null | string; audience_id: null | number; countries_json: string; created_at: string; id: number; name: string; updated_at: string}

function load(db: DB, apiId?: string): Package[] {
  const base = 'SELECT k.*, a.api_id AS audience FROM packages k LEFT JOIN audiences a ON a.id = k.audience_id'
  const rows = (apiId === undefined ? db.prepare(`${base} ORDER BY k.api_id`).all() : db.prepare(`${base} WHERE k.api_id = ?`).all(apiId)) as Row[]
  if (rows.length === 0) return []
  const products = db
    .prepare(`SELECT pp.package_id, pp.product_id, p.api_id FROM package_products pp JOIN products p ON p.id = pp.product_id
      WHERE pp.package_id IN (${rows.map(() => '?').join(',')}) ORDER BY pp.package_id, pp.position`)
    .all(...rows.map((r) => r.id)) as {api_id: string; package_id: number; product_id: number}[]
  return rows.map(({countries_json: countries, ...r}) => {
    const mine = products.filter((p) => p.package_id === r.id)
    return {...r, countries: JSON.parse(countries) as string[], product_ids: mine.map((p) => p.product_id), products: mine.map((p) => p.api_id)}
  })
}

export function listPackages(db: DB): Package[] {
  return load(db)
}

export function getPackage(db: DB, apiId: string): Package | undefined {
  return load(db, apiId)[0]
}

export function requirePackage(db: DB, apiId: string): Package {
  const p = getPackage(db, apiId)
  if (!p) throw new NotFoundError(`no package with api_id ${JSON.stringify(apiId)} (list them with: pricectl packages list)`)
  return p
}

export function packageResponse(p: Package): PackageOutput {
  return {api_id: p.api_id, audience: p.audience, countries: p.countries, created_at: p.created_at, name: p.name, products: p.products, updated_at: p.updated_at}
}

/** Whether a package is picked automatically (it has a segment) or only by --package-id. */
export function isSegmented(p: Pick<Package, 'audience_id' | 'countries'>): boolean {
  return p.countries.length > 0 || p.audience_id !== null
}

export function packageSegment(p: Pick<Package, 'audience' | 'countries'>): string {
  return p.audience === null && p.countries.length === 0 ? 'no segment (picked by --package-id only)' : segmentText(p.countries, p.audience)
}

type Def = {api_id: string; audience: null | string; audience_id: null | number; countries: string[]; name: string; product_ids: number[]}

function parseDef(db: DB, input: unknown, what: string): Def {
  const p = validate(PackageInput, input, what)
  return {
    api_id: p.api_id,
    audience: p.audience ?? null,
    audience_id: resolveAudience(db, p.audience, what),
    countries: p.countries ?? [],
    name: p.name,
    product_ids: resolveProducts(db, p.products, (i) => `products[${i}]`, what),
  }
}

/**
 * Two packages segmented on the same audience (or both on none) whose countries overlap
 * would leave the choice for a user to chance: refused, naming the other package.
 */
function checkOverlap(db: DB, d: Def, what: string): void {
  if (!isSegmented(d)) return
  for (const other of listPackages(db)) {
    if (other.api_id === d.api_id || !isSegmented(other) || other.audience_id !== d.audience_id) continue
    const shared = d.countries.filter((c) => other.countries.includes(c))
    const bothAllCountries = d.countries.length === 0 && other.countries.length === 0
    if (!bothAllCountries && shared.length === 0) continue
    const where = bothAllCountries ? `audience ${d.audience}` : `${segmentText(shared, d.audience)}`
    throw new InvalidInputError(
      `invalid ${what}: package ${JSON.stringify(other.api_id)} is already segmented for ${where}; a user must get one package: change the countries or audience, or update ${other.api_id} instead`,
    )
  }
}

function write(db: DB, d: Def, existing: Package | undefined): void {
  const ts = isoWithOffset()
  let id: number
  if (existing) {
    id = existing.id
    db.prepare('UPDATE packages SET name = ?, countries_json = ?, audience_id = ?, updated_at = ? WHERE id = ?').run(d.name, JSON.stringify(d.countries), d.audience_id, ts, id)
    db.prepare('DELETE FROM package_products WHERE package_id = ?').run(id)
  } else {
    id = Number(
      db.prepare('INSERT INTO packages (api_id, name, countries_json, audience_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(d.api_id, d.name, JSON.stringify(d.countries), d.audience_id, ts, ts)
        .lastInsertRowid,
    )
  }
  const ins = db.prepare('INSERT INTO package_products (package_id, product_id, position) VALUES (?, ?, ?)')
  d.product_ids.forEach((pid, i) => ins.run(id, pid, i))
}

export function createPackage(db: DB, input: unknown): Package {
  const d = parseDef(db, input, 'package')
  checkOverlap(db, d, 'package')
  if (getPackage(db, d.api_id)) throw new ConflictError(`api_id: package ${JSON.stringify(d.api_id)} already exists (change it with: pricectl packages update ${d.api_id} ...)`)
  db.transaction(() => write(db, d, undefined)).immediate()
  return getPackage(db, d.api_id)!
}

/** Given fields replace stored ones; `products` and `countries` as whole lists. */
export function updatePackage(db: DB, apiId: string, patch: Record<string, unknown>): {changed: boolean; package: Package} {
  const existing = requirePackage(db, apiId)
  const fields = patchFields(patch, ['created_at', 'updated_at'])
  refuseRename(fields, apiId, 'packages')
  const d = parseDef(db, {...inputOf(existing), ...fields}, 'package update')
  const key = (x: Omit<Def, 'audience'>) => JSON.stringify([x.name, x.countries, x.audience_id, x.product_ids])
  if (key(d) === key(existing)) return {changed: false, package: existing}
  checkOverlap(db, d, 'package update')
  db.transaction(() => write(db, d, existing)).immediate()
  return {changed: true, package: getPackage(db, apiId)!}
}

function inputOf(p: Package): Record<string, unknown> {
  return {api_id: p.api_id, audience: p.audience, countries: p.countries, name: p.name, products: p.products}
}

export function deletePackage(db: DB, apiId: string): Package {
  const p = requirePackage(db, apiId)
  db.prepare('DELETE FROM packages WHERE id = ?').run(p.id)
  return p
}
