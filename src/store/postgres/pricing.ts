import type {ProductRow} from '../../catalog/lookup.js'
import type {User} from '../../catalog/users.js'
import type {Lock} from '../../pricing/locks.js'
import type {IntegrationMatch, PricingProduct, PricingRepository, UserCountry} from '../port/pricing.js'
import {RememberedLocks} from '../remembered-locks.js'
import {lockFingerprint, lockFromRow, lockRow, type LockRow} from '../rows.js'
import type {ClaimStatement, PgStore} from './store.js'
import {repeats} from './support.js'

const COLUMNS = 'lock_key, user_id, ip, anonymous, country, currency, package_id, experiment_id, arm_id, quote_json, created_at, updated_at'

const PRODUCT = 'id, api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id'

/**
 * The locks of keys ($1, an array), each with its input position. One index probe per key
 * (LATERAL ... LIMIT 1): as a join, a plan cached while the table was small hashes the keys
 * and scans every lock, per request, however large the table grew.
 */
export const LOAD_LOCKS = `SELECT k.n, l.* FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n)
  CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM locks WHERE lock_key = k.key LIMIT 1) AS l`

/** The countries of users ($1, an array), each with its input position: an index probe per user, as LOAD_LOCKS. */
export const USER_COUNTRIES = `SELECT k.n, u.country FROM unnest($1::text[]) WITH ORDINALITY AS k(id, n)
  CROSS JOIN LATERAL (SELECT country FROM users WHERE user_id = k.id LIMIT 1) AS u`

/** Locks as rows: the parameters of ROWS ($1..$12, COLUMNS' order). */
const ROWS = `SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::text[])`

/** ROWS' parameters: one array per column, of these locks rows. */
function lockColumns(rows: readonly LockRow[]): unknown[][] {
  return Array.from({length: 12}, (_, i) => rows.map((row) => row[i]))
}

/** Users' countries from `source` (rows of id, country, time), inserted or changed; `where`: of which users. */
const saveCountries = (source: string, where = '') => `INSERT INTO users (user_id, country, created_at, updated_at) SELECT id, country, at, at FROM ${source} AS t(id, country, at) ${where}
  ON CONFLICT (user_id) DO UPDATE SET country = excluded.country, updated_at = excluded.updated_at WHERE users.country IS DISTINCT FROM excluded.country`
/** Users' countries as arrays from $n on: ids, countries, times. */
const countryArrays = (n: number) => `unnest($${n}::text[], $${n + 1}::text[], $${n + 2}::text[])`
const SAVE_COUNTRIES = saveCountries(countryArrays(1))
/**
 * A claim statement's two texts (ClaimStatement): `text`, a transaction's claims as a plain
 * INSERT and its users' countries, one statement; `alone`, the same as the transaction's lone
 * statement: ON CONFLICT DO NOTHING, the keys of the locks it made, and the countries of their
 * users only. Not the rows made: the server has them.
 */
type ClaimSql = {alone: string; text: string}

function claimSql(locks: string, countries: (where?: string) => string): ClaimSql {
  return {
    alone: `WITH claimed AS (INSERT INTO locks (${COLUMNS}) ${locks} ON CONFLICT (lock_key) DO NOTHING RETURNING lock_key),
  countries AS (${countries('WHERE id IN (SELECT lock_key FROM claimed)')})
  SELECT lock_key FROM claimed`,
    text: `WITH claimed AS (INSERT INTO locks (${COLUMNS}) ${locks}) ${countries()}`,
  }
}

/** Claims as arrays, one per column (ROWS, then $13..$15 of the countries): one text for every size, a batch's chunks. */
const CLAIM_ARRAYS = claimSql(ROWS, (where) => saveCountries(countryArrays(13), where))

/**
 * Up to this many locks and countries, a claim lists them as VALUES rows, a parameter per
 * value, a text per count (the server's groups of new users, a few each): the client encodes
 * and the database parses and unnests no arrays, which costs both less CPU per statement
 * (docs/postgres.md, "Few round trips"). A batch's chunks use the arrays: one text for any size.
 */
const LISTED_MAX = 16
const listedSql = new Map<string, ClaimSql>()

