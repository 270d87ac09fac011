/**
 * The history part of the storage port (see ../port.ts, docs/history.md): who changed
 * the catalog and the configuration, with which command, and each row before and after.
 * Recording itself happens in the store, in the transaction of each write; this part sets
 * who the writes are attributed to, reads the history, and restores row images.
 */

/** A table whose writes the history records (RECORDED_TABLES). */
export type RecordedTable = {
  /** Columns left out of the images (a key's hash is no one's business). */
  exclude?: string[]
  /** Updates that change only these columns are not recorded (bookkeeping, not configuration). */
  ignoreUpdatesOf?: string[]
  /** Recorded, but `revert` refuses it (restoring a revoked API key would re-open access). */
  noRevert?: boolean
  table: string
}

/**
 * The tables whose writes are recorded: the catalog and the configuration. Not recorded:
 * revenue (subscriptions, charges, events), locks and users (quotes), exposures,
 * currency_exponents (the store's own bookkeeping), and the history tables themselves.
 */
export const RECORDED_TABLES: readonly RecordedTable[] = [
  {table: 'settings'},
  {table: 'products'},
  {table: 'country_prices'},
  {table: 'product_integrations'},
  {table: 'feature_groups'},
  {table: 'product_features'},
  {table: 'product_trials'},
  {table: 'coupons'},
  {table: 'coupon_external_coupons'},
  {table: 'fx_rates'},
  {table: 'rounding_rules'},
  {table: 'localization_factors'},
  {table: 'tax_rates'},
  {table: 'tax_settings'},
  {table: 'gateways'},
  {table: 'gateway_currency_rules'},
  {table: 'audiences'},
  {table: 'audience_prices'},
  {table: 'packages'},
  {table: 'package_products'},
  {table: 'campaigns'},
  {table: 'experiments'},
  {table: 'experiment_products'},
  {table: 'arms'},
  {exclude: ['hash'], ignoreUpdatesOf: ['last_used_at'], noRevert: true, table: 'api_keys'},
]

/** Who writes from now on, on this connection. */
export type ChangeContext = {
  actor: string
  /** ISO 8601 UTC. */
  at: string
  command: string
}

export type RowAction = 'deleted' | 'inserted' | 'updated'

export type ChangeRecord = {
  actor: string
  at: string
  command: string
  id: number
  /** The later change that reverted this one, if any. */
  reverted_by: null | number
  reverts: null | number
  /** Rows written per table and action. */
  rows: {action: RowAction; count: number; table: string}[]
  summary: null | string
}

export type ChangeRow = {
  action: RowAction
  after: null | Record<string, unknown>
  before: null | Record<string, unknown>
  id: number
  /** The row's primary key values, in key order. */
  key: unknown[]
  product_id: null | number
  table: string
}

export type HistoryFilter = {
  actor?: string
  limit: number
  /** Internal product ids (rows of these products, or of the products table with these ids). */
  productIds?: number[]
  /** ISO 8601 UTC: changes at or after. */
  since?: string
  table?: string
}

export interface HistoryRepository {
  /** Whether writes on this connection are attributed (begin() was called, end() was not). */
  active(): Promise<boolean>
  /** Attribute every recorded write on this connection to `context`, until end() or the next begin(). */
  begin(context: ChangeContext): Promise<void>
  /** The current context's change, once something was recorded in it. */
  currentChange(): Promise<number | undefined>
  /** The current row of `table` with primary key `key`, as the history images it; null when there is none. */
  currentImage(table: string, key: unknown[]): Promise<null | Record<string, unknown>>
  /** Stop attributing writes (later writes are not recorded). */
  end(): Promise<void>
  get(id: number): Promise<ChangeRecord | undefined>
  /** Later changes than `id` that wrote any of the same rows (table and key), oldest first. */
  laterWritesOfRows(id: number): Promise<{change_id: number; key: unknown[]; table: string}[]>
  list(filter: HistoryFilter): Promise<ChangeRecord[]>
  /** Mark the current context's change (summary, the change it reverts). */
  note(note: {reverts?: number; summary?: string}): Promise<void>
  /** Internal ids a product api_id has or had (history included). */
  productIds(apiId: string): Promise<number[]>
  /**
   * Put rows back as `before` images say, in the order given: a row without a before image
   * is deleted, another is inserted or overwritten. Foreign keys are checked at commit.
   * Call inside a transaction.
   */
  restore(rows: {before: null | Record<string, unknown>; key: unknown[]; table: string}[]): Promise<void>
  rows(id: number): Promise<ChangeRow[]>
}
