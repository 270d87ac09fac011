import {nowSeconds} from '../clock.js'
import {convertMinor, fromMinor, scaleMinor} from '../currency.js'
import {clampToBounds, withinBounds} from '../experiments/bounds.js'
import {armIdOut, describeArm, outcomes} from '../experiments/model.js'
import {seededRng} from '../experiments/random.js'
import {type ArmOutcome, thompsonChoice} from '../experiments/stats.js'
import type {Arm, Experiment} from '../experiments/store.js'
import {BASELINE} from '../schemas/no-zod.js'
import type {StorePort} from '../store/port.js'
import type {ExperimentsRepository} from '../store/port/experiments.js'
import type {Lock, QuoteChunk} from './locks.js'
import type {PricedProduct, Trace} from './types.js'

/** What an experiment decided for a new lock. */
export type Assignment = {
  arm_id: number | string
  experiment_id: number
  experiment_type: 'packaging' | 'price'
  /** Packaging experiments: the products to show (keys of `products`). */
  products_to_select: string[]
}

export type AssignInput = {
  audienceId: string
  country: string
  lockKey: string
  products: string[]
  runExperiment: boolean
  userId: null | string
}

/** What the experiment layer needs from the pricing context: rates and the rounding rule. */
export type ExperimentPricing = {
  rate(currency: string): undefined | {rate: number}
  /** Explain only: the rate named with its date and source, and an "fx" step for it. */
  describeRate?(currency: string): string
  noteRate?(trace: Trace, currency: string): void
  round(amountMinor: number, currency: string): {minor: number; rule: string; source: string}
  /** The country's localization factor (PPP), undefined when none is imported. */
  localizationFactor?(country: string): number | undefined
}

/** An experiment as the price layer reads it, with lookups prepared once. */
type Loaded = {
  arms: Map<string, Arm>
  countries: null | Set<string>
  exp: Experiment
  productApiIds: Set<string>
  productIds: Set<number>
}

type Posteriors = {index: Map<string, number>; loadedAt: number; outcomes: ArmOutcome[]}

function load(exp: Experiment): Loaded {
  return {
    arms: new Map(exp.arms.map((a) => [a.id, a])),
    countries: exp.countries.length === 0 ? null : new Set(exp.countries),
    exp,
    productApiIds: new Set(exp.products.map((p) => p.api_id)),
    productIds: new Set(exp.products.map((p) => p.id)),
  }
}

/**
 * Experiment layer (DESIGN step 6, highest precedence; docs/experiments.md). One instance
 * per pricing context: experiments are read once (load()), posteriors are cached and kept
 * current with this process's own exposures, and read again from the store after
 * `posteriorTtlMs` (conversions are recorded by other processes) or on `refresh()`.
 */
export class Experiments {
  private readonly store: StorePort
  private readonly pricing: ExperimentPricing
  private running: Loaded[] = []
  private readonly byId = new Map<number, Loaded>()
  private readonly posteriors = new Map<number, Posteriors>()
  /** How long cached posteriors are trusted before the store is read again. */
  posteriorTtlMs = 10_000
  /** Force one arm of one experiment (the simulation's probes of each arm's price); never set by the price command. */
  pin?: {armId: string; experimentId: number}
  /**
   * Price every request under this arm of this price experiment, whatever its status and
   * target (lock-free previews of an arm: `price preview --arm`, `experiments results`
   * labels, `experiments conclude`); never set by the price command.
   */
  force?: {armId: string; experimentId: number}

  /**
   * The chunk of price requests being priced (PricingContext's): exposures and adoptions
   * are written at its flush, and what assignment reads is read when it begins (prepare()).
   */
  private readonly chunk: QuoteChunk

  constructor(store: StorePort, pricing: ExperimentPricing, chunk: QuoteChunk) {
    this.store = store
    this.pricing = pricing
    this.chunk = chunk
    chunk.prepare = async (keys) => await this.prepare(keys)
  }

