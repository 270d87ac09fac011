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
import type {DB} from '../store/db.js'
import {chargeabilityCheck, integrationGateways} from '../pricing/gateways.js'
import type {ProductRow} from './lookup.js'
import {storeOfHandle} from '../store/sqlite/store.js'

/**
 * Products: the repository (all product SQL lives here) and the rules of create,
 * update, import and delete. Money is integer minor units: `base_px_minor` etc. in USD
 * cents, country prices in their currency's minor unit.
 */

export type CountryPrice = {amount_minor: number; country: string; currency: string}

export type FeatureGroupDef = {api_id: string; description: string; name: string}

/** A feature as stored, its group given by api_id (ids differ between stores). */
export type FeatureDef = {
  api_id: string
  description: string
  feature_group: FeatureGroupDef | null
  name: string
  status: 'active' | 'inactive'
  type: 'boolean' | 'numeric'
  unit: null | string
  value: number
}

/** A product's whole definition in minor units, store-independent (baseline by api_id). */
export type ProductDef = {
  api_id: string
  base_px_minor: number
  baseline: null | string
  country_prices: CountryPrice[]
  features: FeatureDef[]
  integrations: IntegrationInput[]
  interval: ProductRow['interval']
  interval_count: number
  max_px_minor: null | number
  min_px_minor: null | number
  name: string
  product_trials: Trial[]
}

/** A stored product with everything hanging off it: what `products get` and the price command read. */
export type Product = ProductRow & {
  baseline_api_id: null | string
  country_prices: CountryPrice[]
  created_at: string
  features: FeatureOutput[]
  integrations: IntegrationInput[]
  product_trials: Trial[]
  updated_at: string
}

type Row = ProductRow & {created_at: string; updated_at: string}

// ---------------------------------------------------------------- reading

/** Load products (all, or the one with `apiId`) with their country prices, integrations, features and trials. */
export function loadProducts(db: DB, apiId?: string): Product[] {
  const rows = (
    apiId === undefined
      ? db.prepare('SELECT * FROM products ORDER BY api_id').all()
      : db.prepare('SELECT * FROM products WHERE api_id = ?').all(apiId)
  ) as Row[]
  if (rows.length === 0) return []
  const one = apiId === undefined ? '' : 'WHERE product_id = ?'
  const args = apiId === undefined ? [] : [rows[0].id]
  const group = <T extends {product_id: number}>(list: T[]) => {
    const m = new Map<number, T[]>()
    for (const r of list) {
      const l = m.get(r.product_id)
      if (l) l.push(r)
      else m.set(r.product_id, [r])
    }
    return m
  }
  const prices = group(db.prepare(`SELECT product_id, country, currency, amount_minor FROM country_prices ${one} ORDER BY product_id, position`).all(...args) as (CountryPrice & {product_id: number})[])
  const integrations = group(
    db.prepare(`SELECT product_id, type, gateway_ref, interval, interval_count, currency FROM product_integrations ${one} ORDER BY product_id, position`).all(...args) as {
      currency: null | string
      gateway_ref: string
      interval: null | string
      interval_count: null | number
      product_id: number
      type: IntegrationInput['type']
    }[],
  )
  const features = group(
    db
      .prepare(
        `SELECT f.product_id, f.api_id, f.name, f.description, f.status, f.type, f.unit, f.group_id, f.value,
                g.api_id AS g_api_id, g.name AS g_name, g.description AS g_description
         FROM product_features f LEFT JOIN feature_groups g ON g.id = f.group_id ${one ? 'WHERE f.product_id = ?' : ''} ORDER BY f.product_id, f.position`,
      )
      .all(...args) as (Omit<FeatureOutput, 'feature_group'> & {g_api_id: null | string; g_description: null | string; g_name: null | string; product_id: number})[],
  )
  const trials = group(db.prepare(`SELECT product_id, interval, interval_count FROM product_trials ${one} ORDER BY product_id, position`).all(...args) as (Trial & {product_id: number})[])
  const apiIds = new Map((db.prepare('SELECT id, api_id FROM products WHERE id IN (SELECT baseline_id FROM products)').all() as {api_id: string; id: number}[]).map((r) => [r.id, r.api_id]))

  return rows.map((r) => ({
    api_id: r.api_id,
    base_px_minor: r.base_px_minor,
    baseline_api_id: r.baseline_id === null ? null : (apiIds.get(r.baseline_id) ?? null),
    baseline_id: r.baseline_id,
    country_prices: (prices.get(r.id) ?? []).map(({amount_minor, country, currency}) => ({amount_minor, country, currency})),
    created_at: r.created_at,
    features: (features.get(r.id) ?? []).map((f) => ({
      api_id: f.api_id,
      description: f.description,
      feature_group: f.group_id === null ? null : {api_id: f.g_api_id!, description: f.g_description ?? '', id: f.group_id, name: f.g_name!},
      group_id: f.group_id,
      name: f.name,
      status: f.status,
      type: f.type,
      unit: f.unit,
      value: f.value,
    })),
    id: r.id,
    integrations: (integrations.get(r.id) ?? []).map((i) => integrationFromRow(i)),
    interval: r.interval,
    interval_count: r.interval_count,
    max_px_minor: r.max_px_minor,
    min_px_minor: r.min_px_minor,
    name: r.name,
    product_trials: (trials.get(r.id) ?? []).map(({interval, interval_count}) => ({interval, interval_count})),
    updated_at: r.updated_at,
  }))
}

