import {nowIso} from '../clock.js'
import {fromMinor, toMinor} from '../currency.js'
import {ConflictError, InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {
  describeIntegration,
  type FeatureOutput,
  type IntegrationInput,
  integrationKey,
  ProductInput,
  type ProductExport,
  type ProductListEntry,
  type ProductOutput,
  ProductPatch,
  type Trial,
} from '../schemas/catalog.js'
import {formatIssues} from '../schemas/validate.js'
import {chargeabilityCheck, integrationGateways} from '../pricing/gateways.js'
import {type FeatureGroupDef, integrationFromRow, integrationRow, type Product, type ProductDef} from '../store/port/catalog.js'
import type {StorePort} from '../store/port.js'

/**
 * Products: the rules of create, update, import and delete, over the catalog repository of
 * the storage port (store.catalog; no SQL here). Money is integer minor units:
 * `base_px_minor` etc. in USD cents, country prices in their currency's minor unit.
 */

export type {CountryPrice, FeatureDef, FeatureGroupDef, Product, ProductDef} from '../store/port/catalog.js'

// ---------------------------------------------------------------- reading

/** Load products (all, by api_id, or the one with `apiId`) with their country prices, integrations, features and trials. */
export async function loadProducts(store: StorePort, apiId?: string): Promise<Product[]> {
  return apiId === undefined ? await store.catalog.listProducts() : await store.catalog.getProducts([apiId])
}

/** The full product with api_id `apiId`, or undefined. Country prices are minor units of their currency. */
export async function getProduct(store: StorePort, apiId: string): Promise<Product | undefined> {
  return (await store.catalog.getProducts([apiId]))[0]
}

/** Like getProduct, but a missing product is an error naming it and how to find the right one. */
export async function requireProduct(store: StorePort, apiId: string): Promise<Product> {
  const p = await getProduct(store, apiId)
  if (!p) throw new NotFoundError(`no product with api_id ${JSON.stringify(apiId)} (list them with: pricectl products list)`)
  return p
}

// ---------------------------------------------------------------- shapes

export function defOf(p: Product): ProductDef {
  return normalizeDef({
    api_id: p.api_id,
    base_px_minor: p.base_px_minor,
    baseline: p.baseline_api_id,
    country_prices: p.country_prices,
    features: p.features.map((f) => ({
      api_id: f.api_id,
      description: f.description,
      feature_group: f.feature_group ? {api_id: f.feature_group.api_id, description: f.feature_group.description, name: f.feature_group.name} : null,
      name: f.name,
      status: f.status,
      type: f.type,
      unit: f.unit,
      value: f.value,
    })),
    integrations: p.integrations,
    interval: p.interval,
    interval_count: p.interval_count,
    max_px_minor: p.max_px_minor,
    min_px_minor: p.min_px_minor,
    name: p.name,
    product_trials: p.product_trials,
  })
}

/** One canonical key order and defaults, so two definitions compare by JSON text. */
function normalizeDef(d: ProductDef): ProductDef {
  return {
    api_id: d.api_id,
    base_px_minor: d.base_px_minor,
    baseline: d.baseline,
    country_prices: d.country_prices.map((c) => ({amount_minor: c.amount_minor, country: c.country, currency: c.currency})),
    features: d.features.map((f) => ({
      api_id: f.api_id,
      description: f.description,
      feature_group: f.feature_group ? {api_id: f.feature_group.api_id, description: f.feature_group.description, name: f.feature_group.name} : null,
      name: f.name,
      status: f.status,
      type: f.type,
      unit: f.type === 'boolean' ? null : f.unit,
      value: f.type === 'boolean' ? 0 : f.value,
    })),
    integrations: d.integrations.map((i) => integrationFromRow(integrationRow(i))),
    interval: d.interval,
    interval_count: d.interval_count,
    max_px_minor: d.max_px_minor,
    min_px_minor: d.min_px_minor,
    name: d.name,
    product_trials: d.product_trials.map((t) => ({interval: t.interval, interval_count: t.interval_count})),
  }
}

const usd = (minor: null | number) => (minor === null ? null : fromMinor(minor, 'USD'))

/** `products export` shape: the input fields, amounts in currency units; `import` takes it back unchanged. */
export function exportShape(d: ProductDef): ProductExport {
  return {
    api_id: d.api_id,
    base_px: fromMinor(d.base_px_minor, 'USD'),
    baseline: d.baseline,
    // None is no field (an input list holds one or more), so the shape imports back as it is.
    ...(d.country_prices.length > 0 && {country_prices: d.country_prices.map((c) => ({amount: fromMinor(c.amount_minor, c.currency), country: c.country, currency: c.currency}))}),
    features: d.features,
    integrations: d.integrations,
    interval: d.interval,
    interval_count: d.interval_count,
    max_px: usd(d.max_px_minor),
    min_px: usd(d.min_px_minor),
    name: d.name,
    product_trials: d.product_trials,
  }
}

const countryPricesOut = (p: Product) => p.country_prices.map((c) => ({country: c.country, currency: c.currency, local_price: fromMinor(c.amount_minor, c.currency)}))

/** Response of Create product. */
export function createdResponse(p: Product, message: string) {
  return {
    api_id: p.api_id,
    base_px: fromMinor(p.base_px_minor, 'USD'),
    baseline_id: p.baseline_id,
    country_prices: countryPricesOut(p),
    integrations: p.integrations,
    message,
    name: p.name,
    success: true as const,
  }
}

/** "Product as returned by Get product", plus interval and interval_count. */
export function productResponse(p: Product, message: string): ProductOutput {
  return {
    api_id: p.api_id,
    base_px: fromMinor(p.base_px_minor, 'USD'),
    baseline_id: p.baseline_id,
    country_prices: countryPricesOut(p),
    features: p.features,
    integrations: p.integrations,
    interval: p.interval,
    interval_count: p.interval_count,
    max_px: usd(p.max_px_minor),
    message,
    min_px: usd(p.min_px_minor),
    name: p.name,
    product_trials: p.product_trials,
    success: true,
  }
}

export function listEntry(p: Product): ProductListEntry {
  return {api_id: p.api_id, base_px: fromMinor(p.base_px_minor, 'USD'), integrations: p.integrations, max_px: usd(p.max_px_minor), min_px: usd(p.min_px_minor), name: p.name}
}

// ---------------------------------------------------------------- validation

/** One input (a body, a file row) with how to name it in errors. */
export type Item = {
  /** Set when the item could not even be read (a malformed cell); listed with the other failures. */
  error?: string
  label: string
  value: unknown
}

export type RowError = {label: string; message: string}

/**
 * Turn a validated input into a definition. `baseline_id` (a number, as get prints it)
 * is read as the product with that id when `baseline` is not given; a feature's bare
 * `group_id` links an existing group.
 */
async function toDef(store: StorePort, p: ProductInput, problems: string[]): Promise<ProductDef> {
  let baseline: null | string = p.baseline ?? null
  if (p.baseline === undefined && p.baseline_id !== undefined && p.baseline_id !== null) {
    const apiId = (await store.catalog.productApiIds([p.baseline_id])).get(p.baseline_id)
    if (apiId !== undefined) baseline = apiId
    else problems.push(`baseline_id: no product has id ${p.baseline_id} (give the baseline's api_id with --baseline)`)
  }
  const groupIds = (p.features ?? []).flatMap((f) => (f.feature_group || f.group_id === undefined || f.group_id === null ? [] : [f.group_id]))
  const groups = await store.catalog.featureGroups(groupIds)
  return normalizeDef({
    api_id: p.api_id,
    base_px_minor: toMinor(p.base_px, 'USD', 'base_px'),
    baseline,
    country_prices: (p.country_prices ?? []).map((c) => ({amount_minor: toMinor(c.amount, c.currency, 'amount'), country: c.country, currency: c.currency})),
    features: (p.features ?? []).map((f, i) => {
      let group: FeatureGroupDef | null = null
      if (f.feature_group) group = {api_id: f.feature_group.api_id, description: f.feature_group.description ?? '', name: f.feature_group.name}
      else if (f.group_id !== undefined && f.group_id !== null) {
        const g = groups.get(f.group_id)
        if (g) group = g
        else problems.push(`features[${i}].group_id: no feature group has id ${f.group_id} (give feature_group {"api_id", "name"} instead)`)
      }
      return {
        api_id: f.api_id,
        description: f.description ?? '',
        feature_group: group,
        name: f.name,
        status: f.status ?? 'active',
        type: f.type,
        unit: f.unit ?? null,
        value: f.value ?? 0,
      }
    }),
    integrations: p.integrations ?? [],
    interval: p.interval,
    interval_count: p.interval_count,
    max_px_minor: p.max_px === undefined || p.max_px === null ? null : toMinor(p.max_px, 'USD', 'max_px'),
    min_px_minor: p.min_px === undefined || p.min_px === null ? null : toMinor(p.min_px, 'USD', 'min_px'),
    name: p.name,
    product_trials: p.product_trials ?? [],
  })
}

/** Validate one complete product input; problems are pushed, the definition returned when there are none. */
async function parseOne(store: StorePort, value: unknown, problems: string[]): Promise<ProductDef | undefined> {
  const r = ProductInput.safeParse(value)
  if (!r.success) {
    problems.push(formatIssues(r.error.issues, value))
    return undefined
  }
  try {
    const def = await toDef(store, r.data, problems)
    return problems.length ? undefined : def
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error
    problems.push(error.message)
    return undefined
  }
}

type Current = {byApiId: Map<string, Product>}

async function current(store: StorePort): Promise<Current> {
  return {byApiId: new Map((await store.catalog.listProducts()).map((p) => [p.api_id, p]))}
}

/**
 * Rules across products, on the catalog as it would be after the write: unique names,
 * baselines that exist, a gateway id belonging to one product, one definition per
 * feature group.
 */
function crossCheck(now: Current, defs: {def: ProductDef; label: string}[], errors: RowError[]): void {
  const incoming = new Map(defs.map((d) => [d.def.api_id, d]))
  const finalDefs = new Map<string, ProductDef>()
  for (const [id, p] of now.byApiId) if (!incoming.has(id)) finalDefs.set(id, defOf(p))
  for (const [id, d] of incoming) finalDefs.set(id, d.def)
  const labelOf = (apiId: string) => incoming.get(apiId)?.label

  const names = new Map<string, string>()
  for (const [id, d] of finalDefs) {
    const other = names.get(d.name)
    if (other !== undefined) {
      const [mine, theirs] = incoming.has(id) ? [id, other] : [other, id]
      const label = labelOf(mine)
      if (label !== undefined) errors.push({label, message: `name: ${JSON.stringify(d.name)} is already used by product ${JSON.stringify(theirs)} (names are unique; choose another)`})
    } else names.set(d.name, id)
  }

  const owners = new Map<string, string>()
  // Stored products first, so the message blames the incoming one.
  const order = [...finalDefs.keys()].sort((a, b) => Number(incoming.has(a)) - Number(incoming.has(b)))
  for (const id of order) {
    const d = finalDefs.get(id)!
    d.integrations.forEach((it, i) => {
      const k = integrationKey(it)
      const owner = owners.get(k)
      if (owner !== undefined && owner !== id) {
        const label = labelOf(id)
        if (label !== undefined) errors.push({label, message: `integrations[${i}]: ${describeIntegration(it)} already belongs to product ${JSON.stringify(owner)} (a gateway id maps to one product; remove it there first)`})
      } else owners.set(k, id)
    })
  }

  const groupDefs = new Map<string, {def: FeatureGroupDef; label: string}>()
  for (const {def, label} of defs) {
    if (def.baseline !== null && !finalDefs.has(def.baseline)) {
      errors.push({label, message: `baseline: no product with api_id ${JSON.stringify(def.baseline)} (create it first, or check: pricectl products list)`})
    }
    def.features.forEach((f, i) => {
      if (!f.feature_group) return
      const seen = groupDefs.get(f.feature_group.api_id)
      if (seen && JSON.stringify(seen.def) !== JSON.stringify(f.feature_group)) {
        errors.push({label, message: `features[${i}].feature_group: group ${JSON.stringify(f.feature_group.api_id)} is defined differently in ${seen.label || 'another feature'} (a group has one name and description)`})
      } else if (!seen) groupDefs.set(f.feature_group.api_id, {def: f.feature_group, label})
    })
  }
}

/**
 * Country prices the display or a gateway the product charges through cannot represent
 * exactly, and a base price outside a linked gateway's minimum or maximum in USD
 * (docs/money.md, "Bounds are checked when prices are written").
 */
async function checkChargeable(store: StorePort, now: Current, defs: {def: ProductDef; label: string}[], errors: RowError[]): Promise<void> {
  const unchargeable = await chargeabilityCheck(store)
  for (const {def, label} of defs) {
    const gateways = integrationGateways(def.integrations)
    const before = now.byApiId.get(def.api_id)
    // Checked when the base price or the gateways change (a stored product keeps working).
    if (!before || before.base_px_minor !== def.base_px_minor || integrationGateways(before.integrations).join() !== gateways.join()) {
      const reason = gateways.length > 0 ? unchargeable(def.base_px_minor, 'USD', gateways) : undefined
      if (reason) errors.push({label, message: `base_px: ${reason}`})
    }
    // A price already stored unchanged is not refused again (an old store, a rename).
    const stored = new Set((now.byApiId.get(def.api_id)?.country_prices ?? []).map((c) => `${c.country}|${c.currency}|${c.amount_minor}`))
    def.country_prices.forEach((c, i) => {
      if (stored.has(`${c.country}|${c.currency}|${c.amount_minor}`)) return
      const reason = unchargeable(c.amount_minor, c.currency, gateways)
      if (reason) errors.push({label, message: `country_prices[${i}] (${c.country}): ${reason}`})
    })
  }
}

function fail(errors: RowError[], what: string): never {
  throw new InvalidInputError(`invalid ${what}: ${errors.map((e) => e.message).join('; ')}`)
}

/** Every failing row, one per line, so a whole file can be fixed in one pass. */
export function failRows(errors: RowError[], total: number): never {
  const rows = new Set(errors.map((e) => e.label)).size
  throw new InvalidInputError(`${rows} of ${total} row${total === 1 ? ' is' : 's are'} invalid; nothing was written:\n${errors.map((e) => `  ${e.label}: ${e.message}`).join('\n')}`)
}

// ---------------------------------------------------------------- writing

export type WriteResult = {inserted: string[]; unchanged: string[]; updated: string[]}

/** Write definitions in one chunk; a product identical to the stored one is not touched. */
async function writeDefs(store: StorePort, defs: ProductDef[], now: Current, dryRun = false): Promise<WriteResult> {
  const result: WriteResult = {inserted: [], unchanged: [], updated: []}
  const changed: ProductDef[] = []
  for (const d of defs) {
    const old = now.byApiId.get(d.api_id)
    if (old && JSON.stringify(defOf(old)) === JSON.stringify(d)) result.unchanged.push(d.api_id)
    else changed.push(d)
  }
  if (dryRun) {
    for (const d of changed) result[now.byApiId.has(d.api_id) ? 'updated' : 'inserted'].push(d.api_id)
    return result
  }
  if (changed.length === 0) return result
  const saved = await store.catalog.saveProducts(changed, nowIso())
  result.inserted.push(...saved.inserted)
  result.updated.push(...saved.updated)
  return result
}

// ---------------------------------------------------------------- operations

/** Create one product; exit-2 errors for bad fields or a taken name, a conflict (exit 1) for an existing api_id. */
export async function createProduct(store: StorePort, input: unknown): Promise<Product> {
  const problems: string[] = []
  const def = await parseOne(store, input, problems)
  if (!def) throw new InvalidInputError(`invalid product: ${problems.join('; ')}`)
  // Read the catalog and write in one write transaction: no other writer between the checks and the save.
  return await store.transaction(async () => {
    const now = await current(store)
    if (now.byApiId.has(def.api_id)) {
      throw new ConflictError(`api_id: product ${JSON.stringify(def.api_id)} already exists (change it with: pricectl products update ${def.api_id} ...)`)
    }
    const errors: RowError[] = []
    crossCheck(now, [{def, label: ''}], errors)
    await checkChargeable(store, now, [{def, label: ''}], errors)
    if (errors.length) fail(errors, 'product')
    await writeDefs(store, [def], now)
    return (await getProduct(store, def.api_id))!
  }, {write: true})
}

/**
 * Update: the given fields replace the stored ones (country prices, integrations,
 * features and trials as whole lists, as the spec says); the result is validated as a
 * whole product. Returns whether anything changed.
 */
export async function updateProduct(store: StorePort, apiId: string, patch: unknown): Promise<{changed: boolean; product: Product}> {
  return await store.transaction(async () => {
    const existing = await requireProduct(store, apiId)
    const parsed = ProductPatch.safeParse(patch)
    if (!parsed.success) throw new InvalidInputError(`invalid product update: ${formatIssues(parsed.error.issues, patch)}`)
    const fields = Object.fromEntries(Object.entries(patch as Record<string, unknown>).filter(([k, v]) => v !== undefined && k !== 'message' && k !== 'success'))
    if ('api_id' in fields && fields.api_id !== apiId) {
      throw new InvalidInputError(`api_id: ${JSON.stringify(fields.api_id)} cannot replace ${JSON.stringify(apiId)}; api_id is immutable (create a new product with: pricectl products create --api-id ... and delete the old one)`)
    }
    const merged: Record<string, unknown> = {...exportShape(defOf(existing)), ...fields}
    // Whichever of baseline / baseline_id the update names decides the baseline.
    if ('baseline_id' in fields && !('baseline' in fields)) delete merged.baseline
    if ('baseline' in fields) delete merged.baseline_id
    const problems: string[] = []
    const def = await parseOne(store, merged, problems)
    if (!def) throw new InvalidInputError(`invalid product update: ${problems.join('; ')}`)
    const now = await current(store)
    const errors: RowError[] = []
    crossCheck(now, [{def, label: ''}], errors)
    await checkChargeable(store, now, [{def, label: ''}], errors)
    if (errors.length) fail(errors, 'product update')
    const r = await writeDefs(store, [def], now)
    return {changed: r.updated.length > 0, product: (await getProduct(store, apiId))!}
  }, {write: true})
}

/**
 * Upsert many products (import, demo): every item is validated and the whole set is
 * checked against the catalog first; any failure lists every failing item and writes
 * nothing. Items are complete products: each replaces the stored one. The same save as a
 * single create, with the whole set as the chunk.
 */
export async function upsertProducts(store: StorePort, items: Item[], options: {dryRun?: boolean} = {}): Promise<WriteResult> {
  const errors: RowError[] = []
  const defs: {def: ProductDef; label: string}[] = []
  const seen = new Map<string, string>()
  for (const item of items) {
    if (item.error !== undefined) {
      errors.push({label: item.label, message: item.error})
      continue
    }
    const problems: string[] = []
    const def = await parseOne(store, item.value, problems)
    for (const message of problems) errors.push({label: item.label, message})
    if (!def) continue
    const dup = seen.get(def.api_id)
    if (dup !== undefined) {
      errors.push({label: item.label, message: `api_id: ${JSON.stringify(def.api_id)} is already in ${dup} (one row per product)`})
      continue
    }
    seen.set(def.api_id, item.label)
    defs.push({def, label: item.label})
  }
  return await store.transaction(async () => {
    const now = await current(store)
    crossCheck(now, defs, errors)
    await checkChargeable(store, now, defs, errors)
    if (errors.length) failRows(errors, items.length)
    return await writeDefs(
      store,
      defs.map((d) => d.def),
      now,
      options.dryRun,
    )
  }, {write: !options.dryRun})
}

/** Every product in export shape (sorted by api_id), for `products export`. */
export async function exportProducts(store: StorePort): Promise<ProductExport[]> {
  return (await store.catalog.listProducts()).map((p) => exportShape(defOf(p)))
}

/**
 * Delete a product. Products other records point at (subscriptions, charges,
 * experiments, packages, audience prices) are kept unless `force`: deleting them
 * unlinks revenue from its product.
 */
export async function deleteProduct(store: StorePort, apiId: string, options: {force?: boolean} = {}): Promise<{baselineOf: string[]; product: Product}> {
  return await store.transaction(async () => {
    const product = await requireProduct(store, apiId)
    const counts = await store.catalog.productUses(product.id)
    const uses: string[] = []
    for (const [key, what] of [
      ['subscriptions', 'subscription'],
      ['charges', 'charge'],
      ['experiments', 'experiment'],
      ['packages', 'package'],
      ['audience_prices', 'audience price'],
    ] as const) {
      const n = counts[key]
      if (n > 0) uses.push(`${n} ${what}${n === 1 ? '' : 's'}`)
    }
    if (uses.length > 0 && !options.force) {
      throw new OperationalError(`product ${JSON.stringify(apiId)} is used by ${uses.join(', ')}; pass --force to delete it anyway (those records lose their product link)`)
    }
    const {baselineOf} = await store.catalog.deleteProduct(product.id)
    return {baselineOf, product}
  }, {write: true})
}
