import type {Lock, ProductRow, User} from '../../domain.js'

/** A user's stored country, as the price calculation writes it. */
export type UserCountry = {at: string; country: string; userId: string}

/** A product as pricing reads it: its row, country prices, charging gateways and gateway_d plan currencies. */
export type PricingProduct = ProductRow & {
  countryPrices: {amountMinor: number; country: string; currency: string}[]
  /** Gateways its integrations charge through (gateway_a_with_interval counts as gateway_a), sorted. */
  gateways: string[]
  /** Currencies of its gateway_d plans, in integration order, without repeats. */
  planCurrencies: string[]
}

/** A product row with one of its integrations whose gateway reference matched (integrationMatches). */
export type IntegrationMatch = ProductRow & {i_count: null | number; i_interval: null | string; i_type: string}

/**
 * The pricing part of the storage port: locks (the quotes users got), users' stored countries
 * and the catalog reads of the price calculation, a chunk of requests per call (a single price
 * is a chunk of one). Results come in input order, writes apply in input order, inside the
 * caller's write transaction (docs/architecture.md, "The storage port's contracts").
 */
export interface PricingRepository {
  /** A long bulk run follows (batch pricing): the adapter may tune for it (SQLite: a bigger page cache, fewer WAL checkpoints). */
  expectBulk(): void
  /**
   * Batch pricing with its lock and user writes made by another connection while the
   * caller prices on (SQLite: a second thread), asked after `requests` were priced in this
   * bulk run the usual way (possibly inside the caller's write transaction: the other
   * connection gets ready meanwhile; begin() decides); undefined when the adapter does not
   * offer it, or declines (SQLite: when those requests wrote few locks). See WriteBehind for
   * what changes while it runs.
   */
  writeBehind?(requests: number): undefined | WriteBehind
  /**
   * The locks of these lock keys (user id, or the IP of an anonymous visitor). `memoryOnly`
   * (the server's first attempt at a price, outside a transaction): a lock the adapter would
   * have to ask a database server for, and does not remember (rememberLocks), may come back
   * undefined without that round trip. The caller then prices the request again in a
   * transaction, whose read finds it (PostgreSQL; SQLite reads locally either way).
   */
  loadLocks(keys: readonly string[], options?: {memoryOnly?: boolean}): Promise<(Lock | undefined)[]>
  /**
   * Per key, a text standing for what a reused lock's answer is made of (its country,
   * currency, package, experiment and arm, and its stored quote), or undefined where no lock
   * is stored. Equal texts mean equal values of all of them; the texts are compared only with
   * texts of the same store. Cheaper than loadLocks: batch pricing reuses the line it
   * printed for a lock of the same text (docs/performance.md "Locked users: fingerprints and printed lines").
   */
  loadLockFingerprints(keys: readonly string[]): Promise<(string | undefined)[]>
  /** Per IP, the earliest anonymous lock made from it (the one a user who arrives from that IP adopts). */
  loadAnonymousLocks(ips: readonly string[]): Promise<(Lock | undefined)[]>
  /**
   * Store these locks. A new key is inserted as given; an existing key keeps its
   * created_at and takes everything else from the lock.
   */
  saveQuotes(locks: readonly Lock[]): Promise<void>
  /** Remove the locks of these keys (unknown keys are ignored). */
  deleteLocks(keys: readonly string[]): Promise<void>

  /** The stored country of these users (undefined: no users row, or no country on it). */
  userCountries(userIds: readonly string[]): Promise<(string | undefined)[]>
  /**
   * Store users' countries: a new user gets created_at = updated_at = at; a known one
   * whose country differs gets the country and updated_at = at; the same country changes nothing.
   */
  saveUserCountries(rows: readonly UserCountry[]): Promise<void>
  /** A user as `user get` shows it: the anonymous lock of that id (an IP) first, else the users row. */
  user(userId: string): Promise<undefined | User>
  /** Whether any subscription or charge names this user id. */
  userHasRevenue(userId: string): Promise<boolean>

  /**
   * A number that changes whenever another connection commits what a long-lived process keeps
   * (SQLite's data_version moves on every commit; PostgreSQL's on catalog, configuration, API
   * key and lock changes, not on new locks, revenue or imports): the server's pricing context,
   * checked keys and remembered locks are dropped when it moves. Commits made through this
   * store itself do not move it.
   */
  catalogVersion(): Promise<number>
  /**
   * catalogVersion() where it is a local read that moves on every commit of another
   * connection, whatever it wrote (SQLite's data_version): a long-lived process reads it once
   * per unit of work (the server, per request) and keeps what it read from the store while it
   * stays (API keys, remembered locks, the pricing context). Left out where the version costs
   * a round trip or counts catalog changes only (PostgreSQL).
   */
  commitVersion?(): number
  /**
   * Remember up to `max` lock rows between units of work, for a long-lived process that reads
   * catalogVersion() before each (the server, per request): an adapter offers it only where
   * that version moves whenever another connection changes or deletes a lock (SQLite's
   * data_version moves on every commit; PostgreSQL's catalog version on lock changes too).
   */
  rememberLocks?(max: number): void
  /**
   * Keep catalogVersion() current without a round trip per call, for a long-lived process that
   * reads it before each unit of work (the server): PostgreSQL follows the store's notifications
   * (LISTEN), and reads it while they cannot be received.
   */
  followVersion?(): void
  /**
   * Pricing's view of every product at once (the same shape as product()), sorted by api_id:
   * a batch reads the catalog in one call instead of one call per product it meets.
   */
  catalogSnapshot(): Promise<PricingProduct[]>
  /** A product's row by api_id (the columns pricing, revenue and imports read; src/catalog/lookup.ts). */
  productRow(apiId: string): Promise<ProductRow | undefined>
  /** A product's row by store id. */
  productRowById(id: number): Promise<ProductRow | undefined>
  /**
   * The products with an integration of one of these types whose gateway reference is `ref`,
   * one entry per matching integration, by type then integration order of creation.
   */
  integrationMatches(types: readonly string[], ref: string): Promise<IntegrationMatch[]>
  /** Pricing's view of one product by api_id: row, country prices, gateways, plan currencies. */
  product(apiId: string): Promise<PricingProduct | undefined>
  /** The api_id of a product by its store id (baseline references). */
  productApiId(id: number): Promise<string | undefined>
  /** Every product's api_id, sorted. */
  productApiIds(): Promise<string[]>
  /** Countries that have a country price or a localization factor, sorted, without repeats. */
  pricedCountries(): Promise<string[]>
}

/**
 * Write-behind (docs/pricing.md, "Write-behind"): while it runs, saveQuotes, saveUserCountries
 * and recordExposure gather a group that commit() sends to the other connection as one
 * transaction; the caller uses the repositories outside any transaction of its own. What it
 * cannot take throws WriteBehindAbort, and the caller prices the uncommitted groups again.
 */
export interface WriteBehind {
  /**
   * Before the first group: after the caller's last write transaction and before its first
   * read for write-behind (waits for the other connection to be ready), `priced` requests
   * having been priced the usual way. False when it could not start, or declines (SQLite:
   * those requests wrote few locks, or the caller is inside a transaction): call end().
   */
  begin(priced: number): boolean
  /** Send the rows gathered since the last call as one transaction; its sequence number. */
  commit(): number
  /** Whether group `seq` is committed: true, false when it was not written, undefined when not yet (wait: false). */
  committed(seq: number, wait: boolean): boolean | undefined
  /** End write-behind (waits for the other connection to close); the repository writes in the caller's transactions again. */
  end(): void
}