  /**
   * A chunk begins with requests that may make new quotes (`keys`, their lock keys): the
   * posteriors of the running Thompson experiments are read again when missing or older than
   * posteriorTtlMs, and the arms those visitors are exposed to in them, so that assignment
   * and recordExposure read memory only while the chunk is priced.
   */
  private async prepare(keys: readonly string[]): Promise<void> {
    for (const l of this.running) {
      if (l.exp.allocation !== 'thompson') continue
      const p = this.posteriors.get(l.exp.id)
      if (!p || Date.now() - p.loadedAt > this.posteriorTtlMs) await this.loadPosteriors(l)
      await this.chunk.loadArms(l.exp.id, keys)
    }
  }

  private get repo(): ExperimentsRepository {
    return this.store.experiments
  }

  /** Pick an arm for a new lock, or undefined when no running experiment targets it. */
  assign(input: AssignInput, trace: Trace): Assignment | undefined {
    if (this.force) return this.forced(this.force, input, trace)
    if (!input.runExperiment) {
      trace?.push({detail: 'run_experiment is false: no experiment for this request', outcome: 'skipped', step: 'experiment'})
      return undefined
    }
    const running = this.runningExperiments()
    if (running.length === 0) {
      trace?.push({detail: 'no running experiment', outcome: 'skipped', step: 'experiment'})
      return undefined
    }
    const target = running.find((l) => this.targets(l, input, trace))
    if (!target) return undefined
    const {exp} = target
    const index = this.choose(target, input.lockKey)
    const arm = exp.arms[index]
    let select: string[] = []
    if (exp.type === 'packaging') select = arm.products ? input.products.filter((p) => arm.products!.includes(p)) : [...input.products]
    trace?.push({
      detail: `experiment ${exp.id} "${exp.name}" (${exp.type}, ${exp.allocation}${this.pin ? ', pinned' : ''}): arm ${arm.id} (${describeArm(exp, arm)})` +
        (exp.type === 'packaging' ? `, shows ${select.join(', ')}` : ''),
      outcome: 'chose',
      step: 'experiment',
    })
    return {arm_id: armIdOut(arm.id), experiment_id: exp.id, experiment_type: exp.type, products_to_select: select}
  }

  private forced(force: {armId: string; experimentId: number}, input: AssignInput, trace: Trace): Assignment | undefined {
    const l = this.experiment(force.experimentId)
    const arm = l?.arms.get(force.armId)
    if (!l || !arm || l.exp.type !== 'price' || !input.products.some((p) => l.productApiIds.has(p))) return undefined
    trace?.push({detail: `experiment ${l.exp.id} "${l.exp.name}": arm ${arm.id} (${describeArm(l.exp, arm)}) forced for a preview`, outcome: 'chose', step: 'experiment'})
    return {arm_id: armIdOut(arm.id), experiment_id: l.exp.id, experiment_type: 'price', products_to_select: []}
  }

