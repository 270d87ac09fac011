import {isoWithOffset} from '../catalog/coupons.js'
import {fromMinor, toMinor} from '../currency.js'
import {ConflictError, InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {AudienceInput, type AudienceOutput} from '../schemas/segments.js'
import {validate} from '../schemas/validate.js'
import type {AudienceDef, StoredAudience} from '../store/port/segments.js'
import type {StorePort} from '../store/port.js'
import {patchFields, refuseRename, resolveProducts} from './common.js'
import {ruleText} from './rules.js'
import {chargeabilityCheck, type GatewayId} from '../pricing/gateways.js'

/** Audiences: the rules and their JSON shape, over the segments repository of the storage port (no SQL here). */

export type {AudiencePrice} from '../store/port/segments.js'

export type Audience = StoredAudience

/** Highest priority first; equal priorities by api_id, so the order never depends on insertion. */
export async function listAudiences(store: StorePort): Promise<Audience[]> {
  return await store.segments.listAudiences()
}

export async function getAudience(store: StorePort, apiId: string): Promise<Audience | undefined> {
  return (await store.segments.getAudiences([apiId]))[0]
}

export async function requireAudience(store: StorePort, apiId: string): Promise<Audience> {
  const a = await getAudience(store, apiId)
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

type Def = AudienceDef

async function parseDef(store: StorePort, input: unknown, what: string): Promise<Def> {
  const a = validate(AudienceInput, input, what)
  const prices = a.prices ?? []
  const ids = await resolveProducts(store, prices.map((p) => p.product), (i) => `prices[${i}].product`, what)
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

/** The product api_ids of an audience input's prices, by position (undefined where not a string). */
function productApiIds(input: unknown): (string | undefined)[] {
  const prices = (input as {prices?: unknown} | null)?.prices
  return Array.isArray(prices) ? prices.map((p) => (typeof (p as {product?: unknown})?.product === 'string' ? (p as {product: string}).product : undefined)) : []
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

/**
 * An audience price (a fixed amount) outside a gateway its product is linked to cannot be
 * charged: refused when written, like a country price (docs/money.md, "Bounds are checked
 * when prices are written"). Prices stored unchanged are not checked again.
 */
async function checkChargeable(store: StorePort, d: Def, old: Def | undefined, what: string, apiIds: (string | undefined)[]): Promise<void> {
  const unchargeable = await chargeabilityCheck(store)
  const stored = new Set((old?.prices ?? []).map((p) => `${p.product_id}|${p.currency}|${p.amount_minor}`))
  const problems: string[] = []
  for (const [i, p] of d.prices.entries()) {
    if (p.amount_minor === null || p.currency === null || stored.has(`${p.product_id}|${p.currency}|${p.amount_minor}`)) continue
    const apiId = apiIds[i] ?? (await store.pricing.productApiId(p.product_id))
    const product = apiId === undefined ? undefined : await store.pricing.product(apiId)
    if (!product) continue
    const reason = unchargeable(p.amount_minor, p.currency, product.gateways as GatewayId[])
    if (reason) problems.push(`prices[${i}] (${apiId}): ${reason}`)
  }
  if (problems.length > 0) throw new InvalidInputError(`invalid ${what}: ${problems.join('; ')}`)
}

export async function createAudience(store: StorePort, input: unknown): Promise<Audience> {
  const d = await parseDef(store, input, 'audience')
  return await store.transaction(async () => {
    await checkChargeable(store, d, undefined, 'audience', productApiIds(input))
    if (await getAudience(store, d.api_id)) {
      throw new ConflictError(`api_id: audience ${JSON.stringify(d.api_id)} already exists (change it with: pricectl audiences update ${d.api_id} ...)`)
    }
    await store.segments.saveAudiences([d], isoWithOffset())
    return (await getAudience(store, d.api_id))!
  }, {write: true})
}

/** Given fields replace stored ones; `rules` and `prices` are replaced as whole lists. */
export async function updateAudience(store: StorePort, apiId: string, patch: Record<string, unknown>): Promise<{audience: Audience; changed: boolean}> {
  return await store.transaction(async () => {
    const existing = await requireAudience(store, apiId)
    const fields = patchFields(patch, ['created_at', 'updated_at', 'rules_text'])
    refuseRename(fields, apiId, 'audiences')
    const merged = {...inputOf(existing), ...fields}
    const d = await parseDef(store, merged, 'audience update')
    if (same(d, defOf(existing))) return {audience: existing, changed: false}
    await checkChargeable(store, d, defOf(existing), 'audience update', productApiIds(merged))
    await store.segments.saveAudiences([d], isoWithOffset())
    return {audience: (await getAudience(store, apiId))!, changed: true}
  }, {write: true})
}

/** What refers to an audience: packages and campaigns segmented on it, experiments targeting it. */
export async function audienceUses(store: StorePort, id: number): Promise<{campaigns: string[]; experiments: number[]; packages: string[]}> {
  return await store.segments.audienceUses(id)
}

/**
 * Delete an audience. Packages and campaigns segmented on it would otherwise lose their
 * audience and apply to more users than meant, so they are refused unless `force`, which
 * deletes them too. Experiments targeting it are always refused.
 */
export async function deleteAudience(store: StorePort, apiId: string, options: {force?: boolean} = {}): Promise<{audience: Audience; campaigns: string[]; packages: string[]}> {
  return await store.transaction(async () => {
    const audience = await requireAudience(store, apiId)
    const uses = await audienceUses(store, audience.id)
    if (uses.experiments.length) {
      throw new OperationalError(`audience ${JSON.stringify(apiId)} is targeted by experiment${uses.experiments.length === 1 ? '' : 's'} ${uses.experiments.join(', ')}; change or delete ${uses.experiments.length === 1 ? 'it' : 'them'} first`)
    }
    const segmented = [...uses.packages.map((p) => `package ${p}`), ...uses.campaigns.map((c) => `campaign ${c}`)]
    if (segmented.length && !options.force) {
      throw new OperationalError(`audience ${JSON.stringify(apiId)} is used by ${segmented.join(', ')}; pass --force to delete the audience and those packages and campaigns`)
    }
    await store.segments.deleteAudience(audience.id)
    return {audience, campaigns: uses.campaigns, packages: uses.packages}
  }, {write: true})
}
