import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

import {run, seededStore} from './run.js'

/**
 * Create products through the real `products create --body` command: once per run for a
 * given catalog (and PRICECTL_NOW, which the history records), copied after that.
 */
export async function createProducts(db: string, products: Record<string, unknown>[]): Promise<void> {
  await seededStore(db, JSON.stringify([products, process.env.PRICECTL_NOW]), (store) => createEach(store, products))
}

async function createEach(db: string, products: Record<string, unknown>[]): Promise<void> {
  for (const [i, p] of products.entries()) {
    // A PostgreSQL store (a URL) has no folder: the body goes to a temp folder of its own.
    const dir = /^postgres(ql)?:\/\//i.test(db) ? mkdtempSync(join(tmpdir(), 'pricectl-products-')) : dirname(db)
    const file = join(dir, `product-${i}-${String(p.api_id)}.json`)
    writeFileSync(file, JSON.stringify(p))
    const r = await run(db, ['products', 'create', '--body', file, '--json'])
    if (r.code !== 0) throw new Error(`products create ${String(p.api_id)} failed: ${r.stdout} ${r.stderr}`)
  }
}

/** A small catalog: monthly (with EUR and JPY country prices), yearly with a baseline, one-time. */
export const CATALOG = [
  {
    api_id: 'pro_monthly',
    base_px: 9.99,
    country_prices: [
      {amount: 8.99, country: 'DE', currency: 'EUR'},
      {amount: 1200, country: 'JP', currency: 'JPY'},
      {amount: 3.5, country: 'KW', currency: 'KWD'},
    ],
    integrations: [{gateway_a_product_id: 'prod_pro', interval: 'month', interval_count: 1, type: 'gateway_a_with_interval'}],
    interval: 'month',
    interval_count: 1,
    name: 'Pro monthly',
  },
  {
    api_id: 'pro_yearly',
    base_px: 99,
    interval: 'year',
    interval_count: 1,
    name: 'Pro yearly',
  },
  {
    api_id: 'lifetime',
    base_px: 199,
    interval: 'one_time',
    interval_count: 1,
    name: 'Lifetime',
  },
]