  /**
   * The arm's price for a product of the lock's experiment, inside [min_px, max_px];
   * undefined to keep the control price. A multiplier scales the control price (country
   * price, localization and all); a USD price is localized as a base price is: FX, times
   * the country's localization factor, then rounded (DESIGN step 6).
   */
  armPrice(lock: Lock, product: PricedProduct, controlMinor: number, currency: string, trace: Trace, country?: string): number | undefined {
    const step = `price ${product.api_id}`
    const loaded = this.experiment(lock.experiment_id)
    if (!loaded || loaded.exp.type !== 'price') return undefined
    if (!loaded.productIds.has(product.id)) {
      trace?.push({detail: `experiment ${loaded.exp.id} does not price ${product.api_id}: control price`, outcome: 'skipped', step})
      return undefined
    }
    const arm = loaded.arms.get(String(lock.arm_id))
    if (!arm || arm.id === BASELINE) {
      trace?.push({detail: `arm ${lock.arm_id} of experiment ${loaded.exp.id} is the control: price kept`, outcome: 'skipped', step})
      return undefined
    }
    const rate = this.pricing.rate(currency)!.rate
    let price: number
    let how: string
    if (arm.multiplier !== null) {
      const raw = scaleMinor(controlMinor, arm.multiplier)
      const r = this.pricing.round(raw, currency)
      price = r.minor
      how = `control ${fromMinor(controlMinor, currency)} x ${arm.multiplier} = ${fromMinor(raw, currency)}, rounded by the ${r.source} rule "${r.rule}" to ${fromMinor(price, currency)} ${currency}`
    } else {
      const factor = country === undefined ? undefined : this.pricing.localizationFactor?.(country)
      if (currency === 'USD' && factor === undefined) {
        // Nothing converted or localized: the arm's USD price is used as set, like a USD base price.
        price = arm.usd_price_minor!
        how = `USD price ${fromMinor(price, 'USD')} used as set`
      } else {
        const converted = convertMinor(arm.usd_price_minor!, 'USD', 1, currency, rate)
        const raw = factor === undefined ? converted : scaleMinor(converted, factor)
        const r = this.pricing.round(raw, currency)
        price = r.minor
        if (trace) this.pricing.noteRate?.(trace, currency)
        how =
          `USD price ${fromMinor(arm.usd_price_minor!, 'USD')} x ${this.pricing.describeRate?.(currency) ?? rate}` +
          (factor === undefined ? '' : ` x factor ${factor} for ${country}`) +
          ` = ${fromMinor(raw, currency)} ${currency}, rounded by the ${r.source} rule "${r.rule}" to ${fromMinor(price, currency)}`
      }
    }
    const min = product.min_px_minor
    const max = product.max_px_minor
    const bounded = clampToBounds(price, currency, rate, min, max)
    if (!bounded) {
      trace?.push({detail: `arm ${arm.id}: ${how}; no ${currency} amount fits the bounds [${bound(min)}, ${bound(max)}] USD: control price kept`, outcome: 'skipped', step})
      return undefined
    }
    if (bounded.clamped) {
      // A bound wins over the rounding rule; the rounded bound is used when it still fits.
      const nicer = this.pricing.round(bounded.minor, currency).minor
      const final = withinBounds(nicer, currency, rate, min, max) ? nicer : bounded.minor
      trace?.push({
        detail: `arm ${arm.id} of experiment ${loaded.exp.id}: ${how}; ${bounded.clamped === 'max' ? `above max_px ${bound(max)}` : `below min_px ${bound(min)}`} USD, so ${fromMinor(final, currency)} ${currency}`,
        outcome: 'applied',
        step,
      })
      return final
    }
    trace?.push({detail: `arm ${arm.id} of experiment ${loaded.exp.id}: ${how} (within [${bound(min)}, ${bound(max)}] USD)`, outcome: 'applied', step})
    return price
  }

  /** Record the exposure of a lock that received an arm (after the lock is saved). */
  recordExposure(lock: Lock): void {
    if (lock.experiment_id === 0) return
    const arm = String(lock.arm_id)
    const x = {anonymous: lock.anonymous, armId: arm, at: nowSeconds(), experimentId: lock.experiment_id, visitor: lock.lock_key}
    // Written at the chunk's flush; the change is known when the chunk read the visitor's arm.
    const r = this.chunk.recordExposure(x)
    // Keep cached posteriors current with this process's own visitors (no closure per
    // request: a bundle built with keepNames pays a property definition for each).
    const p = this.posteriors.get(lock.experiment_id)
    if (!p || r === undefined || r.change === 'same') return
    const i = p.index.get(arm)
    if (i !== undefined) p.outcomes[i].visitors += 1
    if (r.change === 'moved' && r.previous !== undefined) {
      const j = p.index.get(r.previous)
      if (j !== undefined) p.outcomes[j].visitors -= 1
    }
  }

  /** Every experiment, read once per context (by PricingContext): the running ones target requests, any one may be forced. */
  async load(): Promise<void> {
    for (const e of await this.repo.list()) {
      const l = load(e)
      this.byId.set(e.id, l)
      if (e.status === 'running') this.running.push(l)
    }
  }

