import {parse as parseCsv} from 'csv-parse/sync'
import {readFileSync} from 'node:fs'

import {minorDigits} from '../currency.js'
import {InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {type PreviewRow as Row} from '../schemas/price.js'
import {armIdOut} from '../experiments/model.js'
import type {StorePort} from '../store/port.js'
import {PricingContext} from './context.js'
import {priceRequest} from './price.js'

export type PreviewRow = {country: string; currency: string; prices: Record<string, string>}

/**
 * The synthetic user of a preview. The request carries `override`, so a lock that happens
 * to exist under this id never wins over the requested country; with `dryRun` nothing is
 * written (no lock, no user country, no exposure).
 */
const PREVIEW_USER = 'pricectl-preview'

/**
 * What a fresh user in each country would be quoted for each product (control prices, no
 * experiment arm), computed as `price` would but without writing a lock.
 */
export async function pricePreview(store: StorePort, products: string[], countries: string[]): Promise<PreviewRow[]> {
  const ctx = await PricingContext.open(store)
  const rows: PreviewRow[] = []
  for (const country of countries) {
    const r = await priceRequest(ctx, {country, override: true, products, run_experiment: false, user_id: PREVIEW_USER}, {dryRun: true})
    const prices: Record<string, string> = {}
    for (const [id, p] of Object.entries(r.products)) prices[id] = p.display.price_with_baseline_strike
    rows.push({country, currency: r.currency, prices})
  }
  return rows
}

export type PreviewOptions = {
  /** With `experiment`: the arms to price under ('all' = every arm, the baseline included); default every arm. */
  arms?: string[]
  /** Price as these audiences (api_ids, 'default', or 'all' = every audience and the default); default: as the features match. */
  audiences?: string[]
  countries?: string[]
  /** A price experiment whose arms to preview (any status, any target): each row names its arm. */
  experiment?: number
  features?: Record<string, boolean | number | string>
  integrations?: string[]
  products?: string[]
  /**
   * When given, a product that cannot be priced in a country (invalid input: a price above
   * a gateway's maximum, a missing rate) is reported here and the other products are priced;
   * otherwise the first such error is thrown.
   */
  errors?: PreviewError[]
}

/** A product a preview could not price in a country (and audience, and arm), and why. */
export type PreviewError = {arm?: number | string; audience: string; country: string; message: string; product: string}

/**
 * The default countries of a preview: every country that has a country price or a
 * localization factor (where prices are set by hand), plus the store's default country.
 */
export async function previewCountries(ctx: PricingContext): Promise<string[]> {
  const rows = await ctx.store.pricing.pricedCountries()
  return [...new Set([...rows, ctx.defaultCountry])].sort()
}

/** Audiences of a preview, checked: 'all' = every audience, highest priority first, then the default. */
function previewAudiences(ctx: PricingContext, wanted: string[] | undefined): (string | undefined)[] {
  if (!wanted?.length) return [undefined]
  const known = ctx.segments.audienceIds()
  const out: string[] = []
  for (const a of wanted) {
    if (a === 'all') out.push(...known, 'default')
    else if (a === 'default' || known.includes(a)) out.push(a)
    else throw new NotFoundError(`--audience: unknown audience ${JSON.stringify(a)} (known: ${[...known, 'default'].join(', ')}; or "all"; see "pricectl audiences list")`)
  }
  return [...new Set(out)]
}

/** Arms of a preview, checked against the experiment: 'all' (or none given) = every arm, the baseline first. */
async function previewArms(store: StorePort, experiment: number | undefined, wanted: string[] | undefined): Promise<{armIds: (string | undefined)[]; experimentId?: number; products?: string[]}> {
  if (experiment === undefined) {
    if (wanted?.length) throw new InvalidInputError('--arm previews an experiment\'s arms: add --experiment ID (see "pricectl experiments list")')
    return {armIds: [undefined]}
  }
  const e = (await store.experiments.get([experiment]))[0]
  if (!e) throw new NotFoundError(`--experiment: no experiment ${experiment} (see "pricectl experiments list")`)
  if (e.type !== 'price') throw new InvalidInputError(`--experiment ${experiment} is a packaging experiment: its arms choose products, not prices; preview a price experiment`)
  const ids = e.arms.map((a) => a.id)
  const products = e.products.map((p) => p.api_id)
  if (!wanted?.length || wanted.includes('all')) return {armIds: ids, experimentId: experiment, products}
  for (const a of wanted) {
    if (!ids.includes(a)) throw new InvalidInputError(`--arm: experiment ${experiment} has no arm ${JSON.stringify(a)} (its arms: ${ids.join(', ')}; or "all")`)
  }
  return {armIds: [...new Set(wanted)], experimentId: experiment, products}
}

/**
 * Lock-free prices of products x countries (price preview), as a new user with the given
 * features would be quoted them; with `audiences`, as each of those audiences; with
 * `experiment`, under each of its arms (rows then carry `arm`). Rows sorted by product,
 * country, audience, arm. Writes nothing.
 */
export async function previewPrices(store: StorePort, options: PreviewOptions = {}): Promise<Row[]> {
  const ctx = await PricingContext.open(store)
  const {armIds, experimentId, products: armProducts} = await previewArms(store, options.experiment, options.arms)
  // An experiment's preview defaults to the products it prices.
  const products = options.products?.length ? [...new Set(options.products)] : (armProducts ?? await store.pricing.productApiIds())
  if (products.length === 0) throw new OperationalError('there are no products to preview: add one with "pricectl products create"')
  const countries = options.countries?.length ? [...new Set(options.countries)] : await previewCountries(ctx)
  const audiences = previewAudiences(ctx, options.audiences)
  const rows: Row[] = []
  try {
    for (const audience of audiences) {
      ctx.segments.force = audience
      for (const armId of armIds) {
        ctx.experiments.force = armId === undefined || experimentId === undefined ? undefined : {armId, experimentId}
        for (const country of countries) rows.push(...await previewCountry(ctx, country, products, options, armId))
      }
    }
  } finally {
    ctx.segments.force = undefined
    ctx.experiments.force = undefined
  }
  return rows.sort((a, b) => rowKey(a).localeCompare(rowKey(b)))
}

async function previewCountry(ctx: PricingContext, country: string, products: string[], options: PreviewOptions, armId: string | undefined): Promise<Row[]> {
  if (!options.errors) return await previewProducts(ctx, country, products, options, armId)
  try {
    return await previewProducts(ctx, country, products, options, armId)
  } catch (error) {
    if (!(error instanceof InvalidInputError || error instanceof NotFoundError) || products.length === 0) throw error
  }
  // One product spoils the request: price them one by one, so the others still get rows.
  const rows: Row[] = []
  for (const product of products) {
    try {
      rows.push(...await previewProducts(ctx, country, [product], options, armId))
    } catch (error) {
      if (!(error instanceof InvalidInputError || error instanceof NotFoundError)) throw error
      const e: PreviewError = {audience: ctx.segments.force ?? 'default', country, message: error.message, product}
      if (armId !== undefined) e.arm = armIdOut(armId)
      options.errors.push(e)
    }
  }
  return rows
}

async function previewProducts(ctx: PricingContext, country: string, products: string[], options: PreviewOptions, armId: string | undefined): Promise<Row[]> {
  const layers: Record<string, string> = {}
  const r = await priceRequest(
    ctx,
    {country, features: options.features, integrations: options.integrations, override: true, products, run_experiment: armId !== undefined, user_id: PREVIEW_USER},
    {dryRun: true, onQuote: (lock) => {
      for (const [id, p] of Object.entries(lock.quote.products)) layers[id] = p.layer
    }},
  )
  return Object.entries(r.products).map(([product, p]) => {
    const row: Row = {
      audience: r.audience.api_id,
      country,
      currency: r.currency,
      display: p.display.price,
      layer: layers[product] ?? 'base',
      price: p.price,
      price_usd: p.price_usd,
      product,
    }
    if (armId !== undefined) row.arm = armIdOut(armId)
    if (options.integrations?.length) row.integrations = sortKeys(p.integrations)
    // The shown price (`price`) is what the gate compares: gross under inclusive, net under exclusive.
    if (p.tax) row.tax = {behavior: p.tax.behavior, gross: p.tax.gross, net: p.tax.net, rate: p.tax.rate, tax: p.tax.tax}
    return row
  })
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)))
}