/** `count` rows of `width` parameters from $from on, each cast to `cast` when given. */
function tuples(count: number, width: number, from: number, cast = ''): string {
  return Array.from({length: count}, (_, r) => `(${Array.from({length: width}, (_, i) => `$${from + r * width + i}${cast}`).join(', ')})`).join(', ')
}

/** A claim of these locks rows and users' countries: its texts and their parameters. */
function claimOf(rows: readonly LockRow[], countries: readonly UserCountry[]): ClaimSql & {values: unknown[]} {
  if (rows.length === 0 || rows.length > LISTED_MAX || countries.length === 0 || countries.length > LISTED_MAX) return {...CLAIM_ARRAYS, values: [...lockColumns(rows), ...countryColumns(countries)]}
  const key = `${rows.length},${countries.length}`
  let sql = listedSql.get(key)
  if (sql === undefined) {
    const listed = `(VALUES ${tuples(countries.length, 3, 12 * rows.length + 1, '::text')})`
    sql = claimSql(`VALUES ${tuples(rows.length, 12, 1)}`, (where) => saveCountries(listed, where))
    listedSql.set(key, sql)
  }
  const values: unknown[] = rows.flat()
  for (const c of countries) values.push(c.userId, c.country, c.at)
  return {...sql, values}
}

/** SAVE_COUNTRIES' parameters. */
function countryColumns(rows: readonly UserCountry[]): unknown[][] {
  return [rows.map((r) => r.userId), rows.map((r) => r.country), rows.map((r) => r.at)]
}

/**
 * A server claims blind (PgStore.claimBlind) while fewer than this share of its recent
 * lock-writing runs met a lock it did not remember (coldLocks): a blind claim of one loses,
 * costing a run and a round trip, where reading first costs a round trip per run.
 */
const BLIND_BELOW = 0.3
/** The weight of a run in coldLocks: an average over about the last 20 runs. */
const COLD_WEIGHT = 0.05

/**
 * PostgreSQL adapter of the pricing repository. A chunk is one statement: the keys go as
 * one array parameter (unnest ... WITH ORDINALITY gives each answer its input position),
 * so batch pricing pays one round trip per chunk and kind, not one per request. A write
 * chunk that names a key twice is written row by row, so the last one wins as on SQLite
 * (one INSERT ... ON CONFLICT cannot touch a row twice).
 */
export class PgPricing implements PricingRepository {
  /**
   * Lock rows read outside a transaction (rememberLocks(); the server's), for the catalog
   * version catalogVersion() read last. The version moves for a lock another connection
   * changed or deleted (store.ts, commitSql), not for a new one, and only rows found are kept.
   */
  private remembered?: RememberedLocks
  /**
   * The server's recent lock-writing runs that met a lock it did not remember, as a moving
   * average (COLD_WEIGHT): high after a restart, or while users go back and forth between
   * instances; low while the runs' users are new (BLIND_BELOW).
   */
  private coldLocks = 0

  /** What a pending claim statement holds (claimMore), to be joined by the transaction's next claims and countries. */
  private readonly claimParts = new WeakMap<ClaimStatement, {countries: readonly UserCountry[]; locks: readonly Lock[]}>()

  constructor(private readonly store: PgStore) {}

  private get pg() {
    return this.store.pg
  }

  /** Answers in input order: `sql` selects the input position (1-based) first, then the row. */
  private async byPosition<R extends unknown[], T>(sql: string, keys: readonly string[], map: (row: R) => T): Promise<(T | undefined)[]> {
    const out = new Array<T | undefined>(keys.length).fill(undefined)
    if (keys.length === 0) return out
    for (const row of await this.pg.queryArrays<[number, ...unknown[]]>(sql, [keys])) out[row[0] - 1] = map(row.slice(1) as R)
    return out
  }

  expectBulk(): void {
    // Nothing to tune per connection: the server's shared buffers and WAL settings are the operator's.
  }

  async loadLocks(keys: readonly string[], options?: {memoryOnly?: boolean}): Promise<(Lock | undefined)[]> {
    return await this.lockRows(keys, lockFromRow, options?.memoryOnly === true)
  }

