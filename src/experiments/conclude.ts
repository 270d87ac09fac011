import {getProduct, updateProduct} from '../catalog/products.js'
import {nowIso} from '../clock.js'
import {fromMinor} from '../currency.js'
import {InvalidInputError, OperationalError} from '../errors.js'
import {PricingContext} from '../pricing/context.js'
import {comparePrices, type PriceChange, previewCountries, previewPrices} from '../pricing/preview.js'
import type {ExperimentOutput} from '../schemas/experiments.js'
import type {StorePort} from '../store/port.js'
import {armBaseMinor, armQuotes} from './arm-prices.js'
import {experimentOutput, requireExperiment} from './manage.js'
import {armIdOut, describeArm, isBaseline} from './model.js'
import type {Arm, Experiment} from './store.js'

/** Store setting that records a concluded experiment (`experiment_concluded:ID` -> {"arm", "at"}), so it is not applied twice. */
export const CONCLUDED_SETTING = 'experiment_concluded:'

export type ProductChange = {
  base_px_after: number
  base_px_before: number
  country_prices: {after: number; before: null | number; country: string; currency: string}[]
  product: string
}

export type ConcludeResult = {
  arm_id: number | string
  changes: PriceChange[]
  dry_run: boolean
  experiment: ExperimentOutput
  message: string
  products: ProductChange[]
  stopped: boolean
  success: true
  summary: string
}

/** An arm of the experiment by the id a user typed ("1", "baseline", "premium"). */
export function findArm(e: Experiment, text: string): Arm {
  const arm = e.arms.find((a) => a.id === text.trim())
  if (!arm) {
    throw new InvalidInputError(
      `experiment ${e.id} has no arm ${JSON.stringify(text)}: its arms are ${e.arms.map((a) => `${a.id} (${describeArm(e, a)})`).join(', ')} (see "pricectl experiments results ${e.id}")`,
    )
  }
  return arm
}

/** When and with which arm an experiment was concluded, if it was. */
export async function concludedWith(store: StorePort, id: number): Promise<undefined | {arm: string; at: string}> {
  const text = await store.config.setting(CONCLUDED_SETTING + id)
  return text === undefined ? undefined : (JSON.parse(text) as {arm: string; at: string})
}

class DryRun extends Error {
  constructor(readonly result: ConcludeResult) {
    super('dry run')
  }
}

/**
 * `experiments conclude ID ARM`: stop the experiment and make the arm's prices the products'
 * prices (docs/experiments.md, "conclude"), in one write transaction. The price impact is the
 * difference of lock-free previews before and after inside it; `dryRun` computes the same and
 * rolls everything back.
 */
export async function concludeExperiment(store: StorePort, id: number, armText: string, options: {dryRun?: boolean; wordAsDryRun?: boolean} = {}): Promise<ConcludeResult> {
  const e = await requireExperiment(store, id)
  const arm = findArm(e, armText)
  if (e.status === 'draft') {
    throw new InvalidInputError(`experiment ${id} is a draft: it never ran, so no arm has results to conclude on; start it ("pricectl experiments start ${id}") or delete it ("pricectl experiments delete ${id}")`)
  }
  if (e.type !== 'price') {
    throw new InvalidInputError(
      `experiment ${id} is a packaging experiment: its arms choose products, not prices; stop it ("pricectl experiments stop ${id}") and change the package's products ("pricectl packages update API_ID --product ...")`,
    )
  }
  if (e.audience !== null) {
    throw new InvalidInputError(
      `experiment ${id} targets audience ${e.audience}: conclude writes product prices, which every audience would get; stop it ("pricectl experiments stop ${id}") and set the audience's price instead ("pricectl audiences update ${e.audience} ...")`,
    )
  }
  const done = await concludedWith(store, id)
  if (done) {
    throw new OperationalError(
      `experiment ${id} was already concluded with arm ${done.arm} at ${done.at}: its prices were applied then, and applying an arm again would apply it twice; change prices with "pricectl products update API_ID ..."`,
    )
  }
  const products = e.products.map((p) => p.api_id)
  try {
    return await store.transaction(
      async () => {
        const now = nowIso()
        const ctx = await PricingContext.open(store)
        // Unsorted: the preview sorts its rows.
        const countries = [...new Set([...await previewCountries(ctx), ...e.countries])]
        const before = await previewPrices(store, {countries, products})
        // The arm's prices, all read before anything is written.
        const plan: Plan[] = []
        if (!isBaseline(arm)) for (const api of products) plan.push(await planProduct(store, ctx, e, arm, api))
        const stopped = e.status === 'running'
        if (stopped) await store.experiments.setStatus([id], 'stopped', now)
        for (const p of plan) await writeProduct(store, p)
        await store.config.saveSetting(CONCLUDED_SETTING + id, JSON.stringify({arm: arm.id, at: now}))
        const after = await previewPrices(store, {countries, products})
        const {changes} = comparePrices(before, after, {kind: 'absolute', value: 0})
        // wordAsDryRun: a caller that rolls the transaction back itself (the CLI's price-impact wrapper) words it as a dry run.
        const result = describe((await store.experiments.get([id]))[0]!, arm, plan, changes, stopped, Boolean(options.dryRun || options.wordAsDryRun), before.length)
        if (options.dryRun) throw new DryRun(result)
        return result
      },
      {write: true},
    )
  } catch (error) {
    if (error instanceof DryRun) return error.result
    throw error
  }
}

