import {OperationalError} from '../../errors.js'
import {connectPg, type PgClient, type PgConn, PgError, redactUrl, urlStatementTimeout} from './client.js'
import {checkNotNewerPg, migratePg, pgMeta, pgSchemaVersion} from './migrations.js'
import {loadExponentsPg} from './seed.js'
import {PgStore} from './store.js'

export type PgOpenOptions = {
  /** Apply pending migrations (default true). `db info` opens without; a new store is always migrated. */
  migrate?: boolean
  /** How many transactions may be open at once, each on its own connections (`serve --pool-size`; default 1). */
  poolSize?: number
  /** Open for reading only (the import worker's reader): nothing is created, migrated or recorded. */
  readOnly?: boolean
  /** The session's statement_timeout (ms), unless the URL sets `statement_timeout` (docs/postgres.md "Timeouts"). */
  statementTimeoutMs?: number
}

/** Why a connection failed, with what to run or check: a short message naming the URL (no password). */
export function connectError(error: unknown, url: string): OperationalError {
  const e = error as PgError
  const shown = redactUrl(url)
  let where: {database: string; host: string; port: string; user: string}
  try {
    const u = new URL(url)
    const database = decodeURIComponent(u.pathname.slice(1)) || process.env.PGDATABASE || 'the database'
    where = {database, host: u.hostname || process.env.PGHOST || 'localhost', port: u.port || process.env.PGPORT || '5432', user: decodeURIComponent(u.username) || process.env.PGUSER || 'the user'}
  } catch {
    return new OperationalError(`cannot open the PostgreSQL store ${shown}: ${e.message} (check the URL: postgres://USER@HOST:PORT/DATABASE, special characters percent-encoded)`)
  }
  const code = e.code ?? ''
  const hint =
    code === '3D000'
      ? `create it first (createdb -h ${where.host} -p ${where.port} ${where.database}, or CREATE DATABASE) or pass another --db`
      : code === '28P01'
        ? 'check the password: in the URL, PGPASSWORD or ~/.pgpass'
        : code === '28000'
          ? `check the user name in the URL, and that the server's pg_hba.conf lets ${where.user} connect to ${where.database} from this host`
          : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
            ? `check the host name ${where.host} in the URL`
            : code === 'ECONNREFUSED'
              ? `nothing accepts connections on ${where.host} port ${where.port}: check that the server runs and the URL's host and port`
              : code === 'ETIMEDOUT'
                ? 'check the host, the port and any firewall; ?connect_timeout=SECONDS in the URL waits longer'
                : /SSL|certificate/i.test(e.message)
                  ? 'check sslmode (and sslrootcert for a private CA) in the URL'
                  : 'check that the server runs and the URL is right'
  const reason = e.message.replace(/\.$/, '') || code
  return new OperationalError(`cannot open the PostgreSQL store ${shown}: ${reason} (${hint})`)
}

/**
 * Open the store in the database (and schema: `?options=-c search_path=NAME`) a postgres://
 * URL names. Only an empty schema or a pricectl store is opened: a database holding other
 * tables and no pricectl mark is refused before anything is written. A new store is
 * migrated at once; an older one when `migrate` is not false. The checks run with the first
 * statement (the store opens without a round trip); every statement fails with their error.
 */
export function openPgStore(url: string, options: PgOpenOptions = {}): PgStore {
  const pool = Array.from({length: Math.max(1, options.poolSize ?? 1)}, () => ({locks: connectPg(url, {pipeline: true}), raw: connectPg(url)}))
  const bare = connectPg(url)
  const reads = connectPg(url, {pipeline: true})
  const [first, ...others] = [pool[0].raw, bare, reads, pool[0].locks, ...pool.slice(1).flatMap((p) => [p.raw, p.locks])]
  const opened = opening(first, others, url, options)
  for (const c of [first, ...others]) c.whenOpen(opened)
  return new PgStore(pool, bare, reads, url, options.readOnly ? 'it is opened for reading only' : undefined)
}

/** The store's checks, migrations and session settings, on the transactions' client (the others are given the settings for their first connection). */
async function opening(client: PgClient, others: readonly PgClient[], url: string, options: PgOpenOptions): Promise<void> {
  const shown = redactUrl(url)
  const direct = client.direct
  const pg = {...direct, set: async (name: string, value: string) => {
    await direct.set(name, value)
    for (const c of others) c.remember(name, value)
  }}
  let found: {mark: null | string; tables: number}
  try {
    const [{tables}] = await pg.query<{tables: number}>('SELECT count(*) AS tables FROM pg_catalog.pg_tables WHERE schemaname = current_schema()')
    found = {mark: (await pgMeta(pg, 'store')) ?? null, tables}
  } catch (error) {
    throw connectError(error, url)
  }
  if (found.mark !== 'pricectl' && found.tables > 0 && !(found.mark === null && (await isHalfMade(pg)))) {
    throw new OperationalError(`${shown} holds ${found.tables} table(s) and no pricectl store: pass --db with an empty database (or another schema: ?options=-c%20search_path%3DNAME)`)
  }
  if (options.readOnly) {
    if (found.mark !== 'pricectl') throw new OperationalError(`${shown} holds no pricectl store yet`)
    await pg.set('default_transaction_read_only', 'on')
    checkNotNewerPg(await pgSchemaVersion(pg), shown)
    await loadExponentsPg(pg, {readonly: true})
    return
  }
  await pg.set('lock_timeout', '10000')
  const version = found.mark === 'pricectl' ? await pgSchemaVersion(pg) : 0
  checkNotNewerPg(version, shown)
  if ((options.migrate ?? true) || version === 0) await migratePg(pg, shown)
  if ((await pgSchemaVersion(pg)) >= 2) await loadExponentsPg(pg)
  // After the migrations, which may take longer. The client drops a connection whose statement
  // is unanswered a second past it: a half-open connection is noticed (client.ts).
  if (options.statementTimeoutMs !== undefined && urlStatementTimeout(url) === undefined) await pg.set('statement_timeout', String(Math.max(0, Math.floor(options.statementTimeoutMs))))
}

/** A schema whose only tables are the adapter's own (a first migration that failed or is under way elsewhere). */
async function isHalfMade(pg: PgConn): Promise<boolean> {
  const [row] = await pg.query<{n: number}>(
    `SELECT count(*) AS n FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename NOT IN ('pricectl_meta', 'pricectl_data_version')`,
  )
  return row.n === 0
}
