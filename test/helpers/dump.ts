import Database from 'better-sqlite3'
import {createHash} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'

/**
 * Everything a store holds, to compare before and after a command that must not write:
 * every table's rows (in rowid / primary key order), the schema and the schema version.
 *
 *   const before = dump(db); await run(db, [...bad input...]); expect(dump(db)).toEqual(before)
 *
 * `fileDigest` adds the byte-for-byte check of the store file (after every connection
 * closed, so the WAL has been checkpointed into it).
 */
export type StoreDump = {schema: string[]; tables: Record<string, Record<string, unknown>[]>; user_version: number}

/** `only`: the tables to read (the others are left out of `tables`; the schema is whole). */
export function dump(path: string, only?: readonly string[]): StoreDump {
  // Read-write open (a read-only one cannot recover a WAL) but nothing is written.
  const db = new Database(path, {fileMustExist: true})
  try {
    const objects = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all() as {name: string; sql: null | string; type: string}[]
    const tables: StoreDump['tables'] = {}
    for (const o of objects) {
      if (o.type !== 'table' || (only && !only.includes(o.name))) continue
      const withoutRowid = /WITHOUT\s+ROWID/i.test(o.sql ?? '')
      const order = withoutRowid ? (db.pragma(`table_info(${JSON.stringify(o.name)})`) as {name: string; pk: number}[]).filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => JSON.stringify(c.name)).join(', ') : 'rowid'
      tables[o.name] = db.prepare(`SELECT * FROM ${JSON.stringify(o.name)} ORDER BY ${order}`).all() as Record<string, unknown>[]
    }
    return {schema: objects.map((o) => `${o.type} ${o.name}: ${o.sql ?? ''}`), tables, user_version: db.pragma('user_version', {simple: true}) as number}
  } finally {
    db.close()
  }
}

/** SHA-256 of the store file and its WAL (when one is left), for "byte-for-byte unchanged". */
export function fileDigest(path: string): string {
  const h = createHash('sha256')
  h.update(readFileSync(path))
  if (existsSync(path + '-wal')) h.update(readFileSync(path + '-wal'))
  return h.digest('hex')
}

/** Row counts per table: a short view for assertions like "one product was added". */
export function counts(path: string): Record<string, number> {
  return Object.fromEntries(Object.entries(dump(path).tables).map(([t, rows]) => [t, rows.length]))
}
