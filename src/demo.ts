import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {upsertCoupons} from './catalog/coupons.js'
import {readProductsFile} from './catalog/files.js'
import {type Item, loadProducts, upsertProducts, type WriteResult} from './catalog/products.js'
import {parseJsonValue} from './cli/input.js'
import {InvalidInputError} from './errors.js'
import type {DB} from './store/db.js'

/**
 * `pricectl demo`: load the demo catalog of fixtures/demo/ (products.json in the
 * `products import` layout, coupons.json as coupon bodies) in one transaction.
 * Re-running upserts the same rows: unchanged rows are not touched.
 */
export type DemoResult = {coupons: WriteResult; products: WriteResult}

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
  return list.map((value, i) => ({label: `coupon ${i + 1}`, value}))
}

export function loadDemo(db: DB, dir: string): DemoResult {
  const products = readProductsFile(join(dir, 'products.json')).items
  const coupons = couponItems(join(dir, 'coupons.json'))
  let result!: DemoResult
  db.transaction(() => {
    result = {coupons: upsertCoupons(db, coupons), products: upsertProducts(db, products)}
  }).immediate()
  return result
}

/** The commands worth trying on the demo store, for the summary. */
export function nextSteps(db: DB): string[] {
  const ids = new Set(loadProducts(db).map((p) => p.api_id))
  const product = ids.has('pro_monthly') ? 'pro_monthly' : ([...ids][0] ?? 'PRODUCT')
  return [
    'pricectl products list',
    `pricectl products get ${product}`,
    'pricectl coupons list',
    `pricectl price --product ${product} --country DE`,
    `pricectl price --product ${product} --product pro_yearly --country JP --user-id demo_user --integration gateway_a`,
    'pricectl user get demo_user',
  ]
}