/** The identity of a row in a snapshot (the arm only in previews of an experiment's arms). */
export function rowKey(r: Pick<Row, 'arm' | 'audience' | 'country' | 'product'>): string {
  return `${r.product}|${r.country}|${r.audience}${r.arm === undefined ? '' : `|${r.arm}`}`
}

/** The snapshot text: keys and rows sorted, one field per line, so it diffs well in git. */
export function snapshotJson(rows: Row[]): string {
  return JSON.stringify(sortDeep({rows, success: true}), null, 2) + '\n'
}

function sortDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortDeep)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sortDeep(x)]))
  return v
}

/** A tolerance: an absolute amount in currency units ("0.05") or a percentage ("1%"). */
export type Tolerance = {kind: 'absolute' | 'percent'; value: number}

export function parseTolerance(s: string): Tolerance {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(s)
  if (!m) throw new InvalidInputError(`--tolerance: expected an amount in currency units like 0.05 or a percentage like 1%, got ${JSON.stringify(s)}`)
  return {kind: m[2] ? 'percent' : 'absolute', value: Number(m[1])}
}

/** The rows of a snapshot file: `price preview --output json` or `--output csv`. */
/** A snapshot row: what the gate compares, and the record as the file has it (what `--update` keeps of rows it did not compare). */
export type SnapshotRow = Pick<Row, 'arm' | 'audience' | 'country' | 'currency' | 'price' | 'product'> & {record: Record<string, unknown>}