  async loadLockFingerprints(keys: readonly string[]): Promise<(string | undefined)[]> {
    return await this.lockRows(keys, lockFingerprint)
  }

  /** The locks rows of these keys, each mapped (loadLocks, loadLockFingerprints). */
  private async lockRows<T>(keys: readonly string[], map: (row: LockRow) => T | undefined, memoryOnly = false): Promise<(T | undefined)[]> {
    const store = this.store
    let found: (T | undefined)[]
    if (keys.length > 0 && (store.unbegunRead || !store.inside)) {
      // Outside a transaction, or the first read of a read transaction (a locked user's price):
      // on its own, no BEGIN and COMMIT, pipelined with the other requests' reads.
      found = new Array<T | undefined>(keys.length).fill(undefined)
      const r = store.inside ? undefined : this.remembered
      let asked: readonly string[] = keys
      // Where each asked key is in `keys`, when only some are asked.
      let at: number[] | undefined
      if (r) {
        const missing: string[] = []
        at = []
        for (let i = 0; i < keys.length; i++) {
          const row = r.get(keys[i])
          if (row !== undefined) found[i] = map(row)
          else if (!memoryOnly) {
            // A server's first attempt asks for nothing: its transaction reads what the server
            // does not remember (new users cost one statement less) and remembers it (below).
            missing.push(keys[i])
            at.push(i)
          }
        }
        asked = missing
      }
      if (asked.length > 0) {
        const epoch = r?.epoch
        for (const row of await store.lookup<[number, ...unknown[]]>(LOAD_LOCKS, [asked], true)) {
          const lock = row.slice(1) as LockRow
          found[at === undefined ? row[0] - 1 : at[row[0] - 1]] = map(lock)
          r?.keep(lock, epoch)
        }
      }
    } else if (keys.length > 0 && this.remembered && store.mayClaimBlind && this.coldLocks < BLIND_BELOW) {
      // The server's lock-writing run: what it does not remember is claimed without a read
      // (blind). A group of new users is then one statement, its commit; a lock that exists
      // loses its claim, and the run goes again reading first (docs/postgres.md).
      const r = this.remembered
      if (keys.some((k) => store.claimed.has(k))) store.readFirst()
      store.claimBlind()
      // Counted as meeting none: a claim that loses has its run read again, which counts the lock.
      this.coldLocks *= 1 - COLD_WEIGHT
      found = keys.map((k) => {
        const row = r.get(k)
        return row === undefined ? undefined : map(row)
      })
    } else if (keys.length > 0 && store.writingLocks) {
      // A read of a lock-writing transaction: alone, or with the claims it must see (store.read()).
      found = new Array<T | undefined>(keys.length).fill(undefined)
      const r = this.remembered
      const epoch = r?.epoch
      const [rows] = (await store.read({rowMode: 'array', text: LOAD_LOCKS, values: [keys]})) as [number, ...unknown[]][][]
      let cold = 0
      for (const row of rows) {
        const lock = row.slice(1) as LockRow
        found[row[0] - 1] = map(lock)
        if (r && r.get(lock[0]) === undefined && !store.claimed.has(lock[0])) cold = COLD_WEIGHT
        // Committed by another writer (READ COMMITTED), so kept whatever this transaction does;
        // not a lock this transaction claimed itself (its rollback would take it back).
        if (r && !store.claimed.has(lock[0])) r.keep(lock, epoch)
      }
      if (r) this.coldLocks = this.coldLocks * (1 - COLD_WEIGHT) + cold
    } else found = await this.byPosition<LockRow, T | undefined>(LOAD_LOCKS, keys, map)
    // A writing transaction claims the keys it read as absent (or, blind, did not read).
    if (this.store.claiming) for (let i = 0; i < keys.length; i++) if (found[i] === undefined && !this.store.claimed.has(keys[i])) this.store.absent.add(keys[i])
    return found
  }

