import {copyFileSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll} from 'vitest'

import {type DB, openSqliteStore as openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {run, type Run} from './run.js'

/**
 * Fixtures of the revenue tests: products and FX rates written with plain SQL (so these
 * tests do not depend on the products commands), an exact-argument command runner, and
 * generated gateway exports.
 */

export type TestIntegration = {currency?: string; interval?: string; interval_count?: number; ref: string; type: 'gateway_a' | 'gateway_a_with_interval' | 'gateway_c' | 'gateway_d'}

export type TestProduct = {
  api_id: string
  base_px?: number
  integrations?: TestIntegration[]
  interval: 'day' | 'month' | 'one_time' | 'week' | 'year'
  interval_count?: number
}

/** Open (creating and migrating) a store for `fn`, with its SQLite handle and its port. */
export async function withStore<T>(path: string, fn: (db: DB, store: StorePort) => T): Promise<T> {
  const store = openStore(path)
  try {
    return await fn(store.db, store)
  } finally {
    await store.close()
  }
}

export function addProduct(db: DB, p: TestProduct): number {
  const now = '2026-01-01T00:00:00.000Z'
  const r = db
    .prepare('INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(p.api_id, `Product ${p.api_id}`, Math.round((p.base_px ?? 10) * 100), p.interval, p.interval_count ?? 1, now, now)
  const id = Number(r.lastInsertRowid)
  const ins = db.prepare('INSERT INTO product_integrations (product_id, position, type, gateway_ref, interval, interval_count, currency) VALUES (?, ?, ?, ?, ?, ?, ?)')
  for (const [i, it] of (p.integrations ?? []).entries()) ins.run(id, i, it.type, it.ref, it.interval ?? null, it.interval_count ?? null, it.currency ?? null)
  return id
}

/** Replace every FX rate of the store with `rates` (units per USD) on `date`, so amounts are hand-computable. */
export function setRates(db: DB, date: string, rates: Record<string, number>, clear = true): void {
  if (clear) db.prepare('DELETE FROM fx_rates').run()
  const ins = db.prepare('INSERT OR REPLACE INTO fx_rates (currency, date, rate, source) VALUES (?, ?, ?, ?)')
  for (const [c, r] of Object.entries(rates)) ins.run(c, date, r, 'test')
}

/** The catalog most revenue tests use: products for each preset and plain api_ids. */
export function seedCatalog(db: DB): void {
  setRates(db, '2020-01-01', {EUR: 0.8, GBP: 0.5, JPY: 100, USD: 1})
  addProduct(db, {api_id: 'pro_monthly', base_px: 10, integrations: [{ref: 'prod_pro', type: 'gateway_a'}, {ref: 'pro-monthly-plan', type: 'gateway_c'}], interval: 'month'})
  addProduct(db, {api_id: 'pro_yearly', base_px: 100, integrations: [{interval: 'year', interval_count: 1, ref: 'prod_team', type: 'gateway_a_with_interval'}], interval: 'year'})
  addProduct(db, {api_id: 'team_quarterly', base_px: 25, integrations: [{interval: 'month', interval_count: 3, ref: 'prod_team', type: 'gateway_a_with_interval'}], interval: 'month', interval_count: 3})
  addProduct(db, {api_id: 'weekly', base_px: 3, integrations: [{ref: 'weekly-plan', type: 'gateway_c'}], interval: 'week'})
  addProduct(db, {api_id: 'lifetime', base_px: 199, integrations: [{ref: 'prod_life', type: 'gateway_a'}], interval: 'one_time'})
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'pricectl-rev-'))
}

export function writeTemp(name: string, text: string, dir = tempDir()): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** Run a command in-process (run() of run.ts). */
export async function runArgs(db: string, args: string[]): Promise<Run> {
  return run(db, args)
}

/** Stable view of a table for comparing stores (no rowids). */
export function dumpTable(db: DB, table: 'charges' | 'subscriptions'): unknown[] {
  return db.prepare(`SELECT * FROM ${table} ORDER BY user_id, origin, origin_id`).all().map((r) => {
    const {id: _id, ...rest} = r as Record<string, unknown>
    return rest
  })
}

