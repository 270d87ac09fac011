import {isoWithOffset} from '../catalog/coupons.js'
import {ConflictError, InvalidInputError, NotFoundError} from '../errors.js'
import {PackageInput, type PackageOutput} from '../schemas/segments.js'
import {validate} from '../schemas/validate.js'
import type {PackageDef, StoredPackage} from '../store/port/segments.js'
import type {StorePort} from '../store/port.js'
import {isSegmented, patchFields, refuseRename, resolveAudience, resolveProducts, segmentText} from './common.js'

/** Packages: named sets of products, segmented by countries and/or audience; over the segments repository of the storage port (no SQL here). */

export type Package = StoredPackage

export {isSegmented, packageSegment} from './common.js'

export async function listPackages(store: StorePort): Promise<Package[]> {
  return await store.segments.listPackages()
}

export async function getPackage(store: StorePort, apiId: string): Promise<Package | undefined> {
  return (await store.segments.getPackages([apiId]))[0]
}

export async function requirePackage(store: StorePort, apiId: string): Promise<Package> {
  const p = await getPackage(store, apiId)
  if (!p) throw new NotFoundError(`no package with api_id ${JSON.stringify(apiId)} (list them with: pricectl packages list)`)
  return p
}

export function packageResponse(p: Package): PackageOutput {
  return {api_id: p.api_id, audience: p.audience, countries: p.countries, created_at: p.created_at, name: p.name, products: p.products, updated_at: p.updated_at}
}

type Def = PackageDef & {audience: null | string}

async function parseDef(store: StorePort, input: unknown, what: string): Promise<Def> {
  const p = validate(PackageInput, input, what)
  return {
    api_id: p.api_id,
    audience: p.audience ?? null,
    audience_id: await resolveAudience(store, p.audience, what),
    countries: p.countries ?? [],
    name: p.name,
    product_ids: await resolveProducts(store, p.products, (i) => `products[${i}]`, what),
  }
}

/**
 * Two packages segmented on the same audience (or both on none) whose countries overlap
 * would leave the choice for a user to chance: refused, naming the other package.
 */
async function checkOverlap(store: StorePort, d: Def, what: string): Promise<void> {
  if (!isSegmented(d)) return
  for (const other of await listPackages(store)) {
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

const toSave = (d: Def): PackageDef => ({api_id: d.api_id, audience_id: d.audience_id, countries: d.countries, name: d.name, product_ids: d.product_ids})

export async function createPackage(store: StorePort, input: unknown): Promise<Package> {
  const d = await parseDef(store, input, 'package')
  return await store.transaction(async () => {
    await checkOverlap(store, d, 'package')
    if (await getPackage(store, d.api_id)) throw new ConflictError(`api_id: package ${JSON.stringify(d.api_id)} already exists (change it with: pricectl packages update ${d.api_id} ...)`)
    await store.segments.savePackages([toSave(d)], isoWithOffset())
    return (await getPackage(store, d.api_id))!
  }, {write: true})
}

/** Given fields replace stored ones; `products` and `countries` as whole lists. */
export async function updatePackage(store: StorePort, apiId: string, patch: Record<string, unknown>): Promise<{changed: boolean; package: Package}> {
  return await store.transaction(async () => {
    const existing = await requirePackage(store, apiId)
    const fields = patchFields(patch, ['created_at', 'updated_at'])
    refuseRename(fields, apiId, 'packages')
    const d = await parseDef(store, {...inputOf(existing), ...fields}, 'package update')
    const key = (x: PackageDef) => JSON.stringify([x.name, x.countries, x.audience_id, x.product_ids])
    if (key(d) === key(existing)) return {changed: false, package: existing}
    await checkOverlap(store, d, 'package update')
    await store.segments.savePackages([toSave(d)], isoWithOffset())
    return {changed: true, package: (await getPackage(store, apiId))!}
  }, {write: true})
}

function inputOf(p: Package): Record<string, unknown> {
  return {api_id: p.api_id, audience: p.audience, countries: p.countries, name: p.name, products: p.products}
}

export async function deletePackage(store: StorePort, apiId: string): Promise<Package> {
  return await store.transaction(async () => {
    const p = await requirePackage(store, apiId)
    await store.segments.deletePackage(p.id)
    return p
  }, {write: true})
}