  async loadAnonymousLocks(ips: readonly string[]): Promise<(Lock | undefined)[]> {
    return await this.byPosition<LockRow, Lock | undefined>(
      `SELECT k.n, l.* FROM unnest($1::text[]) WITH ORDINALITY AS k(ip, n)
       CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM locks WHERE anonymous = 1 AND ip = k.ip ORDER BY created_at, lock_key LIMIT 1) AS l`,
      ips,
      lockFromRow,
    )
  }

  async saveQuotes(locks: readonly Lock[]): Promise<void> {
    if (locks.length === 0) return
    this.forget(locks.map((l) => l.lock_key))
    if (repeats(locks, (l) => l.lock_key)) {
      for (const l of locks) await this.saveQuotes([l])
      return
    }
    const store = this.store
    if (!store.claiming) {
      await this.upsert(locks)
      return
    }
    // A lock read as absent is claimed: written only when no other writer (another server, a
    // batch: lock writers take no store-wide lock) made it since. A writer that loses runs
    // again and reads the lock that won, so a user's quote is the one stored, whoever wrote first.
    let claims = locks
    let changes: readonly Lock[] = []
    if (!locks.every((l) => store.absent.has(l.lock_key))) {
      claims = locks.filter((l) => store.absent.has(l.lock_key))
      changes = locks.filter((l) => !store.absent.has(l.lock_key))
      // A lock that exists changes (or was not read first): only with the write lock.
      if (store.writingLocks) store.needsWriteLock(`the lock of ${changes[0].lock_key} exists: it changes`)
    }
    if (claims.length > 0 && store.writingLocks) {
      // A lock-writing transaction sends its claims with its next read or as its commit
      // (ClaimStatement: a plain INSERT with other statements, which fails on the key of a lock
      // another writer made meanwhile and takes the transaction with it; alone, the locks it made).
      this.claimMore(claims, [])
      for (const l of claims) {
        store.absent.delete(l.lock_key)
        store.claimed.add(l.lock_key)
      }
    } else if (claims.length > 0) {
      const won = await this.pg.queryArrays<[string]>(`INSERT INTO locks (${COLUMNS}) ${ROWS} ON CONFLICT (lock_key) DO NOTHING RETURNING lock_key`, lockColumns(claims.map(lockRow)))
      if (won.length < claims.length) {
        const got = new Set(won.map(([k]) => k))
        store.lostClaim(claims.filter((l) => !got.has(l.lock_key)).map((l) => l.lock_key))
      }
      for (const l of claims) {
        store.absent.delete(l.lock_key)
        store.claimed.add(l.lock_key)
      }
    }
    if (changes.length > 0) await this.upsert(changes)
  }

  /**
   * Add claims and users' countries to the open lock-writing transaction's pending claim
   * statement (ClaimStatement), one statement however many chunks claim; a new one when the
   * last was sent. False, and nothing done, for countries alone when no claim is pending.
   */
  private claimMore(locks: readonly Lock[], countries: readonly UserCountry[]): boolean {
    const store = this.store
    const pending = store.claim
    const parts = pending && this.claimParts.get(pending)
    if (pending && parts) {
      const joined = this.claimStatement([...parts.locks, ...locks], [...parts.countries, ...countries])
      if (store.replaceDeferred(pending, joined)) {
        store.claim = joined
        return true
      }
    }
    if (locks.length === 0) return false
    const claim = this.claimStatement(locks, countries)
    store.defer(claim)
    store.claim = claim
    return true
  }

  private claimStatement(locks: readonly Lock[], countries: readonly UserCountry[]): ClaimStatement {
    const rows = locks.map(lockRow)
    const {alone, text, values} = claimOf(rows, countries)
    // Taken after the claims' keys were forgotten: a lock made here is remembered once committed, unless a drop came since.
    const r = this.remembered
    const epoch = r?.epoch
    const claim: ClaimStatement = {
      alone: {rowMode: 'array', text: alone, values},
      keys: locks.map((l) => l.lock_key),
      text,
      values,
      won: (made) => {
        if (!r) return
        const keys = new Set(made.map(([key]) => key))
        for (const row of rows) if (keys.has(row[0])) r.keep(row, epoch)
      },
    }
    this.claimParts.set(claim, {countries, locks})
    return claim
  }

