import {decodeUtf8, parseJson, readInput} from '../input.js'

import {nowSeconds} from '../clock.js'
import {minorDigits} from '../currency.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import {PricingContext} from '../pricing/context.js'
import {referenceIntervalMinor} from '../pricing/display.js'
import {calculatePrice, priceInChunk} from '../pricing/price.js'
import type {ArmInput, SimulationResult} from '../schemas/experiments.js'
import type {StorePort} from '../store/port.js'
import type {SubscriptionValues} from '../store/port/revenue.js'
import {createProduct} from '../catalog/products.js'
import {numberish} from '../catalog/shortforms.js'
import {createExperiment, parseExperimentId, requireExperiment, startExperiment, stopExperiment} from './manage.js'
import {armIdOut, isBaseline} from './model.js'
import {seededRng} from './random.js'

/** A demand curve: the probability that a visitor buys at a USD price. */
export type DemandPoint = {price: number; probability: number}

const POINT = /^\s*(\d+(?:\.\d+)?)\s*[=:]\s*(\d*\.?\d+(?:e-?\d+)?)\s*$/i

function checkCurve(points: DemandPoint[], what: string): DemandPoint[] {
  if (points.length === 0) throw new InvalidInputError(`${what}: no price points (expected e.g. "7.99=0.12,9.99=0.10,12.99=0.06")`)
  const seen = new Set<number>()
  for (const p of points) {
    if (!Number.isFinite(p.price) || p.price < 0) throw new InvalidInputError(`${what}: price ${JSON.stringify(p.price)} must be a number of USD, 0 or more`)
    if (!Number.isFinite(p.probability) || p.probability < 0 || p.probability > 1) {
      throw new InvalidInputError(`${what}: probability ${JSON.stringify(p.probability)} at price ${p.price} must be between 0 and 1`)
    }
    if (seen.has(p.price)) throw new InvalidInputError(`${what}: price ${p.price} is given twice`)
    seen.add(p.price)
  }
  return [...points].sort((a, b) => a.price - b.price)
}

/** `PRICE=PROBABILITY,...` (USD price per billing period = conversion probability). */
export function parseDemand(text: string, what = '--demand'): DemandPoint[] {
  const points = text
    .split(/[,;\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      const m = POINT.exec(item)
      if (!m) throw new InvalidInputError(`${what}: expected PRICE=PROBABILITY, got ${JSON.stringify(item)} (e.g. "9.99=0.1")`)
      return {price: Number(m[1]), probability: Number(m[2])}
    })
  return checkCurve(points, what)
}

/**
 * A demand file: JSON (`{"9.99": 0.1, ...}` or `[{"price": 9.99, "probability": 0.1}]`)
 * or CSV/text lines `price,probability` (a header line is skipped).
 */