export function readSnapshot(file: string): SnapshotRow[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new InvalidInputError(`--against ${file}: cannot read it (${(error as Error).message}); make one with "pricectl price preview --output json > ${file}"`)
  }
  const bad = (why: string) => new InvalidInputError(`--against ${file}: ${why}; make a snapshot with "pricectl price preview --output json > ${file}"`)
  let records: Record<string, unknown>[]
  if (text.trimStart().startsWith('{') || text.trimStart().startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw bad(`not valid JSON (${(error as Error).message})`)
    }
    const rows = Array.isArray(parsed) ? parsed : (parsed as {rows?: unknown})?.rows
    if (!Array.isArray(rows)) throw bad('expected {"rows": [...]} as "price preview --output json" prints')
    records = rows as Record<string, unknown>[]
  } else {
    records = parseCsv(text, {columns: true, skip_empty_lines: true, trim: true}) as Record<string, unknown>[]
  }
  return records.map((r, i) => {
    const price = typeof r.price === 'number' ? r.price : Number(r.price)
    for (const f of ['product', 'country', 'currency'] as const) {
      if (typeof r[f] !== 'string' || r[f] === '') throw bad(`row ${i + 1} has no ${f}`)
    }
    if (!Number.isFinite(price)) throw bad(`row ${i + 1} has no numeric price (got ${JSON.stringify(r.price)})`)
    const row: SnapshotRow = {audience: typeof r.audience === 'string' && r.audience ? r.audience : 'default', country: r.country as string, currency: r.currency as string, price, product: r.product as string, record: r}
    // Previews of an experiment's arms (--experiment) name the arm of each row.
    if ((typeof r.arm === 'string' && r.arm !== '') || typeof r.arm === 'number') row.arm = armIdOut(String(r.arm))
    return row
  })
}

export type PriceChange = {
  after: null | number
  arm?: number | string
  audience: string
  before: null | number
  change: 'added' | 'changed' | 'currency' | 'removed' | 'within_tolerance'
  country: string
  currency_after: null | string
  currency_before: null | string
  pct_change: null | number
  product: string
}

