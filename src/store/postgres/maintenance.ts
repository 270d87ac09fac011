import {SCHEMA_VERSION} from '../migrations.js'
import {pgSchemaVersion} from './migrations.js'
import type {PgStore} from './store.js'

/** Tables whose rows `db info` counts (the same as SQLite's). */
export type PgStoreInfo = {
  counts: Record<string, number>
  database: string
  schema: string
  server_version: string
  size_bytes: number
  version: number
}

/**
 * `db info` on PostgreSQL: the server's version, the database and schema the store is in,
 * its schema version, the row counts of `counted`, and the size of its tables (indexes and
 * TOAST included; the database may hold other schemas).
 */
export async function pgStoreInfo(store: PgStore, counted: readonly string[]): Promise<PgStoreInfo> {
  const pg = store.pg
  const version = await pgSchemaVersion(pg)
  const [about] = await pg.query<{database: string; schema: string; server_version: string; size_bytes: number}>(
    `SELECT current_database() AS database, current_schema() AS schema, current_setting('server_version') AS server_version,
       coalesce((SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')), 0)::bigint AS size_bytes`,
  )
  const counts: Record<string, number> = {}
  if (version > 0) {
    const [row] = await pg.query<Record<string, number>>(`SELECT ${counted.map((t) => `(SELECT count(*) FROM ${t}) AS ${t}`).join(', ')}`)
    for (const t of counted) counts[t] = row[t]
  }
  return {...about, counts, version}
}

export type PgCheck = {foreign_key_violations: number; integrity: string; ok: boolean; schema_version: number}

/** The tables whose product_id refers to products without a foreign key (schema.ts PG_V8_SQL). */
const UNCONSTRAINED_PRODUCT_IDS = ['charges', 'subscriptions'] as const

/**
 * `db check` on PostgreSQL. The server keeps its pages and constraints sound itself, so
 * what is checked is what a bulk load or a copy could leave behind (constraints can be
 * skipped by COPY with triggers off, or added NOT VALID):
 * - every foreign key holds (each checked with an anti-join, whatever the constraint says), and
 *   so does every product id of a charge or subscription (no constraint keeps those: schema.ts PG_V8_SQL);
 * - no constraint is left unvalidated, no index invalid (a failed CREATE INDEX CONCURRENTLY);
 * - each identity column's sequence is past the largest id (else the next insert fails);
 * - the pricectl mark, the data-version row, and the schema version is this pricectl's.
 */
export async function checkPgStore(store: PgStore): Promise<PgCheck> {
  const pg = store.pg
  const version = await pgSchemaVersion(pg)
  const problems: string[] = []
  let violations = 0
  const fks = await pg.query<{child: string; child_cols: string[]; name: string; parent: string; parent_cols: string[]}>(
    `SELECT con.conname AS name, ch.relname AS child, pa.relname AS parent,
       array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i) AS child_cols,
       array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i) AS parent_cols
     FROM pg_constraint con JOIN pg_class ch ON ch.oid = con.conrelid JOIN pg_class pa ON pa.oid = con.confrelid JOIN pg_namespace n ON n.oid = ch.relnamespace
     WHERE con.contype = 'f' AND n.nspname = current_schema() ORDER BY con.conname`,
  )
  // References the schema keeps without a constraint (schema version 8: an import's rows skip the per-row check).
  fks.push(...UNCONSTRAINED_PRODUCT_IDS.map((child) => ({child, child_cols: ['product_id'], name: `${child}.product_id -> products.id`, parent: 'products', parent_cols: ['id']})))
  const q = (name: string) => `"${name.replaceAll('"', '""')}"`
  for (const fk of fks) {
    const notNull = fk.child_cols.map((c) => `c.${q(c)} IS NOT NULL`).join(' AND ')
    const match = fk.child_cols.map((c, i) => `p.${q(fk.parent_cols[i])} = c.${q(c)}`).join(' AND ')
    const [{n}] = await pg.query<{n: number}>(`SELECT count(*) AS n FROM ${q(fk.child)} c WHERE ${notNull} AND NOT EXISTS (SELECT 1 FROM ${q(fk.parent)} p WHERE ${match})`)
    if (n > 0) {
      violations += n
      problems.push(`${n} row(s) of ${fk.child} break ${fk.name}`)
    }
  }
  for (const c of await pg.query<{name: string; tbl: string}>(
    `SELECT con.conname AS name, cl.relname AS tbl FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
     WHERE n.nspname = current_schema() AND NOT con.convalidated ORDER BY 1`,
  )) {
    problems.push(`constraint ${c.name} of ${c.tbl} is not validated`)
  }
  for (const i of await pg.query<{name: string}>(
    `SELECT ic.relname AS name FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_namespace n ON n.oid = ic.relnamespace
     WHERE n.nspname = current_schema() AND NOT x.indisvalid ORDER BY 1`,
  )) {
    problems.push(`index ${i.name} is invalid (REINDEX it)`)
  }
  for (const s of await pg.query<{col: string; seq: string; tbl: string}>(
    `SELECT c.relname AS tbl, a.attname AS col, pg_get_serial_sequence(quote_ident(c.relname), a.attname) AS seq
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND a.attidentity <> '' AND c.relkind = 'r' ORDER BY 1`,
  )) {
    const [{behind}] = await pg.query<{behind: boolean}>(
      `SELECT coalesce((SELECT max(${q(s.col)}) FROM ${q(s.tbl)}) > (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM ${s.seq}), false) AS behind`,
    )
    if (behind) problems.push(`the id sequence of ${s.tbl} is behind its largest ${s.col} (run: SELECT setval('${s.seq}', (SELECT max(${s.col}) FROM ${s.tbl})))`)
  }
  const [meta] = await pg.query<{mark: null | string; versions: number}>(
    `SELECT (SELECT value FROM pricectl_meta WHERE key = 'store') AS mark, (SELECT count(*) FROM pricectl_data_version WHERE id = 1) AS versions`,
  )
  if (meta.mark !== 'pricectl') problems.push('the pricectl mark is missing from pricectl_meta')
  if (meta.versions !== 1) problems.push('the data-version row is missing from pricectl_data_version')
  const integrity = problems.length === 0 ? 'ok' : problems.join('; ')
  return {foreign_key_violations: violations, integrity, ok: problems.length === 0 && version === SCHEMA_VERSION, schema_version: version}
}