  /** Insert new locks, and update existing ones (created_at kept): a write transaction's locks not read as absent. */
  private async upsert(locks: readonly Lock[]): Promise<void> {
    // In a write transaction, whose commit moves the catalog version when a lock changed (remembered rows elsewhere go).
    if (!this.store.inside) return await this.store.transaction(async () => await this.upsert(locks), {write: true})
    await this.pg.run(
      `INSERT INTO locks (${COLUMNS}) ${ROWS}
       ON CONFLICT (lock_key) DO UPDATE SET user_id = excluded.user_id, ip = excluded.ip, anonymous = excluded.anonymous, country = excluded.country,
         currency = excluded.currency, package_id = excluded.package_id, experiment_id = excluded.experiment_id, arm_id = excluded.arm_id,
         quote_json = excluded.quote_json, updated_at = excluded.updated_at`,
      lockColumns(locks.map(lockRow)),
    )
  }

  async deleteLocks(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    this.forget(keys)
    // In a write transaction, whose commit moves the catalog version (remembered rows elsewhere go).
    if (!this.store.inside) return await this.store.transaction(async () => await this.deleteLocks(keys), {write: true})
    await this.pg.run('DELETE FROM locks WHERE lock_key = ANY($1::text[])', [keys])
  }

  async userCountries(userIds: readonly string[]): Promise<(string | undefined)[]> {
    return await this.byPosition<[null | string], string | undefined>(
      USER_COUNTRIES,
      userIds,
      ([c]) => c ?? undefined,
    )
  }

  async saveUserCountries(rows: readonly UserCountry[]): Promise<void> {
    if (rows.length === 0) return
    if (repeats(rows, (r) => r.userId)) {
      for (const r of rows) await this.saveUserCountries([r])
      return
    }
    // In a lock-writing transaction: only the countries of the users whose new lock it claimed.
    const locking = this.store.writingLocks
    if (locking) {
      for (const r of rows) if (!this.store.claimed.has(r.userId)) this.store.needsWriteLock(`the country of ${r.userId} without a new lock`)
      // Folded into the claims when they were not sent yet (nothing reads it before): a group
      // of new users writes one statement, its transaction's commit.
      if (!this.claimMore([], rows)) this.store.defer({text: SAVE_COUNTRIES, values: countryColumns(rows)})
      return
    }
    await this.pg.run(SAVE_COUNTRIES, countryColumns(rows))
  }

  async user(userId: string): Promise<undefined | User> {
    // The anonymous lock first: it is the id's current quote (a users row for an IP is left by an adoption).
    const [visitor] = await this.pg.query<{country: string; created_at: string; updated_at: string}>(
      'SELECT country, created_at, updated_at FROM locks WHERE lock_key = $1 AND anonymous = 1',
      [userId],
    )
    if (visitor) return {...visitor, user_id: userId}
    return (await this.pg.query<User>('SELECT user_id, country, created_at, updated_at FROM users WHERE user_id = $1', [userId]))[0]
  }

  async userHasRevenue(userId: string): Promise<boolean> {
    return (await this.pg.query('SELECT 1 FROM subscriptions WHERE user_id = $1 UNION ALL SELECT 1 FROM charges WHERE user_id = $1 LIMIT 1', [userId])).length > 0
  }

  async catalogVersion(): Promise<number> {
    const version = await this.store.dataVersion()
    this.remembered?.seen(version)
    return version
  }

  /** This store writes these locks: no longer remembered. */
  private forget(keys: readonly string[]): void {
    this.remembered?.forget(keys)
  }

  /**
   * Remember up to `max` lock rows between requests (PgPricing.remembered), for a long-lived
   * process that reads catalogVersion() before each (the server, per request).
   */
  rememberLocks(max: number): void {
    this.remembered = new RememberedLocks(max)
  }

  followVersion(): void {
    this.store.followVersion()
  }