/**
 * Snapshot against fresh rows: every difference, and whether the gate fails. A price that
 * moved beyond the tolerance, a changed currency, and an added or removed row all fail
 * (each is a change to what customers are charged that the snapshot must record).
 */
export function comparePrices<B extends Pick<Row, 'arm' | 'audience' | 'country' | 'currency' | 'price' | 'product'>>(
  before: B[],
  after: Row[],
  tolerance: Tolerance,
  scope: PreviewScope = {},
): {changes: PriceChange[]; compared: number; failed: number; notCompared: B[]} {
  const notCompared = before.filter((r) => !inScope(r, scope))
  const old = new Map(before.filter((r) => inScope(r, scope)).map((r) => [rowKey(r), r]))
  const fresh = new Map(after.map((r) => [rowKey(r), r]))
  const changes: PriceChange[] = []
  const keys = [...new Set([...old.keys(), ...fresh.keys()])].sort()
  for (const key of keys) {
    const b = old.get(key)
    const a = fresh.get(key)
    const base: Pick<PriceChange, 'arm' | 'audience' | 'country' | 'product'> = {audience: (a ?? b)!.audience, country: (a ?? b)!.country, product: (a ?? b)!.product}
    if ((a ?? b)!.arm !== undefined) base.arm = (a ?? b)!.arm
    if (!b || !a) {
      changes.push({...base, after: a?.price ?? null, before: b?.price ?? null, change: a ? 'added' : 'removed', currency_after: a?.currency ?? null, currency_before: b?.currency ?? null, pct_change: null})
      continue
    }
    if (a.currency !== b.currency) {
      changes.push({...base, after: a.price, before: b.price, change: 'currency', currency_after: a.currency, currency_before: b.currency, pct_change: null})
      continue
    }
    // Whole minor units, so a cent is a cent whatever the floats say.
    const scale = 10 ** minorDigits(a.currency)
    const diffMinor = Math.round(a.price * scale) - Math.round(b.price * scale)
    if (diffMinor === 0) continue
    const pct = b.price === 0 ? null : Math.round((diffMinor / Math.round(b.price * scale)) * 10_000) / 100
    const beyond = tolerance.kind === 'absolute' ? Math.abs(diffMinor) > tolerance.value * scale + 1e-9 : pct === null || Math.abs(pct) > tolerance.value
    changes.push({...base, after: a.price, before: b.price, change: beyond ? 'changed' : 'within_tolerance', currency_after: a.currency, currency_before: b.currency, pct_change: pct})
  }
  return {changes, compared: keys.length, failed: changes.filter((c) => c.change !== 'within_tolerance').length, notCompared}
}

/** The `comparison` of `price preview --against --json` (and of the library's previewPrices). */
export function gateComparison(against: string, result: ReturnType<typeof comparePrices<SnapshotRow>>, tolerance: string, update = false) {
  return {
    against,
    changes: result.changes,
    compared: result.compared,
    failed: result.failed,
    not_compared: result.notCompared.map(({record: _, ...key}) => key),
    passed: result.failed === 0 || update,
    tolerance,
  }
}

/**
 * What a preview was narrowed to by its flags (-p, --country, --audience, --arm): snapshot
 * rows outside it are not compared (and `--update` keeps them), so a gate on one product
 * against the whole catalog's snapshot checks that product. An unset list is every value.
 */
export type PreviewScope = {arms?: string[]; audiences?: string[]; countries?: string[]; products?: string[]}

export function inScope(r: Pick<Row, 'arm' | 'audience' | 'country' | 'product'>, scope: PreviewScope): boolean {
  return (
    (!scope.products || scope.products.includes(r.product)) &&
    (!scope.countries || scope.countries.includes(r.country)) &&
    (!scope.audiences || scope.audiences.includes(r.audience)) &&
    (!scope.arms || (r.arm !== undefined && scope.arms.includes(String(r.arm))))
  )
}

