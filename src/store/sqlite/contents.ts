import type {DB} from '../db.js'

/** Tables a new store is seeded with (migrations, seedDefaults): rows there do not make a store "in use". */
export const SEEDED = new Set(['settings', 'fx_rates', 'currency_exponents'])
/** The change history (docs/history.md) says what happened to the rest, it is not content of its own. */
export const HISTORY = new Set(['changes', 'change_rows'])
/**
 * Tables named in messages; the others with rows (country_prices, arms, ...) belong to
 * one of these, or are shown by name when they hold rows on their own.
 */
export const HEADLINE = ['products', 'coupons', 'packages', 'audiences', 'campaigns', 'experiments', 'users', 'locks', 'subscriptions', 'charges', 'events', 'localization_factors', 'rounding_rules', 'gateways', 'api_keys']
export const CHILDREN = new Set(['country_prices', 'product_integrations', 'product_features', 'product_trials', 'feature_groups', 'audience_prices', 'package_products', 'coupon_external_coupons', 'arms', 'experiment_products', 'exposures'])

/** What the store holds beyond a new store's seed: table and row count, the biggest parents first. */
export function storeContents(db: DB): {rows: number; table: string}[] {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {name: string}[]).map((r) => r.name)
  const held: {rows: number; table: string}[] = []
  let childRows = false
  for (const table of tables) {
    if (SEEDED.has(table) || HISTORY.has(table)) continue
    const rows = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as {n: number}).n
    if (rows === 0) continue
    if (CHILDREN.has(table)) childRows = true
    else held.push({rows, table})
  }
  return rankContents(held, childRows)
}

/** Tables with rows, the biggest parents first (shared by the adapters). */
export function rankContents(held: {rows: number; table: string}[], childRows: boolean): {rows: number; table: string}[] {
  // Child rows without a parent cannot happen with foreign keys on; still "not empty".
  if (held.length === 0 && childRows) held.push({rows: 1, table: 'catalog details'})
  const rank = (t: string) => (HEADLINE.includes(t) ? HEADLINE.indexOf(t) : HEADLINE.length)
  return held.sort((a, b) => rank(a.table) - rank(b.table) || a.table.localeCompare(b.table))
}
