import {chmodSync, closeSync, existsSync, openSync, rmSync, statSync} from 'node:fs'
import {resolve} from 'node:path'

import {InvalidInputError, OperationalError} from '../errors.js'
import {type DB, schemaVersion} from './db.js'
import {SCHEMA_VERSION} from './migrations.js'

export type StoreInfo = {
  counts: Record<string, number>
  journal_mode: string
  latest_schema_version: number
  path: string
  schema_version: number
  size_bytes: number
}

const COUNTED = ['products', 'coupons', 'users', 'locks', 'subscriptions', 'charges', 'experiments', 'fx_rates'] as const

export function storeInfo(db: DB, path: string): StoreInfo {
  const version = schemaVersion(db)
  const counts: Record<string, number> = {}
  if (version > 0) {
    for (const t of COUNTED) counts[t] = (db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as {n: number}).n
  }
  return {
    counts,
    journal_mode: String(db.pragma('journal_mode', {simple: true})),
    latest_schema_version: SCHEMA_VERSION,
    path,
    schema_version: version,
    size_bytes: existsSync(path) ? statSync(path).size : 0,
  }
}

export type CheckResult = {foreign_key_violations: number; integrity: string; ok: boolean; schema_version: number}

/** SQLite's own integrity check plus foreign keys; what `db check` and the crash tests rely on. */
export function checkStore(db: DB): CheckResult {
  const integrity = (db.pragma('integrity_check') as {integrity_check: string}[]).map((r) => r.integrity_check).join('; ')
  const fk = db.pragma('foreign_key_check') as unknown[]
  const version = schemaVersion(db)
  return {
    foreign_key_violations: fk.length,
    integrity,
    ok: integrity === 'ok' && fk.length === 0 && version === SCHEMA_VERSION,
    schema_version: version,
  }
}

/**
 * Consistent copy through SQLite's online backup API, safe while another process
 * writes; the copy is owner-only like the store from its first byte.
 *
 * All pages are copied in one step: the step reads one snapshot (WAL: writers go on),
 * whereas the default 100 pages per step restarts from scratch whenever another process
 * commits in between, so under a steady writer a big store was never copied.
 */
export async function backupStore(db: DB, file: string, overwrite: boolean): Promise<{bytes: number; path: string}> {
  const dest = resolve(file)
  const exists = existsSync(dest)
  if (exists && !overwrite) throw new InvalidInputError(`backup: ${dest} exists (pass --force to overwrite it)`)
  try {
    if (exists) chmodSync(dest, 0o600)
    else closeSync(openSync(dest, 'wx', 0o600))
    await db.backup(dest, {progress: () => 0x7fffffff})
  } catch (error) {
    if (!exists) rmSync(dest, {force: true})
    throw new OperationalError(`backup to ${dest} failed: ${(error as Error).message}`)
  }
  chmodSync(dest, 0o600)
  return {bytes: statSync(dest).size, path: dest}
}