  /** A user adopted an anonymous lock that had an arm: the exposure becomes the user's. */
  adoptExposure(lock: Lock, ip: string): void {
    if (lock.experiment_id === 0 || !lock.user_id) return
    this.chunk.adoptExposure({experimentId: lock.experiment_id, ip, userId: lock.user_id})
  }

  /**
   * A conversion this process recorded and knows the arm of (the simulation's sales): the
   * cached posteriors count it as the store would (a user converts once; its value is the
   * subscription's USD per month), without reading the store again.
   */
  recordConversion(experimentId: number, armId: string, revenueMinor: number): void {
    const p = this.posteriors.get(experimentId)
    const i = p?.index.get(armId)
    if (p === undefined || i === undefined) return
    p.outcomes[i].conversions += 1
    p.outcomes[i].revenue_minor += revenueMinor
  }

  /** Read posteriors from the store again on next use (after conversions were recorded). */
  refresh(): void {
    this.posteriors.clear()
  }

  private runningExperiments(): Loaded[] {
    return this.running
  }

  private experiment(id: number): Loaded | undefined {
    return this.byId.get(id)
  }

  /**
   * Does the experiment target this request? Price experiments: any requested product
   * is one of theirs. Packaging experiments: the request holds every product they
   * choose among. Then countries (none = all) and the audience (none = all).
   */
  private targets(l: Loaded, input: AssignInput, trace: Trace): boolean {
    const {exp} = l
    if (exp.type === 'price' ? !input.products.some((p) => l.productApiIds.has(p)) : [...l.productApiIds].some((p) => !input.products.includes(p))) {
      return skipped(exp, trace, exp.type === 'price' ? `prices none of ${input.products.join(', ')}` : `needs all of ${[...l.productApiIds].join(', ')} in the request`)
    }
    if (l.countries && !l.countries.has(input.country)) return skipped(exp, trace, `targets ${exp.countries.join(', ')}, not ${input.country}`)
    if (exp.audience !== null && exp.audience !== input.audienceId) return skipped(exp, trace, `targets audience ${exp.audience}, not ${input.audienceId}`)
    return true
  }

  /**
   * The arm for a new lock. The random draw is seeded by (experiment seed, experiment,
   * lock key), so the same store, seed and visitor give the same arm in any process.
   */
  private choose(l: Loaded, lockKey: string): number {
    const {exp} = l
    if (this.pin && this.pin.experimentId === exp.id) {
      const i = exp.arms.findIndex((a) => a.id === this.pin!.armId)
      if (i >= 0) return i
    }
    const rng = seededRng(exp.seed, exp.id, lockKey)
    if (exp.allocation === 'uniform') return Math.floor(rng() * exp.arms.length)
    return thompsonChoice(this.posteriorsOf(l).outcomes, rng)
  }

  /** The posteriors of an experiment, as prepare() read them when the chunk began (not read again while it is priced). */
  private posteriorsOf(l: Loaded): Posteriors {
    const p = this.posteriors.get(l.exp.id)
    if (p === undefined) throw new Error(`internal error: assigning an arm of experiment ${l.exp.id} needs its posteriors, which its chunk did not read when it began`)
    return p
  }

  private async loadPosteriors(l: Loaded): Promise<Posteriors> {
    const o = outcomes(l.exp, await this.repo.armCounts(l.exp.id))
    const p = {index: new Map(o.map((x, i) => [x.arm_id, i])), loadedAt: Date.now(), outcomes: o}
    this.posteriors.set(l.exp.id, p)
    return p
  }
}

/** An experiment that does not target the request, and why (explain); false. */
function skipped(exp: Experiment, trace: Trace, detail: string): false {
  trace?.push({detail: `experiment ${exp.id}: ${detail}`, outcome: 'skipped', step: 'experiment'})
  return false
}

function bound(minor: null | number): string {
  return minor === null ? 'none' : String(fromMinor(minor, 'USD'))
}
