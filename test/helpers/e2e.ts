import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, it} from 'vitest'

import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import type {PgStore} from '../../src/store/postgres/store.js'
import {freshPgDatabase, type PgDatabase} from './postgres.js'
import {dump, fileDigest} from './dump.js'
import {initStore, run, seededStore, tempStore} from './run.js'

/**
 * The end-to-end suites (test/e2e/) run once per adapter: vitest.config.ts runs them as the
 * project "postgres" with PRICECTL_TEST_ADAPTER=postgres, besides the run on
 * SQLite. A test asks this module for its store and passes it as `--db` (or PRICECTL_DB):
 * a new SQLite file in a temp folder, or the URL of a new database on the run's PostgreSQL
 * (test/helpers/postgres.ts), dropped after the test file.
 */
export const E2E_ADAPTER: 'postgres' | 'sqlite' = process.env.PRICECTL_TEST_ADAPTER === 'postgres' ? 'postgres' : 'sqlite'

/** True on the PostgreSQL pass: for the few checks that only mean something on a file (modes, WAL, bytes). */
export const onPostgres = E2E_ADAPTER === 'postgres'

const databases: PgDatabase[] = []
afterAll(async () => {
  for (const store of readers.splice(0)) await store.close()
  for (const d of databases.splice(0)) await d.drop()
  // The templates were among them: the next file of this worker makes its own.
  pgTemplates.clear()
})

/** A fresh, empty store for one test: what `--db` is given. */
export async function e2eStore(): Promise<string> {
  return onPostgres ? await pgDatabase() : tempStore()
}

/**
 * A new store as `db init` makes it, for a test whose first command only reads (such a
 * command refuses a --db that names no store): on PostgreSQL e2eStore's database is one.
 */
export async function e2eInitStore(): Promise<string> {
  return onPostgres ? await pgDatabase() : initStore()
}

/**
 * `it` for a test that opens no store (help, the manifest, the build's files, completion):
 * it is the same on either adapter, so it runs in the SQLite pass only; the PostgreSQL pass
 * would repeat it unchanged.
 */
export const itWithoutStore = it.skipIf(onPostgres)

/** A new database on the run's PostgreSQL, a copy of `template` (default: the migrated empty one), dropped after the file. */
async function pgDatabase(template?: string): Promise<string> {
  // freshPgDatabase copies the database PRICECTL_TEST_PG_TEMPLATE names (test/helpers/postgres.ts pgTemplate).
  const saved = process.env.PRICECTL_TEST_PG_TEMPLATE
  if (template) process.env.PRICECTL_TEST_PG_TEMPLATE = template
  try {
    const d = await freshPgDatabase()
    databases.push(d)
    return d.url
  } finally {
    if (saved === undefined) delete process.env.PRICECTL_TEST_PG_TEMPLATE
    else process.env.PRICECTL_TEST_PG_TEMPLATE = saved
  }
}

/** The template databases of this file's seeds, by key (PostgreSQL). */
const pgTemplates = new Map<string, Promise<string>>()

/**
 * A new store holding what `seed` writes, for setup that is not what the test is about.
 * `seed` runs once per test file and key, on a SQLite file, which later calls copy
 * (test/helpers/run.ts seededStore); on PostgreSQL `db copy` moves that file into a template
 * database once, and each call gets a new database made from it (CREATE DATABASE ...
 * TEMPLATE, a file copy on the server). Setup through commands costs a command each time,
 * on PostgreSQL a catalog write's price impact alone about a second of CPU; a copy
 * costs milliseconds. `seed` gets a SQLite path: commands (test/helpers/run.ts run) or SQL.
 */
export async function e2eSeeded(key: string, seed: (db: string) => Promise<void> | void): Promise<string> {
  const file = tempStore()
  await seededStore(file, `e2e:${key}`, async (db) => seed(db))
  if (!onPostgres) return file
  let template = pgTemplates.get(key)
  if (!template) {
    template = (async () => {
      const url = await pgDatabase()
      const copied = await run(undefined, ['db', 'copy', file, url, '--yes', '--json'])
      if (copied.code !== 0) throw new Error(`db copy of the seed "${key}" to PostgreSQL failed: ${copied.stdout} ${copied.stderr}`)
      return new URL(url).pathname.slice(1)
    })()
    pgTemplates.set(key, template)
  }
  return await pgDatabase(await template)
}

