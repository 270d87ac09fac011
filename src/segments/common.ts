import {InvalidInputError, NotFoundError} from '../errors.js'
import type {StorePort} from '../store/port.js'
import type {StoredPackage} from '../store/port/segments.js'

/** Helpers shared by the audience, package and campaign repositories. */

/** Product ids of api_ids, in order; every unknown one is named in one not-found error (exit 1, HTTP 404) (`field(i)` is its body path). */
export async function resolveProducts(store: StorePort, apiIds: string[], field: (i: number) => string, what: string): Promise<number[]> {
  const found = await store.catalog.productIds(apiIds)
  const ids: number[] = []
  const problems: string[] = []
  apiIds.forEach((apiId, i) => {
    const id = found.get(apiId)
    if (id !== undefined) ids.push(id)
    else problems.push(`${field(i)}: unknown product ${JSON.stringify(apiId)}`)
  })
  if (problems.length) throw new NotFoundError(`invalid ${what}: ${problems.join('; ')} (see "pricectl products list")`)
  return ids
}

/** Audience id of an api_id (null stays null); an unknown one is not found (exit 1, HTTP 404). */
export async function resolveAudience(store: StorePort, apiId: null | string | undefined, what: string): Promise<null | number> {
  if (apiId === null || apiId === undefined) return null
  const id = (await store.segments.audienceIds([apiId])).get(apiId)
  if (id === undefined) throw new NotFoundError(`invalid ${what}: audience: unknown audience ${JSON.stringify(apiId)} (see "pricectl audiences list")`)
  return id
}

/** Drop undefined values and read-only fields from an update body. */
export function patchFields(patch: Record<string, unknown>, readOnly: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(patch).filter(([k, v]) => v !== undefined && !readOnly.includes(k)))
}

export function refuseRename(fields: Record<string, unknown>, apiId: string, kind: string): void {
  if ('api_id' in fields && fields.api_id !== apiId) {
    throw new InvalidInputError(`api_id: ${JSON.stringify(fields.api_id)} cannot replace ${JSON.stringify(apiId)}; api_id is immutable (create a new one with: pricectl ${kind} create --api-id ...)`)
  }
}

export function parseJsonArray<T>(text: string): T[] {
  return JSON.parse(text) as T[]
}

/** Segment in words: "countries DE, AT and audience students", "everyone". */
export function segmentText(countries: string[], audience: null | string): string {
  const parts: string[] = []
  if (countries.length) parts.push(`countr${countries.length === 1 ? 'y' : 'ies'} ${countries.join(', ')}`)
  if (audience) parts.push(`audience ${audience}`)
  return parts.length ? parts.join(' and ') : 'everyone'
}

/** Whether a package is picked automatically (it has a segment) or only by --package-id. */
export function isSegmented(p: Pick<StoredPackage, 'audience_id' | 'countries'>): boolean {
  return p.countries.length > 0 || p.audience_id !== null
}

export function packageSegment(p: Pick<StoredPackage, 'audience' | 'countries'>): string {
  return p.audience === null && p.countries.length === 0 ? 'no segment (picked by --package-id only)' : segmentText(p.countries, p.audience)
}
