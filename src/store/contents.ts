/** Which tables make a store "in use" (CatalogRepository.storeContents), shared by the adapters. */

/** Tables a new store is seeded with (migrations, seedDefaults): rows there do not make a store "in use". */
export const SEEDED = new Set(['settings', 'fx_rates', 'currency_exponents'])
/** The change history (docs/history.md) says what happened to the rest, it is not content of its own. */
export const HISTORY = new Set(['changes', 'change_rows'])
/**
 * Tables named in messages; the others with rows (country_prices, arms, ...) belong to
 * one of these, or are shown by name when they hold rows on their own.
 */
export const HEADLINE = ['products', 'coupons', 'packages', 'audiences', 'campaigns', 'experiments', 'users', 'locks', 'subscriptions', 'charges', 'events', 'localization_factors', 'rounding_rules', 'tax_rates', 'tax_settings', 'gateways', 'api_keys']
export const CHILDREN = new Set(['country_prices', 'product_integrations', 'product_features', 'product_trials', 'feature_groups', 'audience_prices', 'package_products', 'coupon_external_coupons', 'arms', 'experiment_products', 'exposures'])

/** Tables with rows, the biggest parents first (shared by the adapters). */
export function rankContents(held: {rows: number; table: string}[], childRows: boolean): {rows: number; table: string}[] {
  // Child rows without a parent cannot happen with foreign keys on; still "not empty".
  if (held.length === 0 && childRows) held.push({rows: 1, table: 'catalog details'})
  const rank = (t: string) => (HEADLINE.includes(t) ? HEADLINE.indexOf(t) : HEADLINE.length)
  return held.sort((a, b) => rank(a.table) - rank(b.table) || a.table.localeCompare(b.table))
}