  async catalogSnapshot(): Promise<PricingProduct[]> {
    // One round trip for the four reads, in one snapshot when the caller has a transaction open.
    const [rows, prices, gateways, plans] = await this.pg.exec(
      `SELECT id, api_id, name, base_px_minor, interval, interval_count, min_px_minor, max_px_minor, baseline_id FROM products ORDER BY api_id;
       SELECT product_id, country, currency, amount_minor AS "amountMinor" FROM country_prices ORDER BY product_id, country;
       SELECT DISTINCT product_id, CASE type WHEN 'gateway_a_with_interval' THEN 'gateway_a' ELSE type END AS g FROM product_integrations ORDER BY product_id, g;
       SELECT product_id, currency FROM product_integrations WHERE type = 'gateway_d' AND currency IS NOT NULL ORDER BY product_id, position`,
    ) as unknown as [ProductRow[], {amountMinor: number; country: string; currency: string; product_id: number}[], {g: string; product_id: number}[], {currency: string; product_id: number}[]]
    const byId = new Map<number, PricingProduct>()
    const out = rows.map((row) => {
      const p: PricingProduct = {...row, countryPrices: [], gateways: [], planCurrencies: []}
      byId.set(row.id, p)
      return p
    })
    for (const c of prices) byId.get(c.product_id)?.countryPrices.push({amountMinor: c.amountMinor, country: c.country, currency: c.currency})
    for (const r of gateways) byId.get(r.product_id)?.gateways.push(r.g)
    for (const r of plans) {
      const p = byId.get(r.product_id)
      if (p && !p.planCurrencies.includes(r.currency)) p.planCurrencies.push(r.currency)
    }
    return out
  }

  async productRow(apiId: string): Promise<ProductRow | undefined> {
    return (await this.pg.query<ProductRow>(`SELECT ${PRODUCT} FROM products WHERE api_id = $1`, [apiId]))[0]
  }

  async productRowById(id: number): Promise<ProductRow | undefined> {
    return (await this.pg.query<ProductRow>(`SELECT ${PRODUCT} FROM products WHERE id = $1`, [id]))[0]
  }

  async integrationMatches(types: readonly string[], ref: string): Promise<IntegrationMatch[]> {
    if (types.length === 0) return []
    return await this.pg.query<IntegrationMatch>(
      `SELECT p.id, p.api_id, p.name, p.base_px_minor, p.interval, p.interval_count, p.min_px_minor, p.max_px_minor, p.baseline_id,
         pi.type AS i_type, pi.interval AS i_interval, pi.interval_count AS i_count
       FROM product_integrations pi JOIN products p ON p.id = pi.product_id
       WHERE pi.type = ANY($1::text[]) AND pi.gateway_ref = $2 ORDER BY pi.type, pi.id`,
      [types, ref],
    )
  }

  async product(apiId: string): Promise<PricingProduct | undefined> {
    const row = await this.productRow(apiId)
    if (!row) return undefined
    const prices = await this.pg.query<PricingProduct['countryPrices'][number]>(
      'SELECT country, currency, amount_minor AS "amountMinor" FROM country_prices WHERE product_id = $1 ORDER BY country',
      [row.id],
    )
    const gateways = await this.pg.queryArrays<[string]>(
      `SELECT DISTINCT CASE type WHEN 'gateway_a_with_interval' THEN 'gateway_a' ELSE type END AS g FROM product_integrations WHERE product_id = $1 ORDER BY g`,
      [row.id],
    )
    const plans = await this.pg.queryArrays<[string]>(
      `SELECT currency FROM product_integrations WHERE product_id = $1 AND type = 'gateway_d' AND currency IS NOT NULL ORDER BY position`,
      [row.id],
    )
    return {...row, countryPrices: prices, gateways: gateways.map(([g]) => g), planCurrencies: [...new Set(plans.map(([c]) => c))]}
  }

  async productApiId(id: number): Promise<string | undefined> {
    return (await this.pg.query<{api_id: string}>('SELECT api_id FROM products WHERE id = $1', [id]))[0]?.api_id
  }

  async productApiIds(): Promise<string[]> {
    return (await this.pg.queryArrays<[string]>('SELECT api_id FROM products ORDER BY api_id')).map(([a]) => a)
  }

  async pricedCountries(): Promise<string[]> {
    return (await this.pg.queryArrays<[string]>('SELECT country FROM country_prices UNION SELECT country FROM localization_factors ORDER BY 1')).map(([c]) => c)
  }
}