/** A temp folder for a test's files (a store's folder is not one on PostgreSQL). */
export function e2eDir(): string {
  return mkdtempSync(join(tmpdir(), 'pricectl-e2e-'))
}

/** Run `fn` on the store through the storage port (either adapter), and close it. */
export async function withPort<T>(db: string, fn: (store: StorePort) => T): Promise<T> {
  const store = openStore(db)
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}

/** The stores the read-backs below opened on PostgreSQL, by URL, open until the file ends: closed before the databases are dropped. */
const readers: StorePort[] = []
const readerOf = new Map<string, StorePort>()

/**
 * Run `fn` on the store for a read-back: on SQLite as withPort; on PostgreSQL on one store
 * per database kept open for the file, since each open costs a thread, a connection and
 * the schema checks (a third of a second of CPU), more than most read-backs. Between
 * read-backs it is an idle connection outside any transaction, so each one reads what the
 * commands have committed.
 */
async function readBack<T>(db: string, fn: (store: StorePort) => T): Promise<T> {
  if (!onPostgres) return await withPort(db, fn)
  let store = readerOf.get(db)
  if (!store) {
    store = openStore(db)
    readerOf.set(db, store)
    readers.push(store)
  }
  return fn(store)
}

/**
 * Every table's rows, read through the storage port (the tables part): what a store holds,
 * to compare before and after a command that must not write, on either adapter.
 */
export async function storeRows(db: string): Promise<Record<string, unknown[][]>> {
  return await readBack(db, async (store) =>
    await store.tables.snapshot(async () => {
      const out: Record<string, unknown[][]> = {}
      for (const t of await store.tables.list()) {
        const rows: unknown[][] = []
        for await (const chunk of store.tables.read(t.name, t.columns.map((c) => c.name), 10_000)) rows.push(...chunk)
        out[t.name] = rows
      }
      return out
    }),
  )
}

/**
 * What the store holds, to compare before and after a command that must not write: on
 * SQLite the full dump (test/helpers/dump.ts: rows, schema, schema version), on PostgreSQL
 * every row of every table of the port's list (tables.list) in PostgreSQL's text form, in
 * one statement: reading them through tables.read costs five round trips a table.
 */
export async function storeState(db: string): Promise<unknown> {
  if (!onPostgres) return dump(db)
  return await readBack(db, async (store) => {
    const names = (await store.tables.list()).map((t) => t.name)
    const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`
    const [row] = await (store as PgStore).raw.queryArrays<string[][]>(`SELECT ${names.map((n) => `(SELECT coalesce(array_agg(x::text ORDER BY x::text), '{}') FROM ${quoted(n)} x)`).join(', ')}`)
    return Object.fromEntries(names.map((n, i) => [n, row[i]]))
  })
}

/** SHA-256 of the store file (byte-for-byte unchanged); on PostgreSQL there is no file: an empty string. */
export function storeDigest(db: string): string {
  return onPostgres ? '' : fileDigest(db)
}

/** Rows in one table of the store, through the port (either adapter). */
export async function tableCount(db: string, table: string): Promise<number> {
  return await readBack(db, async (store) => (await store.tables.counts())[table] ?? 0)
}

/** The rows of one table as objects by column name, through the port (either adapter). */
export async function tableRows(db: string, table: string): Promise<Record<string, unknown>[]> {
  return await readBack(db, async (store) => {
    const shape = (await store.tables.list()).find((t) => t.name === table)
    if (!shape) throw new Error(`no table ${table}`)
    const names = shape.columns.map((c) => c.name)
    return await store.tables.snapshot(async () => {
      const rows: unknown[][] = []
      for await (const chunk of store.tables.read(table, names, 10_000)) rows.push(...chunk)
      return rows.map((row) => Object.fromEntries(names.map((n, i) => [n, row[i]])))
    })
  })
}
