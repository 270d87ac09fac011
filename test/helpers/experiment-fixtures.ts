import Database from 'better-sqlite3'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

import {openSqliteStore, type SqliteStore} from '../../src/store/db.js'
import {createProducts} from './catalog.js'
import {run, tempStore} from './run.js'

/**
 * Fixtures of the experiments tests. Subscriptions and charges are written with direct
 * SQL (the revenue commands belong to another part of the project); products go through
 * the real `products create --body` command.
 */

/** A monthly product with bounds, a yearly one, and one without bounds. */
export const EXPERIMENT_CATALOG = [
  {
    api_id: 'pro_monthly',
    base_px: 10,
    country_prices: [{amount: 9, country: 'DE', currency: 'EUR'}],
    interval: 'month',
    interval_count: 1,
    max_px: 14,
    min_px: 7,
    name: 'Pro monthly',
  },
  {api_id: 'pro_yearly', base_px: 100, interval: 'year', interval_count: 1, max_px: 150, min_px: 70, name: 'Pro yearly'},
  {api_id: 'team_monthly', base_px: 30, interval: 'month', interval_count: 1, name: 'Team monthly'},
]

export async function experimentStore(db: string, catalog: Record<string, unknown>[] = EXPERIMENT_CATALOG): Promise<void> {
  await createProducts(db, catalog)
}

/** `experiments create --body` with a JSON body; returns the run. */
/** A fresh store of EXPERIMENT_CATALOG in a temp folder, opened (the caller closes it). */
export async function openExperimentStore(): Promise<SqliteStore> {
  const path = tempStore()
  await experimentStore(path)
  return openSqliteStore(path)
}

export async function createExperimentBody(db: string, body: Record<string, unknown>, extra: string[] = []) {
  const file = join(dirname(db), `experiment-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, JSON.stringify(body))
  return run(db, ['experiments', 'create', '--body', file, ...extra, '--json'])
}

export function withDb<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path)
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

function productId(db: Database.Database, apiId: string): number {
  const row = db.prepare('SELECT id FROM products WHERE api_id = ?').get(apiId) as {id: number} | undefined
  if (!row) throw new Error(`fixture: no product ${apiId}`)
  return row.id
}

let counter = 0

export type SubscriptionFixture = {
  amount_usd: number
  amount_usd_monthly?: null | number
  created?: null | number
  interval?: string
  product: string
  status?: 'active' | 'canceled' | 'pending' | 'trialing'
  user_id: string
}

/** A subscription row as the revenue commands (or a bulk import) would leave it. */
export function insertSubscription(db: Database.Database, s: SubscriptionFixture): void {
  const n = ++counter
  const created = s.created === undefined ? Math.floor(Date.now() / 1000) + 1 : s.created
  const monthly = s.amount_usd_monthly === undefined ? Math.round(s.amount_usd * 100) : s.amount_usd_monthly === null ? null : Math.round(s.amount_usd_monthly * 100)
  db.prepare(`INSERT INTO subscriptions (user_id, origin, origin_id, product_id, created, interval, interval_count, status, currency, amount_minor,
      amount_usd_minor, amount_usd_monthly_minor, latest_event_timestamp, latest_event_id)
    VALUES (?, 'gateway_a', ?, ?, ?, ?, 1, ?, 'USD', ?, ?, ?, ?, ?)`).run(
    s.user_id,
    `sub_${n}`,
    productId(db, s.product),
    created,
    s.interval ?? 'month',
    s.status ?? 'active',
    Math.round(s.amount_usd * 100),
    Math.round(s.amount_usd * 100),
    monthly,
    created ?? 0,
    `evt_sub_${n}`,
  )
}

export type ChargeFixture = {
  amount_usd: number
  created?: null | number
  product: string
  refunded_usd?: number
  status?: 'failed' | 'pending' | 'succeeded'
  user_id: string
}

export function insertCharge(db: Database.Database, c: ChargeFixture): void {
  const n = ++counter
  const created = c.created === undefined ? Math.floor(Date.now() / 1000) + 1 : c.created
  db.prepare(`INSERT INTO charges (user_id, origin, origin_id, product_id, created, status, currency, amount_minor, amount_refunded_minor, amount_usd_minor,
      amount_refunded_usd_minor, latest_event_timestamp, latest_event_id)
    VALUES (?, 'gateway_b', ?, ?, ?, ?, 'USD', ?, ?, ?, ?, ?, ?)`).run(
    c.user_id,
    `ch_${n}`,
    productId(db, c.product),
    created,
    c.status ?? 'succeeded',
    Math.round(c.amount_usd * 100),
    Math.round((c.refunded_usd ?? 0) * 100),
    Math.round(c.amount_usd * 100),
    Math.round((c.refunded_usd ?? 0) * 100),
    created ?? 0,
    `evt_ch_${n}`,
  )
}

/** Arm of each exposed visitor of an experiment. */
export function exposures(db: Database.Database, experimentId: number): Record<string, string> {
  const rows = db.prepare('SELECT user_id, arm_id FROM exposures WHERE experiment_id = ? ORDER BY user_id').all(experimentId) as {arm_id: string; user_id: string}[]
  return Object.fromEntries(rows.map((r) => [r.user_id, r.arm_id]))
}
