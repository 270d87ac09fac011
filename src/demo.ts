import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {nowIso} from './clock.js'
import {upsertCoupons} from './catalog/coupon-writes.js'
import {readProductsFile} from './catalog/files.js'
import {type Item, loadProducts, upsertProducts, type WriteResult} from './catalog/products.js'
import {parseJsonValue} from './input.js'
import {nowSeconds} from './clock.js'
import {InvalidInputError} from './errors.js'
import type {StorePort} from './store/port.js'

/**
 * `pricectl demo`: load the demo catalog of fixtures/demo/ (products.json in the
 * `products import` layout, coupons.json as coupon bodies) in one transaction.
 * Re-running upserts the same rows: unchanged rows are not touched.
 *
 * No surprise writes: into a store that holds anything beyond what a new store is seeded
 * with (store.catalog.storeContents()), the demo loads only when it would change nothing there, or
 * when the operator agreed (--yes, or a confirmation on a terminal); see planDemo.
 */
export type DemoResult = {coupons: WriteResult & {moved: string[]}; products: WriteResult}

export function demoDir(root: string): string {
  return join(root, 'fixtures', 'demo')
}

function couponItems(path: string): Item[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new InvalidInputError(`cannot read ${path}: ${(error as Error).message}`)
  }
  const doc = parseJsonValue(text, path) as unknown
  const list = Array.isArray(doc) ? doc : (doc as {coupons?: unknown[]} | null)?.coupons
  if (!Array.isArray(list)) throw new InvalidInputError(`${path}: expected {"coupons": [...]}`)
  return list.map((value, i) => ({label: `coupon ${i + 1}`, value: datedFromNow(value)}))
}

/** The month the demo's coupon dates are written for (fixtures/demo/coupons.json). */
const DEMO_MONTH = 2026 * 12 + 2

/**
 * A demo coupon with its window moved by whole months from March 2026 to the current month
 * (PRICECTL_NOW respected): the tour's SPRING25 is current whenever the demo is loaded, and
 * loading it again within a month changes nothing.
 */
function datedFromNow(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value
  const now = new Date(nowSeconds() * 1000)
  const shift = now.getUTCFullYear() * 12 + now.getUTCMonth() - DEMO_MONTH
  const move = (d: unknown) => {
    const m = typeof d === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(d) : null
    if (!m) return d
    const month = Number(m[1]) * 12 + Number(m[2]) - 1 + shift
    const y = Math.floor(month / 12)
    const mo = month - y * 12
    const last = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate()
    // A window's last day of a month stays the last day (May 31 -> Jun 30).
    const day = Number(m[3]) === new Date(Date.UTC(Number(m[1]), Number(m[2]), 0)).getUTCDate() ? last : Math.min(Number(m[3]), last)
    return `${String(y).padStart(4, '0')}-${String(mo + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`
  }
  const c = value as Record<string, unknown>
  return {...c, active_from: move(c.active_from), active_till: move(c.active_till)}
}

export async function loadDemo(store: StorePort, dir: string): Promise<DemoResult> {
  const products = readProductsFile(join(dir, 'products.json')).items
  const coupons = couponItems(join(dir, 'coupons.json'))
  return await store.transaction(async () => {
    const result = {coupons: await upsertCoupons(store, coupons), products: await upsertProducts(store, products)}
    await demoTax(store)
    return result
  }, {write: true})
}

/** The country whose demo prices include tax (docs/tax.md): the others are shown net, as a new store does. */
export const DEMO_INCLUSIVE_COUNTRY = 'DE'

/**
 * One inclusive country, so the demo shows both behaviours: DE prices include VAT. Written
 * only when DE has no behaviour of its own (an operator's choice stays; a second run writes nothing).
 */
async function demoTax(store: StorePort): Promise<void> {
  if ((await store.config.taxSettings()).some((r) => r.scope === 'country' && r.subject === DEMO_INCLUSIVE_COUNTRY)) return
  await store.config.saveTaxSetting({behavior: 'inclusive', category: null, scope: 'country', subject: DEMO_INCLUSIVE_COUNTRY}, nowIso())
}

class DryRun extends Error {}

export type DemoPlan = {
  /** What the store holds besides the seed (empty: a new store). */
  held: {rows: number; table: string}[]
  /** What loading would do, computed in a transaction that was rolled back. */
  result: DemoResult
  /** The demo would insert or update rows in a store that holds someone's data. */
  surprise: boolean
}

/** What `demo` would do to this store, without writing anything. */
export async function planDemo(store: StorePort, dir: string): Promise<DemoPlan> {
  const held = await store.catalog.storeContents()
  let result!: DemoResult
  try {
    await store.transaction(async () => {
      result = await loadDemo(store, dir)
      throw new DryRun()
    }, {write: true})
  } catch (error) {
    if (!(error instanceof DryRun)) throw error
  }
  // A demo coupon whose only change is its window (the demo's dates follow today) is the
  // demo's own, loaded in an earlier month: moving it is no surprise.
  const moved = new Set(result.coupons.moved)
  const writes = result.products.inserted.length + result.products.updated.length + result.coupons.inserted.length + result.coupons.updated.filter((c) => !moved.has(c)).length
  return {held, result, surprise: held.length > 0 && writes > 0}
}

/** "products 3, users 12" and what the demo would change, for the refusal and the question. */
export function describePlan(plan: DemoPlan): {changes: string; held: string} {
  const held = plan.held.map((h) => `${h.table} ${h.rows}`).join(', ')
  const {coupons, products} = plan.result
  const parts: string[] = []
  const add = (n: number, what: string) => n > 0 && parts.push(`add ${n} ${what}${n === 1 ? '' : 's'}`)
  add(products.inserted.length, 'product')
  add(coupons.inserted.length, 'coupon')
  const updated = [...products.updated, ...coupons.updated]
  if (updated.length > 0) parts.push(`overwrite ${updated.join(', ')} with the demo's version`)
  return {changes: parts.join(' and '), held}
}

/** The commands worth trying on the demo store, for the summary. */
export async function nextSteps(store: StorePort): Promise<string[]> {
  const ids = new Set((await loadProducts(store)).map((p) => p.api_id))
  const product = ids.has('pro_monthly') ? 'pro_monthly' : ([...ids][0] ?? 'PRODUCT')
  return [
    'pricectl products list',
    `pricectl products get ${product}`,
    'pricectl coupons list',
    `pricectl price --product ${product} --country DE --user-id demo_user`,
    `pricectl price --product ${product} --product pro_yearly --country JP --user-id demo_user --integration gateway_a`,
    'pricectl user get demo_user',
    `pricectl tax list --country ${DEMO_INCLUSIVE_COUNTRY}`,
    `pricectl price preview --country ${DEMO_INCLUSIVE_COUNTRY},US --columns product,country,price,net,tax,gross,tax_behavior`,
  ]
}