export const PAYMENTS_HEADER = [
  'id',
  'Created date (UTC)',
  'Amount',
  'Amount Refunded',
  'Currency',
  'Captured',
  'Converted Amount',
  'Converted Amount Refunded',
  'Converted Currency',
  'Decline Reason',
  'Description',
  'Fee',
  'Refunded date (UTC)',
  'Statement Descriptor',
  'Status',
  'Seller Message',
  'Taxes On Fee',
  'Card ID',
  'Customer ID',
  'Customer Description',
  'Customer Email',
  'Invoice ID',
  'Transfer',
  'user_id (metadata)',
  'product (metadata)',
]

/** A payments export (new layout) of `n` good rows: deterministic, ids unique, a tenth refunded, some failed. */
export function paymentsCsv(n: number, offset = 0): string {
  const lines = [PAYMENTS_HEADER.join(',')]
  const base = Date.UTC(2025, 0, 1) / 1000
  for (let k = 0; k < n; k++) {
    const i = k + offset
    const created = new Date((base + i * 61) * 1000).toISOString().replace('T', ' ').slice(0, 19)
    const status = i % 10 === 3 ? 'Refunded' : i % 13 === 5 ? 'Failed' : 'Paid'
    const currency = i % 3 === 0 ? 'eur' : 'usd'
    const amount = (5 + (i % 7)).toFixed(2)
    const refunded = status === 'Refunded' ? new Date((base + i * 61 + 3600) * 1000).toISOString().replace('T', ' ').slice(0, 19) : ''
    lines.push(
      [
        `ch_${i.toString(36).padStart(6, '0')}`,
        created,
        amount,
        status === 'Refunded' ? amount : '0.00',
        currency,
        'true',
        amount,
        '0.00',
        'usd',
        '',
        'Pro plan',
        '0.45',
        refunded,
        'ACME',
        status,
        status === 'Failed' ? 'Declined' : 'Payment complete.',
        '0.00',
        `card_${i}`,
        `cus_${i % 97}`,
        '',
        `user${i % 97}@example.com`,
        `in_${i}`,
        '',
        i % 2 === 0 ? `u${i % 97}` : '',
        'pro_monthly',
      ].join(','),
    )
  }
  return lines.join('\n') + '\n'
}

/**
 * A payments export of paymentsCsv's 400 rows, with rows repeated far apart (the same events:
 * unchanged), one record sent again with a later refund (updated), 4 rejects, and 6
 * descriptions quoted with line breaks and commas in them. Records end with `eol`; the last
 * one without it when `unterminated`.
 */
export function awkwardPaymentsCsv(eol: '\n' | '\r\n', unterminated: boolean): string {
  const data = paymentsCsv(400).trimEnd().split('\n').slice(1)
  const quoted = (l: string, i: number) => l.replace(',Pro plan,', `,"Pro plan\nrenewed, ""yearly""\n#${i}",`)
  const bad = (l: string) => l.replace(/,(usd|eur),/, ',xyz,').replace(/^ch_/, 'ch_bad_')
  const refundedLater = data[21].replace(',Paid,', ',Refunded,').replace(/^([^,]*,[^,]*,([^,]*)),0\.00,/, '$1,$2,')
  const body = data.map((l, i) => (i % 67 === 11 ? quoted(l, i) : l))
  body.splice(120, 0, bad(data[3]), ...data.slice(30, 36))
  body.splice(260, 0, refundedLater, bad(data[4]), ...data.slice(200, 203))
  body.push(bad(data[5]), ...data.slice(0, 4), bad(data[6]))
  return [PAYMENTS_HEADER.join(','), ...body].join(eol) + (unterminated ? '' : eol)
}

/**
 * Seeded stores for a test file: the catalog is seeded once (beforeAll) into a template, and
 * each call of the function returned copies it into a fresh temp folder.
 */
export function seededStores(): () => string {
  let template: string
  beforeAll(async () => {
    template = join(tempDir(), 'template.db')
    await withStore(template, (db) => seedCatalog(db))
  })
  return () => {
    const path = join(tempDir(), 'store.db')
    copyFileSync(template, path)
    return path
  }
}