/** Which flags narrowed the preview, for messages: "-p/--country". */
export function scopeFlags(scope: PreviewScope): string {
  const names: [keyof PreviewScope, string][] = [['products', '-p'], ['countries', '--country'], ['audiences', '--audience'], ['arms', '--arm']]
  return names.filter(([k]) => scope[k]).map(([, f]) => f).join('/')
}

/** The snapshot's key of a row, for messages: "pro_monthly DE", "(audience)", "arm 3". */
export function rowWhere(r: Pick<Row, 'arm' | 'audience' | 'country' | 'product'>): string {
  return `${r.product} ${r.country}${r.audience === 'default' ? '' : ` (${r.audience})`}${r.arm === undefined ? '' : ` arm ${r.arm}`}`
}

/**
 * GitHub Actions error annotations, one per change that fails the gate: the workflow command
 * `::error file=F,title=T::MESSAGE` (the runner reads them from stdout and stderr; they are
 * printed on stderr so stdout stays the result). Properties escape % \r \n : and ,; the
 * message % \r \n.
 */
export function githubAnnotations(changes: PriceChange[], file: string): string[] {
  const data = (v: string) => v.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A')
  const property = (v: string) => data(v).replaceAll(':', '%3A').replaceAll(',', '%2C')
  return changes
    .filter((c) => c.change !== 'within_tolerance')
    .map((c) => `::error file=${property(file)},title=${property(`price gate: ${rowWhere(c)}`)}::${data(describeChange(c))}`)
}

/**
 * A JUnit XML report of a gate (--junit), for CI systems that show test reports: one test
 * case per compared row, failed when its change fails the gate; a snapshot row outside the
 * preview's flags is a skipped case.
 */
export function junitReport(against: string, rows: Row[], result: ReturnType<typeof comparePrices<SnapshotRow>>, scope: PreviewScope): string {
  const xml = (v: string) => v.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;')
  const changed = new Map(result.changes.map((c) => [rowKey(c), c]))
  const keys = new Map<string, Pick<Row, 'arm' | 'audience' | 'country' | 'product'>>()
  for (const r of rows) keys.set(rowKey(r), r)
  for (const c of result.changes) keys.set(rowKey(c), c)
  const cases = [...keys.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, r]) => {
      const c = changed.get(key)
      const open = `    <testcase classname="price gate.${xml(r.product)}" name="${xml(rowWhere(r))}"`
      if (!c || c.change === 'within_tolerance') return `${open}/>`
      return `${open}>\n      <failure type="${c.change}" message="${xml(describeChange(c))}"/>\n    </testcase>`
    })
  const skipped = result.notCompared.map((r) => `    <testcase classname="price gate.${xml(r.product)}" name="${xml(rowWhere(r))}">\n      <skipped message="outside ${xml(scopeFlags(scope))}: not compared"/>\n    </testcase>`)
  const counts = `tests="${cases.length + skipped.length}" failures="${result.failed}" errors="0" skipped="${skipped.length}"`
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="pricectl price gate" ${counts}>`,
    `  <testsuite name="price preview --against ${xml(against)}" ${counts}>`,
    ...cases,
    ...skipped,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n')
}

/** One line of the diff a person reads in a CI log. */
export function describeChange(c: PriceChange): string {
  const where = rowWhere(c)
  switch (c.change) {
    case 'added':
      return `+ ${where}: new row, ${c.after} ${c.currency_after}`
    case 'removed':
      return `- ${where}: row gone (was ${c.before} ${c.currency_before})`
    case 'currency':
      return `~ ${where}: ${c.before} ${c.currency_before} -> ${c.after} ${c.currency_after} (currency changed)`
    default: {
      const pct = c.pct_change === null ? 'from zero' : `${c.pct_change > 0 ? '+' : ''}${c.pct_change}%`
      return `${c.change === 'changed' ? '~' : ' '} ${where}: ${c.before} -> ${c.after} ${c.currency_after} (${pct})${c.change === 'within_tolerance' ? ', within tolerance' : ''}`
    }
  }
}
