import {connectPg, type PgClient} from '../../src/store/postgres/client.js'

/**
 * PostgreSQL databases for tests. The run's server (test/helpers/global-setup.ts: the
 * embedded cluster, or PRICECTL_TEST_PG_URL) holds a template database migrated to the
 * current schema; each test gets a fresh copy of it (CREATE DATABASE ... TEMPLATE: a file
 * copy, a few ms), dropped by its cleanup.
 */

/** The admin URL of the run's server (its `postgres` database). */
export function pgServerUrl(): string {
  const url = process.env.PRICECTL_TEST_PG_ADMIN
  if (!url) throw new Error('no PostgreSQL for this test run: test/helpers/global-setup.ts sets PRICECTL_TEST_PG_ADMIN (run the tests with vitest)')
  return url
}

/** The migrated template's name. */
export function pgTemplate(): string {
  return process.env.PRICECTL_TEST_PG_TEMPLATE ?? 'pricectl_template'
}

/** The URL of another database on the run's server. */
export function pgUrlOf(database: string): string {
  const u = new URL(pgServerUrl())
  u.pathname = `/${database}`
  return u.toString()
}

let admin: PgClient | undefined
let counter = 0

function adminClient(): PgClient {
  if (!admin || admin.closed) admin = connectPg(pgServerUrl())
  return admin
}

export type PgDatabase = {drop(): Promise<void>; name: string; url: string}

/**
 * A new database for one test: migrated to the current schema with the seed data (`empty:
 * true`: no tables at all, for tests of opening and migrating).
 */
export async function freshPgDatabase(options: {empty?: boolean} = {}): Promise<PgDatabase> {
  const name = `pricectl_t${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`
  const template = options.empty ? 'template0' : pgTemplate()
  await adminClient().exec(`CREATE DATABASE "${name}" TEMPLATE "${template}"`)
  return {
    async drop() {
      await adminClient().exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    },
    name,
    url: pgUrlOf(name),
  }
}
