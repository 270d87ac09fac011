import {nowIso} from '../clock.js'
import {fromMinor, toMinor} from '../currency.js'
import {InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {type ArmInput, BASELINE, checkArms, ExperimentInput, type ExperimentOutput, ExperimentPatch} from '../schemas/experiments.js'
import {formatIssues, validate} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import {armIdOut, armUsdMinor, describeArm} from './model.js'
import {chargeabilityCheck, type GatewayId} from '../pricing/gateways.js'
import {freshSeed} from './random.js'
import type {Arm, Experiment, ExperimentDef, ExperimentProduct, Status} from './store.js'

/** Store setting holding the default seed of new experiments (`experiments create` without --seed). */
export const SEED_SETTING = 'experiment_seed'

export function experimentOutput(e: Experiment): ExperimentOutput {
  return {
    allocation: e.allocation,
    arms: e.arms.map((a) => ({
      id: armIdOut(a.id),
      multiplier: a.multiplier,
      products: a.products,
      usd_price: a.usd_price_minor === null ? null : fromMinor(a.usd_price_minor, 'USD'),
    })),
    audience: e.audience,
    countries: e.countries,
    created_at: e.created_at,
    id: e.id,
    name: e.name,
    products: e.products.map((p) => p.api_id),
    seed: e.seed,
    started_at: e.started_at,
    status: e.status,
    stopped_at: e.stopped_at,
    type: e.type,
    updated_at: e.updated_at,
  }
}

export async function requireExperiment(store: StorePort, id: number): Promise<Experiment> {
  const [e] = await store.experiments.get([id])
  if (!e) throw new NotFoundError(`no experiment ${id} (see "pricectl experiments list")`)
  return e
}

/** A positional experiment id: a whole number from 1. */
export function parseExperimentId(text: string): number {
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new InvalidInputError(`experiment id must be a whole number from 1, got ${JSON.stringify(text)} (see "pricectl experiments list")`)
  return Number(text)
}

/** The seed of a new experiment: given > store setting > a fresh random one (stored with it). */
async function seedFor(store: StorePort, given: null | number | undefined): Promise<number> {
  if (given !== undefined && given !== null) return given
  const setting = await store.config.setting(SEED_SETTING)
  if (setting !== undefined && /^\d+$/.test(setting)) return Number(setting)
  return freshSeed()
}

/** Arms with ids: the baseline first (always present), then the others, numbered 1, 2, ... where no id was given. */
function resolveArms(arms: ArmInput[]): Arm[] {
  const baselineInput = arms.find((a) => a.id === BASELINE)
  const used = new Set(arms.filter((a) => typeof a.id === 'number').map((a) => a.id as number))
  let next = 1
  const out: Arm[] = [{id: BASELINE, multiplier: null, products: baselineInput?.products ?? null, usd_price_minor: null}]
  for (const a of arms) {
    if (a.id === BASELINE) continue
    let id = a.id
    if (id === undefined) {
      while (used.has(next)) next++
      id = next
      used.add(next)
    }
    out.push({
      id: String(id),
      multiplier: a.multiplier ?? null,
      products: a.products ?? null,
      usd_price_minor: a.usd_price === undefined || a.usd_price === null ? null : toMinor(a.usd_price, 'USD', 'usd_price'),
    })
  }
  return out
}

const usd = (minor: number) => `${fromMinor(Math.round(minor), 'USD')} USD`

/**
 * An arm outside a product's [min_px, max_px] is refused (exit 2), naming the arm, the
 * product, the price it would give and the range that would fit. Checked on the USD
 * price the arm defines (base_px x multiplier, or usd_price) before localization and
 * rounding; prices made in other currencies are clamped to the bounds when quoted.
 */
export function checkBounds(type: 'packaging' | 'price', arms: Arm[], products: ExperimentProduct[]): void {
  if (type !== 'price') return
  const problems: string[] = []
  for (const arm of arms) {
    for (const p of products) {
      const price = arm.multiplier === null ? armUsdMinor(arm, p) : p.base_px_minor * arm.multiplier
      if (price === undefined) continue
      const below = p.min_px_minor !== null && price < p.min_px_minor
      const above = p.max_px_minor !== null && price > p.max_px_minor
      if (!below && !above) continue
      const how = arm.multiplier === null ? 'its usd_price' : `base ${usd(p.base_px_minor)} x ${arm.multiplier}`
      const bound = above ? `above its max_px ${usd(p.max_px_minor!)}` : `below its min_px ${usd(p.min_px_minor!)}`
      let fits = ''
      if (arm.multiplier !== null && p.base_px_minor > 0) {
        const lo = p.min_px_minor === null ? 0 : p.min_px_minor / p.base_px_minor
        const hi = p.max_px_minor === null ? Infinity : p.max_px_minor / p.base_px_minor
        fits = hi === Infinity ? `; a multiplier of at least ${floor4(lo, 'up')} fits` : `; a multiplier from ${floor4(lo, 'up')} to ${floor4(hi, 'down')} fits`
      } else {
        fits = `; a USD price from ${p.min_px_minor === null ? 0 : usd(p.min_px_minor)} to ${p.max_px_minor === null ? 'any' : usd(p.max_px_minor)} fits`
      }
      problems.push(`arm ${arm.id} (${describeArm({type}, arm)}): ${p.api_id} would cost ${usd(price)} (${how}), ${bound}${fits}`)
    }
  }
  if (problems.length > 0) {
    throw new InvalidInputError(`arm outside the price bounds: ${problems.join('; ')} (change the arm, or the bounds with "pricectl products update API_ID --min-px N --max-px N")`)
  }
}

/**
 * An arm whose USD price (base_px x multiplier, or usd_price) a gateway its product is
 * linked to cannot charge in USD (below its minimum, above its maximum) is refused when
 * written (exit 2), like a base price (docs/money.md, "Bounds are checked when prices are
 * written"). Prices in other currencies are fitted to the gateways when quoted.
 */
async function checkChargeable(store: StorePort, type: 'packaging' | 'price', arms: Arm[], products: ExperimentProduct[]): Promise<void> {
  if (type !== 'price') return
  const unchargeable = await chargeabilityCheck(store)
  const problems: string[] = []
  for (const p of products) {
    const gateways = ((await store.pricing.product(p.api_id))?.gateways ?? []) as GatewayId[]
    if (gateways.length === 0) continue
    for (const arm of arms) {
      const price = armUsdMinor(arm, p)
      if (price === undefined) continue
      const reason = unchargeable(Math.round(price), 'USD', gateways)
      if (reason) problems.push(`arm ${arm.id} (${describeArm({type}, arm)}): ${p.api_id} would cost ${usd(price)}, which ${reason.replace(/^[\d.]+ USD /, '')}`)
    }
  }
  if (problems.length > 0) throw new InvalidInputError(`arm price not chargeable: ${problems.join('; ')}`)
}

function floor4(x: number, dir: 'down' | 'up'): number {
  const f = dir === 'up' ? Math.ceil(x * 10_000) : Math.floor(x * 10_000)
  return f / 10_000
}

type Merged = {
  allocation: 'thompson' | 'uniform'
  arms: ArmInput[]
  audience?: null | string
  countries?: string[]
  name: string
  products?: string[]
  seed?: null | number
  type: 'packaging' | 'price'
}

/** Turn validated input into a definition: products and audience resolved, arms numbered, bounds checked. */
async function resolve(store: StorePort, input: Merged, seed: number): Promise<ExperimentDef> {
  const wanted = [...(input.products ?? [])]
  if (input.type === 'packaging') for (const a of input.arms) for (const p of a.products ?? []) if (!wanted.includes(p)) wanted.push(p)
  const found = await store.experiments.productsByApiId(wanted)
  const unknown = wanted.filter((p) => !found.has(p))
  if (unknown.length > 0) throw new NotFoundError(`unknown product${unknown.length === 1 ? '' : 's'} ${unknown.map((p) => JSON.stringify(p)).join(', ')} (see "pricectl products list")`)
  let audienceId: null | number = null
  if (input.audience) {
    const id = (await store.experiments.audienceIds([input.audience])).get(input.audience)
    if (id === undefined) throw new NotFoundError(`audience: unknown audience ${JSON.stringify(input.audience)} (see "pricectl audiences list")`)
    audienceId = id
  }
  const arms = resolveArms(input.arms)
  const products = wanted.map((p) => found.get(p)!)
  checkBounds(input.type, arms, products)
  await checkChargeable(store, input.type, arms, products)
  return {allocation: input.allocation, arms, audience_id: audienceId, countries: input.countries ?? [], name: input.name, product_ids: products.map((p) => p.id), seed, type: input.type}
}

/**
 * `experiments create`: validated and written in one transaction, as a draft. With
 * `start`, the start (and its checks: bounds, another running experiment on the same
 * visitors) happens in the same transaction, so a refused start leaves no draft behind.
 */
export async function createExperiment(store: StorePort, body: unknown, options: {start?: boolean} = {}): Promise<Experiment> {
  const input = validate(ExperimentInput, body, 'experiment')
  const def = await resolve(store, input, await seedFor(store, input.seed))
  const id = await store.transaction(async () => {
    const now = nowIso()
    const [created] = await store.experiments.insert([def], now)
    if (options.start) await startInTransaction(store, await requireExperiment(store, created), now)
    return created
  }, {write: true})
  return await requireExperiment(store, id)
}

/** Back from the stored experiment to an input the patch can be laid over. */
function inputOf(e: Experiment): Merged {
  return {
    allocation: e.allocation,
    arms: e.arms
      .filter((a) => a.id !== BASELINE || a.products !== null)
      .map((a) => ({
        id: a.id === BASELINE ? BASELINE : (armIdOut(a.id) as number | string),
        multiplier: a.multiplier,
        products: a.products,
        usd_price: a.usd_price_minor === null ? null : fromMinor(a.usd_price_minor, 'USD'),
      })) as ArmInput[],
    audience: e.audience,
    countries: e.countries,
    name: e.name,
    products: e.products.map((p) => p.api_id),
    seed: e.seed,
    type: e.type,
  }
}

/** Fields that change who is in the experiment or what they see: only while it is a draft. */
const DRAFT_ONLY = ['arms', 'audience', 'countries', 'products', 'type'] as const

/**
 * `experiments update ID`: name, allocation and seed at any time; arms, products, type and
 * target only while a draft (changing them under running visitors would mix outcomes of
 * different prices in one arm).
 */
export async function updateExperiment(store: StorePort, id: number, body: unknown): Promise<{changed: boolean; experiment: Experiment}> {
  const patch = validate(ExperimentPatch, body, 'experiment update')
  const e = await requireExperiment(store, id)
  if (e.status !== 'draft') {
    const locked = DRAFT_ONLY.filter((k) => patch[k] !== undefined)
    if (locked.length > 0) {
      throw new InvalidInputError(
        `experiment ${id} is ${e.status}: ${locked.join(', ')} can only change while it is a draft; create a new experiment instead ("pricectl experiments create") or change only name, allocation or seed`,
      )
    }
  }
  const base = inputOf(e)
  const merged: Merged = {...base}
  for (const [k, v] of Object.entries(patch)) if (v !== undefined) (merged as Record<string, unknown>)[k] = v
  // Packaging: new arms bring their own product sets; the old union would keep products no arm shows.
  if (merged.type === 'packaging' && patch.arms !== undefined && patch.products === undefined) merged.products = undefined
  // Re-check the whole experiment: a patch can make stored arms invalid (e.g. type price -> packaging).
  const issues: string[] = []
  checkArms(merged, {addIssue: (i) => issues.push(formatIssues([{...i, code: 'custom'} as never]))})
  if (issues.length > 0) throw new InvalidInputError(`invalid experiment update: ${issues.join('; ')}`)
  const def = await resolve(store, merged, merged.seed ?? e.seed)
  const before = JSON.stringify(experimentOutput(e))
  await store.transaction(async () => await store.experiments.replace(id, def, nowIso()), {write: true})
  const after = await requireExperiment(store, id)
  const changed = JSON.stringify({...experimentOutput(after), updated_at: e.updated_at}) !== before
  return {changed, experiment: after}
}

/**
 * `experiments start ID`: a draft or stopped experiment starts taking new visitors.
 * The bounds are checked again (a product's bounds may have changed since creation), and
 * an experiment is refused while another running one prices the same product for the
 * same visitors (overlapping countries and audience): a lock holds one experiment, so
 * they would split each other's traffic silently.
 */
export async function startExperiment(store: StorePort, id: number): Promise<{changed: boolean; experiment: Experiment}> {
  // The checks and the start in one write transaction: another process cannot start a
  // clashing experiment between the check and the write.
  const changed = await store.transaction(async () => {
    const e = await requireExperiment(store, id)
    if (e.status === 'running') return false
    await startInTransaction(store, e, nowIso())
    return true
  }, {write: true})
  return {changed, experiment: await requireExperiment(store, id)}
}

/** Check that `e` may start and mark it running; the caller holds the write transaction. */
async function startInTransaction(store: StorePort, e: Experiment, now: string): Promise<void> {
  const id = e.id
  if (e.products.length === 0) throw new InvalidInputError(`experiment ${id} has no products left (deleted?): update it with --product first`)
  checkBounds(e.type, e.arms, e.products)
  const running = await store.experiments.runningOn(e.products.map((p) => p.id), id)
  const clash = (await store.experiments
    .get(running.map((c) => c.id)))
    .map((other) => other!)
    .filter((other) => overlaps(e, other))
  if (clash.length > 0) {
    throw new OperationalError(
      `experiment ${clash.map((c) => `${c.id} ("${c.name}")`).join(', ')} already runs on ${e.products.map((p) => p.api_id).join(', ')} for the same visitors: stop it first ("pricectl experiments stop ${clash[0].id}") or target other countries or another audience`,
    )
  }
  await store.experiments.setStatus([id], 'running', now)
}

/** Could one visitor be targeted by both (same products checked by the caller)? */
function overlaps(a: Experiment, b: Experiment): boolean {
  const countries = a.countries.length === 0 || b.countries.length === 0 || a.countries.some((c) => b.countries.includes(c))
  const audiences = a.audience_id === null || b.audience_id === null || a.audience_id === b.audience_id
  return countries && audiences
}

/** `experiments stop ID`: no new visitors; locks keep their arm (until --override). */
export async function stopExperiment(store: StorePort, id: number): Promise<{changed: boolean; experiment: Experiment}> {
  const e = await requireExperiment(store, id)
  if (e.status !== 'running') return {changed: false, experiment: e}
  await store.transaction(async () => await store.experiments.setStatus([id], 'stopped', nowIso()), {write: true})
  return {changed: true, experiment: await requireExperiment(store, id)}
}

/**
 * `experiments delete ID`: only a draft. A draft never took a visitor, so nothing refers
 * to it; a running or stopped experiment has exposures, locks that hold its arms and
 * results, which a delete would orphan (stop it and keep it instead).
 */
export async function deleteExperiment(store: StorePort, id: number): Promise<Experiment> {
  return await store.transaction(async () => {
    const e = await requireExperiment(store, id)
    assertDeletable(e)
    await store.experiments.remove([id])
    return e
  }, {write: true})
}

/** Refuse (exit 2) an experiment that is not a draft, before anything is asked or written. */
export function assertDeletable(e: Experiment): void {
  if (e.status === 'draft') return
  const hint = e.status === 'running' ? `stop it instead ("pricectl experiments stop ${e.id}"); ` : ''
  throw new InvalidInputError(
    `experiment ${e.id} is ${e.status}: only drafts can be deleted; ${hint}a started experiment keeps its exposures, the locks that hold its arms and its results ("pricectl experiments results ${e.id}")`,
  )
}

export async function experimentsList(store: StorePort, status?: Status): Promise<Experiment[]> {
  return await store.experiments.list(status)
}