type Plan = {api: string; base: {after: number; before: number}; countryPrices: {after: number; before: null | number; country: string; currency: string}[]; keep: {amount_minor: number; country: string; currency: string}[]}

async function planProduct(store: StorePort, ctx: PricingContext, e: Experiment, arm: Arm, api: string): Promise<Plan> {
  const product = (await getProduct(store, api))!
  const existing = product.country_prices
  if (e.countries.length === 0) {
    const base = armBaseMinor(ctx, e, arm, api) ?? product.base_px_minor
    const countryPrices: Plan['countryPrices'] = []
    for (const cp of existing) {
      const q = (await armQuotes(store, e, arm, cp.country, {currency: cp.currency, products: [api]}))[0]
      countryPrices.push({after: q.price_minor, before: cp.amount_minor, country: cp.country, currency: cp.currency})
    }
    return {api, base: {after: base, before: product.base_px_minor}, countryPrices, keep: []}
  }
  const targeted = new Set(e.countries)
  const countryPrices: Plan['countryPrices'] = []
  for (const country of e.countries) {
    const q = (await armQuotes(store, e, arm, country, {products: [api]}))[0]
    // One product's quote is in its country price's currency (resolveCurrency), so an old price compares as it is.
    const old = existing.find((cp) => cp.country === country)
    countryPrices.push({after: q.price_minor, before: old ? old.amount_minor : null, country, currency: q.currency})
  }
  return {api, base: {after: product.base_px_minor, before: product.base_px_minor}, countryPrices, keep: existing.filter((cp) => !targeted.has(cp.country))}
}

/** A base price in minor units as the number `base_px` is (USD). */
const usd = (minor: number) => fromMinor(minor, 'USD')

async function writeProduct(store: StorePort, p: Plan): Promise<void> {
  const list = [...p.keep.map((cp) => ({after: cp.amount_minor, country: cp.country, currency: cp.currency})), ...p.countryPrices].sort((a, b) => a.country.localeCompare(b.country))
  const patch: Record<string, unknown> = {base_px: usd(p.base.after)}
  // An empty list is refused (the spec's rule): a product without country prices keeps none.
  if (list.length > 0) patch.country_prices = list.map((cp) => ({amount: fromMinor(cp.after, cp.currency), country: cp.country, currency: cp.currency}))
  await updateProduct(store, p.api, patch)
}

function describe(e: Experiment, arm: Arm, plan: Plan[], changes: PriceChange[], stopped: boolean, dryRun: boolean, priced: number): ConcludeResult {
  // Up or down by the prices, not by pct_change: that is null from a price of 0 and rounds to
  // 0 for a cent on a large price. A changed currency is neither ("other").
  const moved = changes.filter((c) => c.change === 'changed')
  const up = moved.filter((c) => c.after! > c.before!).length
  const down = moved.length - up
  const other = changes.length - moved.length
  const summary =
    changes.length === 0
      ? `no price changes (${priced} prices previewed)`
      : `${changes.length} of ${priced} prices change (${up} up, ${down} down${other ? `, ${other} other` : ''}) on ${new Set(changes.map((c) => c.product)).size} product(s)`
  const what = `arm ${arm.id} (${describeArm(e, arm)})`
  const verb = dryRun ? 'would conclude' : 'concluded'
  const stop = stopped ? (dryRun ? 'would stop it' : 'stopped it') : 'it was already stopped'
  return {
    arm_id: armIdOut(arm.id),
    changes,
    dry_run: dryRun,
    experiment: experimentOutput(e),
    message: `${verb} experiment ${e.id} "${e.name}" with ${what}: ${stop}; ${summary}${dryRun ? ' (dry run: nothing written)' : ''}`,
    products: plan.map((p) => ({
      base_px_after: usd(p.base.after),
      base_px_before: usd(p.base.before),
      country_prices: p.countryPrices.map((cp) => ({after: fromMinor(cp.after, cp.currency), before: cp.before === null ? null : fromMinor(cp.before, cp.currency), country: cp.country, currency: cp.currency})),
      product: p.api,
    })),
    stopped,
    success: true,
    summary,
  }
}
