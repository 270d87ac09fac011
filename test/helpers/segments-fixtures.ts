import Database from 'better-sqlite3'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

import {createProducts} from './catalog.js'
import {run, type Run} from './run.js'

/**
 * Fixtures of the segmentation tests, made with the real commands: products, coupons,
 * audiences, packages and campaigns created through `--body FILE`.
 */

let n = 0

/** Run `args --body FILE --json` with `value` written to FILE. */
export async function withBody(db: string, args: string[], value: unknown): Promise<Run> {
  const file = join(dirname(db), `body-${++n}.json`)
  writeFileSync(file, JSON.stringify(value))
  return run(db, [...args, '--body', file, '--json'])
}

/** Create through a command and fail the test setup loudly when it does not work. */
export async function must(db: string, args: string[], value: unknown): Promise<Run> {
  const r = await withBody(db, args, value)
  if (r.code !== 0) throw new Error(`${args.join(' ')} failed: ${r.stdout} ${r.stderr}`)
  return r
}

/**
 * Products priced exactly (country prices are used as given; USD base prices are not
 * rounded), so coupon arithmetic in tests is plain.
 */
export const SEG_PRODUCTS = [
  {
    api_id: 'basic',
    base_px: 10,
    country_prices: [
      {amount: 10, country: 'DE', currency: 'EUR'},
      {amount: 1000, country: 'JP', currency: 'JPY'},
    ],
    interval: 'month',
    interval_count: 1,
    name: 'Basic',
  },
  {api_id: 'yearly', base_px: 100, country_prices: [{amount: 100, country: 'DE', currency: 'EUR'}], interval: 'year', interval_count: 1, name: 'Yearly'},
  {api_id: 'lifetime', base_px: 200, interval: 'one_time', interval_count: 1, name: 'Lifetime'},
]

/** The products, plus fixed FX rates (EUR 0.5, JPY 100 per USD): rates of the operator, which outrank the bundled snapshot although dated before it. */
export async function segCatalog(db: string): Promise<void> {
  await createProducts(db, SEG_PRODUCTS)
  for (const [currency, rate] of [
    ['EUR', '0.5'],
    ['JPY', '100'],
  ]) {
    const r = await run(db, ['fx', 'set', currency, rate, '--date', '2020-01-01', '--yes', '--json'])
    if (r.code !== 0) throw new Error(`fx set ${currency} failed: ${r.stdout} ${r.stderr}`)
  }
}

export const coupon = (apiId: string, fields: Record<string, unknown>) => ({api_id: apiId, name: apiId, ...fields})

/** Row count of a table, read directly from the store file. */
export function count(db: string, table: string): number {
  const d = new Database(db, {readonly: true})
  try {
    return (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as {n: number}).n
  } finally {
    d.close()
  }
}

/** Explain steps as "step | outcome | detail" lines, easy to match. */
export function steps(r: Run): string {
  return (r.json.steps as {detail: string; outcome: string; step: string}[]).map((s) => `${s.step} | ${s.outcome} | ${s.detail}`).join('\n')
}

/** Run with PRICECTL_NOW pinned (in-process commands read process.env). */
export async function at<T>(now: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.PRICECTL_NOW
  process.env.PRICECTL_NOW = now
  try {
    return await fn()
  } finally {
    if (before === undefined) delete process.env.PRICECTL_NOW
    else process.env.PRICECTL_NOW = before
  }
}