export function readDemandFile(path: string): DemandPoint[] {
  // A demand curve is a few points: 1 MiB is plenty, and UTF-8 only.
  const what = `--demand-file ${path}`
  const text = decodeUtf8(readInput(path, {limit: 1024 * 1024, what: '--demand-file'}), what)
  const trimmed = text.trim()
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const value = parseJson(trimmed, what)
    if (Array.isArray(value)) {
      return checkCurve(
        value.map((v, i) => {
          const o = v as {price?: unknown; probability?: unknown}
          if (typeof o?.price !== 'number' || typeof o?.probability !== 'number') throw new InvalidInputError(`${what}: [${i}] expected {"price": N, "probability": P}, got ${JSON.stringify(v)}`)
          return {price: o.price, probability: o.probability}
        }),
        what,
      )
    }
    return checkCurve(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => {
        if (!/^\d+(\.\d+)?$/.test(k) || typeof v !== 'number') throw new InvalidInputError(`${what}: expected "PRICE": PROBABILITY, got ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
        return {price: Number(k), probability: v}
      }),
      what,
    )
  }
  const lines = trimmed.split(/\r?\n/).filter((l) => l.trim() && !l.trim().startsWith('#'))
  if (lines.length > 0 && /[a-z]/i.test(lines[0]) && !POINT.test(lines[0].replace(/[,\t]/, '='))) lines.shift()
  return checkCurve(
    lines.map((l, i) => {
      const m = POINT.exec(l.replace(/[,\t]/, '='))
      if (!m) throw new InvalidInputError(`${what}: line ${i + 1}: expected price,probability, got ${JSON.stringify(l)}`)
      return {price: Number(m[1]), probability: Number(m[2])}
    }),
    what,
  )
}

/** Conversion probability at a price: linear between points, flat beyond the ends. */
export function conversionProbability(curve: DemandPoint[], price: number): number {
  if (price <= curve[0].price) return curve[0].probability
  const last = curve.at(-1)!
  if (price >= last.price) return last.probability
  for (let i = 1; i < curve.length; i++) {
    const b = curve[i]
    if (price <= b.price) {
      const a = curve[i - 1]
      return a.probability + ((price - a.price) / (b.price - a.price)) * (b.probability - a.probability)
    }
  }
  return last.probability
}

export type Policy = 'thompson' | 'uniform'

/**
 * What to simulate: the arms, product and countries of an experiment of the store, or
 * the given arms on the given product, or on a synthetic monthly product at `basePx`.
 */
export async function simulationArms(
  store: StorePort,
  options: {arms?: unknown[]; basePx?: string; countries?: string[]; experimentId?: string; product?: string},
): Promise<{arms: ArmInput[]; countries?: string[]; product: string}> {
  if (options.experimentId !== undefined) {
    const e = await requireExperiment(store, parseExperimentId(options.experimentId))
    if (e.type !== 'price') throw new InvalidInputError(`experiment ${e.id} is a packaging experiment: simulate takes price experiments (a demand curve is a price curve)`)
    const product = options.product ?? e.products[0]?.api_id
    if (!product || !e.products.some((p) => p.api_id === product)) throw new InvalidInputError(`--product: experiment ${e.id} does not price ${JSON.stringify(product)} (it prices ${e.products.map((p) => p.api_id).join(', ')})`)
    const arms = (options.arms as ArmInput[] | undefined) ?? e.arms.filter((a) => !isBaseline(a)).map((a) => ({id: armIdOut(a.id), multiplier: a.multiplier, usd_price: a.usd_price_minor === null ? null : a.usd_price_minor / 100}))
    return {arms, countries: options.countries ?? (e.countries.length ? e.countries : undefined), product}
  }
  if (!options.arms?.length) throw new InvalidInputError('missing arms: pass --arm x0.8 --arm x1.2 (or an experiment id with --db)')
  if (options.product) return {arms: options.arms as ArmInput[], countries: options.countries, product: options.product}
  let apiId = 'sim_product'
  for (let i = 2; await store.experiments.productNamed(apiId); i++) apiId = `sim_product_${i}`
  await createProduct(store, {api_id: apiId, base_px: numberish(options.basePx ?? '10'), interval: 'month', interval_count: 1, name: apiId})
  return {arms: options.arms as ArmInput[], countries: options.countries, product: apiId}
}

export type SimulationOptions = {
  arms: ArmInput[]
  /** Visitors between posterior updates: how late the bandit learns of conversions. */
  batch?: number
  countries?: string[]
  demand: DemandPoint[]
  /** Window at the end for the share of visitors the best arm got. */
  last?: number
  onProgress?: (policy: string, done: number, total: number) => void
  policies?: Policy[]
  /** Points of each cumulative series in the result. */
  points?: number
  product: string
  seed: number
  /** Path of the store, reported in the result (null when it was removed). */
  storePath?: null | string
  visitors: number
}

type Probe = {arm_id: string; byCountry: Map<string, {monthlyMinor: number; p: number; priceUsd: number}>}

/**
 * `experiments simulate`: synthetic visitors through the real price engine and a real
 * store. For each policy an experiment is created and started, every visitor is priced
 * (lock, arm, exposure; a batch of visitors is one chunk), buys with the demand curve's probability at
 * the quoted USD price (a subscription row, attributed like any other), and the bandit
 * sees conversions every `batch` visitors. All policies see the same visitors and the
 * same random numbers, so their difference is the policy's. The oracle is the best
 * fixed arm, known from the demand curve and each arm's quoted price.
 */
export async function simulate(store: StorePort, options: SimulationOptions): Promise<SimulationResult> {
  const policies = options.policies ?? ['thompson', 'uniform']
  const countries = options.countries?.length ? options.countries : ['US']
  const batch = options.batch ?? 100
  const n = options.visitors
  const last = Math.min(options.last ?? 1000, n)
  const pointsWanted = Math.max(2, Math.min(options.points ?? 50, n))
  const {product} = options
  const productRow = (await store.experiments.productsByApiId([product])).get(product)
  if (!productRow) throw new NotFoundError(`--product: unknown product ${JSON.stringify(product)} (see "pricectl products list")`)

  // A visitor is one lock: running experiments of the store's own on this product would take them.
  for (const e of await store.experiments.list('running')) if (e.products.some((p) => p.api_id === product)) await stopExperiment(store, e.id)

  // The same uniform draw per visitor for every policy (common random numbers).
  const u = new Float64Array(n)
  const draw = seededRng(options.seed, 'visitors')
  for (let i = 0; i < n; i++) u[i] = draw()

  const runs: Partial<Record<Policy, ReturnType<typeof emptyRun>>> = {}
  const experiments: Partial<Record<Policy, number>> = {}
  let probes: Probe[] | undefined
  let bestIndex = 0

  for (const policy of policies) {
    // Visitor ids come from the experiment id: a fresh store gives the same ids, hence the same draws, every run.
    const exp = await createExperiment(store, {allocation: policy, arms: options.arms, countries: options.countries?.length ? countries : undefined, name: `simulation ${policy} seed ${options.seed}`, products: [product], seed: options.seed, type: 'price'})
    await startExperiment(store, exp.id)
    experiments[policy] = exp.id
    const ctx = await PricingContext.open(store)
    if (!probes) {
      probes = await probeArms(ctx, exp.id, exp.arms.map((a) => a.id), product, countries, options.demand, productRow)
      bestIndex = bestArm(probes)
    }
    const run = emptyRun(exp.arms.map((a) => a.id))
    const every = Math.max(1, Math.floor(n / pointsWanted))
    for (let start = 0; start < n; start += batch) {
      const end = Math.min(n, start + batch)
      // One write transaction and one chunk per batch: the visitors are distinct users without
      // an IP, so the chunk reads every lock when it begins and the calculation awaits nothing.
      // Their subscriptions are saved after the flush wrote their exposures.
      const visitors = Array.from({length: end - start}, (_, k) => ({country: countries[(start + k) % countries.length], products: [product], user_id: `sim-${exp.id}-${start + k}`}))
      const sales: SubscriptionValues[] = []
      const converted: {arm: string; monthly: number}[] = []
      await store.transaction(async () => {
        await ctx.chunk.begin(visitors, {distinct: true})
        try {
          for (let i = start; i < end; i++) {
            const {country, user_id: user} = visitors[i - start]
            const quote = priceInChunk(ctx, visitors[i - start])
            const arm = String(quote.variants.arm_id)
            const p = quote.products[product]
            run.allocation[arm] = (run.allocation[arm] ?? 0) + 1
            if (i >= n - last && arm === exp.arms[bestIndex].id) run.bestLast++
            if (u[i] < conversionProbability(options.demand, p.price_usd)) {
              const usdMinor = Math.round(p.price_usd * 100)
              const monthly = referenceIntervalMinor(usdMinor, productRow.interval, productRow.interval_count)
              const now = nowSeconds()
              sales.push({
                amount_minor: Math.round(p.price * 10 ** minorDigits(quote.currency)),
                amount_usd_minor: usdMinor,
                amount_usd_monthly_minor: monthly,
                cancel_at: null,
                canceled_at: null,
                country,
                created: now,
                currency: quote.currency,
                interval: productRow.interval,
                interval_count: productRow.interval_count,
                latest_event_id: `${user}-created`,
                latest_event_timestamp: now,
                origin: 'gateway_a',
                origin_id: `${user}-sub`,
                tax_minor: 0,
                product_id: productRow.id,
                status: 'active',
                trial_end: null,
                trial_start: null,
                user_id: user,
              })
              converted.push({arm, monthly})
              run.conversions++
              run.revenueMinor += monthly
            }
            if ((i + 1) % every === 0 || i === n - 1) run.series.push({revenue_per_visitor: round4(run.revenueMinor / 100 / (i + 1)), visitors: i + 1})
          }
          await ctx.chunk.flush()
        } finally {
          ctx.chunk.close()
        }
        if (sales.length > 0) await store.revenue.save('subscriptions', sales)
      }, {write: true})
      // Conversions recorded in this batch reach the bandit now, counted in its cached posteriors:
      // reading them from the store again would count every exposure so far, per batch.
      for (const c of converted) ctx.experiments.recordConversion(exp.id, c.arm, c.monthly)
      options.onProgress?.(policy, end, n)
    }
    await stopExperiment(store, exp.id)
    runs[policy] = run
  }

  // The oracle: the best fixed arm, with the same visitors and draws.
  const oracle = emptyRun(probes!.map((p) => p.arm_id))
  const best = probes![bestIndex]
  const every = Math.max(1, Math.floor(n / pointsWanted))
  for (let i = 0; i < n; i++) {
    const c = best.byCountry.get(countries[i % countries.length])!
    if (u[i] < c.p) {
      oracle.conversions++
      oracle.revenueMinor += c.monthlyMinor
    }
    if ((i + 1) % every === 0 || i === n - 1) oracle.series.push({revenue_per_visitor: round4(oracle.revenueMinor / 100 / (i + 1)), visitors: i + 1})
  }
  oracle.allocation[best.arm_id] = n
  oracle.bestLast = last

  const summary = (r: ReturnType<typeof emptyRun>) => ({
    allocation: r.allocation,
    best_arm_share_last: last === 0 ? 0 : round4(r.bestLast / last),
    conversions: r.conversions,
    revenue: Math.round(r.revenueMinor) / 100,
    revenue_per_visitor: n === 0 ? 0 : round4(r.revenueMinor / 100 / n),
    series: r.series,
  })
  const arms = probes!.map((p) => {
    const cs = [...p.byCountry.values()]
    const mean = (f: (x: (typeof cs)[number]) => number) => cs.reduce((s, x) => s + f(x), 0) / cs.length
    return {
      arm_id: armIdOut(p.arm_id),
      conversion_probability: round4(mean((x) => x.p)),
      price_usd: Math.round(mean((x) => x.priceUsd) * 100) / 100,
      true_revenue_per_visitor: round4(mean((x) => (x.p * x.monthlyMinor) / 100)),
    }
  })
  return {
    arms,
    best_arm: armIdOut(best.arm_id),
    experiments,
    last,
    message: `simulated ${n} visitors per policy (seed ${options.seed})`,
    policies: {
      oracle: summary(oracle),
      ...(runs.thompson ? {thompson: summary(runs.thompson)} : {}),
      ...(runs.uniform ? {uniform: summary(runs.uniform)} : {}),
    },
    product,
    seed: options.seed,
    store: options.storePath ?? null,
    success: true,
    visitors: n,
  }
}

function emptyRun(arms: string[]) {
  return {
    allocation: Object.fromEntries(arms.map((a) => [a, 0])) as Record<string, number>,
    bestLast: 0,
    conversions: 0,
    revenueMinor: 0,
    series: [] as {revenue_per_visitor: number; visitors: number}[],
  }
}

/** Each arm's quoted price per country, by pricing a probe with the arm pinned (dry run: nothing written). */
async function probeArms(ctx: PricingContext, experimentId: number, armIds: string[], product: string, countries: string[], demand: DemandPoint[], row: {interval: string; interval_count: number}): Promise<Probe[]> {
  const out: Probe[] = []
  try {
    for (const armId of armIds) {
      ctx.experiments.pin = {armId, experimentId}
      const byCountry = new Map<string, {monthlyMinor: number; p: number; priceUsd: number}>()
      for (const country of countries) {
        const q = await calculatePrice(ctx, {country, products: [product], user_id: `probe-${experimentId}-${armId}-${country}`}, {dryRun: true})
        const priceUsd = q.products[product].price_usd
        const monthlyMinor = referenceIntervalMinor(Math.round(priceUsd * 100), row.interval, row.interval_count)
        byCountry.set(country, {monthlyMinor, p: conversionProbability(demand, priceUsd), priceUsd})
      }
      out.push({arm_id: armId, byCountry})
    }
  } finally {
    ctx.experiments.pin = undefined
  }
  return out
}

function bestArm(probes: Probe[]): number {
  let best = 0
  let top = -Infinity
  probes.forEach((p, i) => {
    let rpv = 0
    for (const c of p.byCountry.values()) rpv += c.p * c.monthlyMinor
    if (rpv > top + 1e-9) {
      top = rpv
      best = i
    }
  })
  return best
}

function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000
}

