import type Database from 'better-sqlite3'

import {icuDigits, knownCurrencies, packageExponents, useRecordedExponents} from '../currency.js'

/**
 * The storage exponent of every currency, recorded in the store (docs/money.md): a store
 * means the same under any runtime or data-package version. Schema version 1 kept bare
 * integers read with the runtime ICU's digits; migration 2 records ISO 4217 exponents and
 * rescales what version 1 wrote where the two differ (HUF, IDR, COP, ... were whole units).
 */

export const EXPONENTS_SQL = `
CREATE TABLE currency_exponents (
  currency TEXT PRIMARY KEY,
  exponent INTEGER NOT NULL CHECK (exponent BETWEEN 0 AND 6)
) WITHOUT ROWID;

-- Overrides of gateway currency tables (gateways set GATEWAY --currency CODE): a whole rule.
CREATE TABLE gateway_currency_rules (
  gateway      TEXT NOT NULL CHECK (gateway IN ('gateway_a','gateway_b','gateway_c','gateway_d')),
  currency     TEXT NOT NULL,
  exponent     INTEGER NOT NULL CHECK (exponent BETWEEN 0 AND 6),
  divisible_by INTEGER NOT NULL CHECK (divisible_by >= 1),
  min_amount   INTEGER CHECK (min_amount >= 0),
  max_amount   INTEGER CHECK (max_amount >= 1),
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (gateway, currency)
) WITHOUT ROWID;
`

type Scale = Map<string, bigint>

function scaled(v: unknown, currency: unknown, scale: Scale): unknown {
  const f = typeof currency === 'string' ? scale.get(currency) : undefined
  return f === undefined || typeof v !== 'number' ? v : Number(BigInt(v) * f)
}

/** Rescale a lock's packed quote (src/pricing/locks.ts) in place. */
function rescaleQuote(json: string, lockCurrency: string, scale: Scale): string | undefined {
  const q = JSON.parse(json) as {products?: Record<string, Record<string, unknown> & {coupon?: Record<string, unknown>}>}
  let changed = false
  for (const p of Object.values(q.products ?? {})) {
    const currency = (p.currency as string | undefined) ?? lockCurrency
    if (!scale.has(currency)) continue
    for (const k of ['price_minor', 'baseline_minor', 'control_minor']) if (k in p) p[k] = scaled(p[k], currency, scale)
    if (p.coupon) p.coupon.price_minor = scaled(p.coupon.price_minor, currency, scale)
    changed = true
  }
  return changed ? JSON.stringify(q) : undefined
}

/**
 * Migration 2: record every known currency's exponent; amounts version 1 wrote with the
 * runtime ICU's digits are moved to the ISO exponent (multiplied: exact). A currency whose
 * ISO exponent is smaller (XDR, XSU) keeps the digits it was written with when its amounts
 * do not divide, so nothing is rounded away.
 */
export function recordExponentsV2(db: Database.Database): void {
  db.exec(EXPONENTS_SQL)
  const iso = packageExponents()
  const used = new Set(
    (
      db
        .prepare(
          `SELECT currency FROM country_prices UNION SELECT currency FROM coupons WHERE currency IS NOT NULL
           UNION SELECT currency FROM audience_prices WHERE currency IS NOT NULL UNION SELECT currency FROM locks
           UNION SELECT currency FROM subscriptions WHERE currency IS NOT NULL UNION SELECT currency FROM charges WHERE currency IS NOT NULL`,
        )
        .all() as {currency: string}[]
    ).map((r) => r.currency),
  )
  const scale: Scale = new Map()
  const exponents = new Map(iso)
  for (const c of used) {
    const written = icuDigits(c) // what schema version 1 stored amounts with
    const target = iso.get(c) ?? written
    if (target > written) scale.set(c, 10n ** BigInt(target - written))
    else if (target < written) exponents.set(c, written) // never divide a stored amount
  }
  const insert = db.prepare('INSERT INTO currency_exponents (currency, exponent) VALUES (?, ?)')
  for (const [c, e] of exponents) insert.run(c, e)
  if (scale.size === 0) return
  const tables: [string, string[]][] = [
    ['country_prices', ['amount_minor']],
    ['coupons', ['amount_minor']],
    ['audience_prices', ['amount_minor']],
    ['subscriptions', ['amount_minor']],
    ['charges', ['amount_minor', 'amount_refunded_minor']],
  ]
  for (const [c, f] of scale) {
    for (const [table, columns] of tables) {
      db.prepare(`UPDATE ${table} SET ${columns.map((col) => `${col} = ${col} * ${f}`).join(', ')} WHERE currency = ?`).run(c)
    }
  }
  const update = db.prepare('UPDATE locks SET quote_json = ? WHERE lock_key = ?')
  for (const row of db.prepare('SELECT lock_key, currency, quote_json FROM locks').all() as {currency: string; lock_key: string; quote_json: string}[]) {
    const json = rescaleQuote(row.quote_json, row.currency, scale)
    if (json !== undefined) update.run(json, row.lock_key)
  }
}

/**
 * Load the store's exponents for this process, recording currencies the runtime knows and
 * the store does not yet (a newer data package); `readonly` stores only load.
 */
export function loadExponents(db: Database.Database, options: {readonly?: boolean} = {}): void {
  const rows = db.prepare('SELECT currency, exponent FROM currency_exponents').raw().all() as [string, number][]
  const map = new Map(rows)
  // Codes are compared first: the exponents (ICU's for codes the package lacks) are only
  // computed when the runtime knows a code the store has not recorded, not on every start.
  if (!options.readonly && [...knownCurrencies()].some((c) => !map.has(c))) {
    const insert = db.prepare('INSERT OR IGNORE INTO currency_exponents (currency, exponent) VALUES (?, ?)')
    db.transaction(() => {
      for (const [c, e] of packageExponents()) {
        if (!map.has(c)) {
          insert.run(c, e)
          map.set(c, e)
        }
      }
    })()
  }
  useRecordedExponents(map)
}