function integrationFromRow(i: {currency: null | string; gateway_ref: string; interval: null | string; interval_count: null | number; type: IntegrationInput['type']}): IntegrationInput {
  switch (i.type) {
    case 'gateway_a': {
      return {gateway_a_product_id: i.gateway_ref, type: 'gateway_a'}
    }

    case 'gateway_a_with_interval': {
      return {gateway_a_product_id: i.gateway_ref, interval: i.interval as 'month', interval_count: i.interval_count!, type: 'gateway_a_with_interval'}
    }

    case 'gateway_c': {
      return {gateway_c_plan_id: i.gateway_ref, type: 'gateway_c'}
    }

    case 'gateway_d': {
      return {currency: i.currency!, gateway_d_plan_id: i.gateway_ref, type: 'gateway_d'}
    }
  }
}

/** The full product with api_id `apiId`, or undefined. Country prices are minor units of their currency. */
export function getProduct(db: DB, apiId: string): Product | undefined {
  return loadProducts(db, apiId)[0]
}

/** Like getProduct, but a missing product is an error naming it and how to find the right one. */
export function requireProduct(db: DB, apiId: string): Product {
  const p = getProduct(db, apiId)
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

function integrationRow(i: IntegrationInput): {currency: null | string; gateway_ref: string; interval: null | string; interval_count: null | number; type: IntegrationInput['type']} {
  switch (i.type) {
    case 'gateway_a': {
      return {currency: null, gateway_ref: i.gateway_a_product_id, interval: null, interval_count: null, type: i.type}
    }

    case 'gateway_a_with_interval': {
      return {currency: null, gateway_ref: i.gateway_a_product_id, interval: i.interval, interval_count: i.interval_count, type: i.type}
    }

    case 'gateway_c': {
      return {currency: null, gateway_ref: i.gateway_c_plan_id, interval: null, interval_count: null, type: i.type}
    }

    case 'gateway_d': {
      return {currency: i.currency, gateway_ref: i.gateway_d_plan_id, interval: null, interval_count: null, type: i.type}
    }
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
function toDef(db: DB, p: ProductInput, problems: string[]): ProductDef {
  let baseline: null | string = p.baseline ?? null
  if (p.baseline === undefined && p.baseline_id !== undefined && p.baseline_id !== null) {
    const row = db.prepare('SELECT api_id FROM products WHERE id = ?').get(p.baseline_id) as {api_id: string} | undefined
    if (row) baseline = row.api_id
    else problems.push(`baseline_id: no product has id ${p.baseline_id} (give the baseline's api_id with --baseline)`)
  }
  const groups = db.prepare('SELECT api_id, name, description FROM feature_groups WHERE id = ?')
  return normalizeDef({
    api_id: p.api_id,
    base_px_minor: toMinor(p.base_px, 'USD', 'base_px'),
    baseline,
    country_prices: (p.country_prices ?? []).map((c) => ({amount_minor: toMinor(c.amount, c.currency, 'amount'), country: c.country, currency: c.currency})),
    features: (p.features ?? []).map((f, i) => {
      let group: FeatureGroupDef | null = null
      if (f.feature_group) group = {api_id: f.feature_group.api_id, description: f.feature_group.description ?? '', name: f.feature_group.name}
      else if (f.group_id !== undefined && f.group_id !== null) {
        const g = groups.get(f.group_id) as FeatureGroupDef | undefined
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
function parseOne(db: DB, value: unknown, problems: string[]): ProductDef | undefined {
  const r = ProductInput.safeParse(value)
  if (!r.success) {
    problems.push(formatIssues(r.error.issues, value))
    return undefined
  }
  try {
    const def = toDef(db, r.data, problems)
    return problems.length ? undefined : def
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error
    problems.push(error.message)
    return undefined
  }
}

type Current = {byApiId: Map<string, Product>}

function current(db: DB): Current {
  return {byApiId: new Map(loadProducts(db).map((p) => [p.api_id, p]))}
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

/** Country prices the display or a gateway the product charges through cannot represent exactly (docs/money.md). */
function checkChargeable(db: DB, now: Current, defs: {def: ProductDef; label: string}[], errors: RowError[]): void {
  const unchargeable = chargeabilityCheck(storeOfHandle(db))
  for (const {def, label} of defs) {
    const gateways = integrationGateways(def.integrations)
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

/** Write definitions in one transaction; a product identical to the stored one is not touched. */
function writeDefs(db: DB, defs: ProductDef[], now: Current, dryRun = false): WriteResult {
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

  const ts = nowIso()
  const s = {
    baseline: db.prepare('UPDATE products SET baseline_id = (SELECT id FROM products WHERE api_id = ?) WHERE api_id = ?'),
    delFeatures: db.prepare('DELETE FROM product_features WHERE product_id = ?'),
    delIntegrations: db.prepare('DELETE FROM product_integrations WHERE product_id = ?'),
    delPrices: db.prepare('DELETE FROM country_prices WHERE product_id = ?'),
    delTrials: db.prepare('DELETE FROM product_trials WHERE product_id = ?'),
    feature: db.prepare('INSERT INTO product_features (product_id, position, api_id, name, description, status, type, unit, group_id, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    group: db.prepare(
      `INSERT INTO feature_groups (api_id, name, description) VALUES (?, ?, ?)
       ON CONFLICT (api_id) DO UPDATE SET name = excluded.name, description = excluded.description
       WHERE feature_groups.name IS NOT excluded.name OR feature_groups.description IS NOT excluded.description`,
    ),
    groupId: db.prepare('SELECT id FROM feature_groups WHERE api_id = ?'),
    insert: db.prepare(
      `INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
    ),
    integration: db.prepare('INSERT INTO product_integrations (product_id, position, type, gateway_ref, interval, interval_count, currency) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    price: db.prepare('INSERT INTO country_prices (product_id, country, currency, amount_minor, position) VALUES (?, ?, ?, ?, ?)'),
    rename: db.prepare("UPDATE products SET name = char(0) || api_id WHERE id = ?"),
    trial: db.prepare('INSERT INTO product_trials (product_id, position, interval, interval_count) VALUES (?, ?, ?, ?)'),
    update: db.prepare('UPDATE products SET name = ?, base_px_minor = ?, interval = ?, interval_count = ?, min_px_minor = ?, max_px_minor = ?, updated_at = ? WHERE id = ?'),
  }

  db.transaction(() => {
    // Renamed products step aside first, so names can be swapped within one import.
    for (const d of changed) {
      const old = now.byApiId.get(d.api_id)
      if (old && old.name !== d.name) s.rename.run(old.id)
    }
    for (const d of changed) {
      const old = now.byApiId.get(d.api_id)
      let id: number
      if (old) {
        id = old.id
        s.update.run(d.name, d.base_px_minor, d.interval, d.interval_count, d.min_px_minor, d.max_px_minor, ts, id)
        s.delPrices.run(id)
        s.delIntegrations.run(id)
        s.delFeatures.run(id)
        s.delTrials.run(id)
        result.updated.push(d.api_id)
      } else {
        id = Number(s.insert.run(d.api_id, d.name, d.base_px_minor, d.interval, d.interval_count, d.min_px_minor, d.max_px_minor, ts, ts).lastInsertRowid)
        result.inserted.push(d.api_id)
      }
      d.country_prices.forEach((c, i) => s.price.run(id, c.country, c.currency, c.amount_minor, i))
      d.integrations.forEach((it, i) => {
        const r = integrationRow(it)
        s.integration.run(id, i, r.type, r.gateway_ref, r.interval, r.interval_count, r.currency)
      })
      d.features.forEach((f, i) => {
        let groupId: null | number = null
        if (f.feature_group) {
          s.group.run(f.feature_group.api_id, f.feature_group.name, f.feature_group.description)
          groupId = (s.groupId.get(f.feature_group.api_id) as {id: number}).id
        }
        s.feature.run(id, i, f.api_id, f.name, f.description, f.status, f.type, f.unit, groupId, f.value)
      })
      d.product_trials.forEach((t, i) => s.trial.run(id, i, t.interval, t.interval_count))
    }
    // Baselines last: a product may name one created further down the same file.
    for (const d of changed) s.baseline.run(d.baseline, d.api_id)
  }).immediate()
  return result
}

// ---------------------------------------------------------------- operations

/** Create one product; exit-2 errors for bad fields or a taken name, a conflict (exit 1) for an existing api_id. */
export function createProduct(db: DB, input: unknown): Product {
  const problems: string[] = []
  const def = parseOne(db, input, problems)
  if (!def) throw new InvalidInputError(`invalid product: ${problems.join('; ')}`)
  const now = current(db)
  if (now.byApiId.has(def.api_id)) {
    throw new ConflictError(`api_id: product ${JSON.stringify(def.api_id)} already exists (change it with: pricectl products update ${def.api_id} ...)`)
  }
  const errors: RowError[] = []
  crossCheck(now, [{def, label: ''}], errors)
  checkChargeable(db, now, [{def, label: ''}], errors)
  if (errors.length) fail(errors, 'product')
  writeDefs(db, [def], now)
  return getProduct(db, def.api_id)!
}

/**
 * Update: the given fields replace the stored ones (country prices, integrations,
 * features and trials as whole lists, as the spec says); the result is validated as a
 * whole product. Returns whether anything changed.
 */
export function updateProduct(db: DB, apiId: string, patch: unknown): {changed: boolean; product: Product} {
  const existing = requireProduct(db, apiId)
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
  const def = parseOne(db, merged, problems)
  if (!def) throw new InvalidInputError(`invalid product update: ${problems.join('; ')}`)
  const now = current(db)
  const errors: RowError[] = []
  crossCheck(now, [{def, label: ''}], errors)
  checkChargeable(db, now, [{def, label: ''}], errors)
  if (errors.length) fail(errors, 'product update')
  const r = writeDefs(db, [def], now)
  return {changed: r.updated.length > 0, product: getProduct(db, apiId)!}
}

/**
 * Upsert many products (import, demo): every item is validated and the whole set is
 * checked against the catalog first; any failure lists every failing item and writes
 * nothing. Items are complete products: each replaces the stored one.
 */
export function upsertProducts(db: DB, items: Item[], options: {dryRun?: boolean} = {}): WriteResult {
  const errors: RowError[] = []
  const defs: {def: ProductDef; label: string}[] = []
  const seen = new Map<string, string>()
  for (const item of items) {
    if (item.error !== undefined) {
      errors.push({label: item.label, message: item.error})
      continue
    }
    const problems: string[] = []
    const def = parseOne(db, item.value, problems)
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
  const now = current(db)
  crossCheck(now, defs, errors)
  checkChargeable(db, now, defs, errors)
  if (errors.length) failRows(errors, items.length)
  return writeDefs(
    db,
    defs.map((d) => d.def),
    now,
    options.dryRun,
  )
}

/** Every product in export shape (sorted by api_id), for `products export`. */
export function exportProducts(db: DB): ProductExport[] {
  return loadProducts(db).map((p) => exportShape(defOf(p)))
}

/**
 * Delete a product. Products other records point at (subscriptions, charges,
 * experiments, packages, audience prices) are kept unless `force`: deleting them
 * unlinks revenue from its product.
 */
export function deleteProduct(db: DB, apiId: string, options: {force?: boolean} = {}): {baselineOf: string[]; product: Product} {
  const product = requireProduct(db, apiId)
  const uses: string[] = []
  for (const [table, what] of [
    ['subscriptions', 'subscription'],
    ['charges', 'charge'],
    ['experiment_products', 'experiment'],
    ['package_products', 'package'],
    ['audience_prices', 'audience price'],
  ] as const) {
    const n = (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE product_id = ?`).get(product.id) as {n: number}).n
    if (n > 0) uses.push(`${n} ${what}${n === 1 ? '' : 's'}`)
  }
  if (uses.length > 0 && !options.force) {
    throw new OperationalError(`product ${JSON.stringify(apiId)} is used by ${uses.join(', ')}; pass --force to delete it anyway (those records lose their product link)`)
  }
  const baselineOf = (db.prepare('SELECT api_id FROM products WHERE baseline_id = ? ORDER BY api_id').all(product.id) as {api_id: string}[]).map((r) => r.api_id)
  db.prepare('DELETE FROM products WHERE id = ?').run(product.id)
  return {baselineOf, product}
}
