import {chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'

import {InvalidInputError, OperationalError} from '../errors.js'
import {isPostgresUrl, openStore, postgresOf, redactUrl, type Store} from './db.js'
import {identifyStore} from './identify.js'
import {backupStore} from './maintenance.js'
import {SCHEMA_VERSION} from './migrations.js'
import {backupFailed, checkOutput, placeOutput, removeStaleTemps, removeTemp, tempPathFor} from './output-file.js'
import type {StorePort} from './port.js'
import type {TableShape} from './port/tables.js'
import {userVersion} from './restore.js'

/**
 * `db copy SRC DEST` (docs/postgres.md): a whole store moved to another store, through the
 * tables part of the port, so any adapter copies to any other (SQLite and PostgreSQL, either
 * way, SQLite to SQLite too). The source is read on one snapshot, a chunk of rows at a
 * time; the destination is replaced in one transaction (a failure leaves it as it was);
 * ids, amounts and every other value are copied as stored. Afterwards the rows of every
 * table are counted on both sides.
 */

/** Rows per chunk: enough to amortize a round trip, few enough that a chunk is small. */
export const COPY_CHUNK = 5_000

export type CopiedTable = {
  /** Rows the destination holds after the copy. */
  dest_rows: number
  /** Rows the source held (on the snapshot that was copied). */
  source_rows: number
  table: string
}

export type CopyResult = {
  /** Every table matched. */
  ok: boolean
  rows: number
  tables: CopiedTable[]
}

/** What DEST holds that a copy would replace: its contents beyond a new store's seed, and its change history. */
export async function heldBy(store: StorePort): Promise<{rows: number; table: string}[]> {
  const held = await store.catalog.storeContents()
  const changes = (await store.tables.counts()).changes ?? 0
  return changes > 0 ? [...held, {rows: changes, table: 'changes'}] : held
}

function shapesMatch(source: TableShape[], dest: TableShape[], names: {dest: string; source: string}): void {
  const theirs = new Map(dest.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]))
  const problems: string[] = []
  for (const t of source) {
    const cols = theirs.get(t.name)
    if (!cols) {
      problems.push(`table ${t.name} is missing`)
      continue
    }
    const missing = t.columns.filter((c) => !cols.has(c.name)).map((c) => c.name)
    if (missing.length > 0) problems.push(`table ${t.name} lacks ${missing.join(', ')}`)
  }
  const ours = new Set(source.map((t) => t.name))
  const extra = dest.filter((t) => !ours.has(t.name)).map((t) => t.name)
  if (extra.length > 0) problems.push(`tables ${extra.join(', ')} are not in ${names.source}`)
  if (problems.length > 0) {
    throw new OperationalError(
      `${names.source} and ${names.dest} do not have the same schema (in ${names.dest}: ${problems.join('; ')}): bring both to this pricectl's schema with "pricectl db migrate --db STORE" (or upgrade pricectl), then copy again; nothing was written`,
    )
  }
}

/**
 * Copy every table of `source` into `dest`, replacing what `dest` held. The caller checked
 * (and confirmed) that replacing it is wanted. `progress` hears of each table as it is done.
 */
export async function copyStore(
  source: StorePort,
  dest: StorePort,
  options: {chunk?: number; names?: {dest: string; source: string}; progress?: (table: string, rows: number) => void} = {},
): Promise<CopyResult> {
  if (source === dest) throw new InvalidInputError('db copy: SRC and DEST are the same store')
  const chunk = options.chunk ?? COPY_CHUNK
  const shapes = await source.tables.list()
  shapesMatch(shapes, await dest.tables.list(), options.names ?? {dest: dest.path, source: source.path})
  const sourceRows: Record<string, number> = {}
  const copied: Record<string, number> = {}
  await source.tables.snapshot(async () => {
    Object.assign(sourceRows, await source.tables.counts())
    await dest.tables.replace(async (write) => {
      for (const t of shapes) {
        const columns = t.columns.map((c) => c.name)
        let n = 0
        for await (const rows of source.tables.read(t.name, columns, chunk)) {
          await write(t.name, columns, rows)
          n += rows.length
        }
        copied[t.name] = n
        options.progress?.(t.name, n)
      }
    })
  })
  const destRows = await dest.tables.counts()
  const tables = shapes
    .map((t) => ({dest_rows: destRows[t.name] ?? 0, source_rows: sourceRows[t.name] ?? 0, table: t.name}))
    .sort((a, b) => a.table.localeCompare(b.table))
  const ok = tables.every((t) => t.dest_rows === t.source_rows && copied[t.table] === t.source_rows)
  return {ok, rows: tables.reduce((n, t) => n + t.dest_rows, 0), tables}
}

/** How a store is named in messages: a file's absolute path, a URL without its password. */
export function shownStore(spec: string): string {
  return isPostgresUrl(spec) ? redactUrl(spec) : resolve(spec)
}

/** Open the store to copy from: it must exist (a path is never created for it). */
export function openCopySource(spec: string, label = 'SRC'): StorePort {
  if (!isPostgresUrl(spec)) {
    const path = resolve(spec)
    const kind = identifyStore(path).kind
    if (kind === 'missing') throw new InvalidInputError(`db copy: ${label} ${path} does not exist (give a pricectl store: a file, or a postgres:// URL)`)
    if (kind === 'empty') throw new OperationalError(`${path} is not a pricectl store (it is empty): give a store to copy from`)
  }
  return openStore(spec)
}

export type CopyDestination = {
  /** Close the store; when it was created by this copy, put it in place (ok) or remove it. */
  finish(ok: boolean): Promise<void>
  store: StorePort
}

/**
 * Open the store to copy into. A SQLite file that does not exist yet is made beside it as
 * `DEST.PID.tmp` and renamed into place when the copy succeeded, so a failed copy leaves
 * no half-made store. `source` is the other end, which DEST may not be.
 */
export function openCopyDestination(spec: string, source: string, label = 'DEST'): CopyDestination {
  if (isPostgresUrl(spec)) {
    if (isPostgresUrl(source) && sameDatabase(spec, source)) throw new InvalidInputError(`db copy: ${label} is the same database as the source; give another one`)
    const store = openStore(spec)
    return {finish: async () => await store.close(), store}
  }
  const {exists, path} = checkOutput(spec, {force: true, label: `db copy ${label}`, store: isPostgresUrl(source) ? undefined : resolve(source), stream: false})
  if (exists) {
    const store = openStore(path)
    return {finish: async () => await store.close(), store}
  }
  removeStaleTemps(path)
  const tmp = tempPathFor(path)
  const store = openStore(tmp)
  return {
    async finish(ok) {
      await store.close()
      if (!ok) return removeTemp(tmp)
      try {
        renameSync(tmp, path)
      } catch (error) {
        removeTemp(tmp)
        throw new OperationalError(`cannot put the copy in place at ${path}: ${(error as Error).message}`)
      } finally {
        for (const suffix of ['-wal', '-shm']) rmSync(tmp + suffix, {force: true})
      }
    },
    store,
  }
}

function sameDatabase(a: string, b: string): boolean {
  const key = (spec: string) => {
    try {
      const u = new URL(spec)
      return `${u.hostname || 'localhost'}:${u.port || '5432'}/${decodeURIComponent(u.pathname.slice(1))}`
    } catch {
      return spec
    }
  }
  return key(a) === key(b)
}

/**
 * `db backup FILE`, whichever adapter holds the store: a SQLite file is copied page by page
 * (./maintenance.ts backupStore); a store that is not a file (PostgreSQL) goes into a new SQLite store file
 * through `db copy` (backupToFile).
 */
export async function backupAnyStore(store: Store, file: string, overwrite: boolean): Promise<{bytes: number; path: string}> {
  return postgresOf(store) ? await backupToFile(store, file, overwrite) : backupStore(store, file, overwrite)
}

/**
 * `db backup FILE` of a store that is not a file (PostgreSQL): a portable pricectl SQLite
 * store written through copyStore, on one snapshot of the store (other processes go on).
 * It is made in `FILE.PID.tmp` and renamed over FILE when complete and its counts match;
 * owner-only from its first byte. `db restore FILE` (or `db copy FILE URL`) loads it back.
 */
export async function backupToFile(store: StorePort, file: string, overwrite: boolean): Promise<{bytes: number; path: string; tables: CopiedTable[]}> {
  const shown = resolve(file)
  const {path: dest} = checkOutput(file, {force: overwrite, label: 'backup'})
  removeStaleTemps(dest)
  const tmp = tempPathFor(dest)
  let result: CopyResult
  let bytes: number
  try {
    const copy = openStore(tmp)
    try {
      result = await copyStore(store, copy, {names: {dest: shown, source: store.path}})
    } finally {
      await copy.close()
    }
    if (!result.ok) {
      const bad = result.tables.filter((t) => t.source_rows !== t.dest_rows).map((t) => `${t.table} ${t.source_rows} -> ${t.dest_rows}`)
      throw new OperationalError(`row counts differ: ${bad.join(', ')}`)
    }
    chmodSync(tmp, 0o600)
    bytes = placeOutput(tmp, dest)
  } catch (error) {
    removeTemp(tmp)
    throw backupFailed(error, shown)
  }
  return {bytes, path: shown, tables: result.tables}
}

export type FileRestorePlan = {backup: string; backupVersion: number; held: {rows: number; table: string}[]}

/** Vet a backup file for `db restore` into a store that is not a file (PostgreSQL), before anything is written or asked. */
export async function planRestoreFromFile(file: string, store: StorePort): Promise<FileRestorePlan> {
  const backup = resolve(file)
  const kind = identifyStore(backup).kind
  if (kind === 'missing') throw new InvalidInputError(`db restore: ${backup} does not exist (give the file "pricectl db backup FILE" wrote)`)
  if (kind === 'empty') throw new OperationalError(`${backup} is not a pricectl store (it is empty); the store was left untouched: give the file "pricectl db backup FILE" wrote`)
  const backupVersion = userVersion(backup)
  if (backupVersion > SCHEMA_VERSION) {
    throw new OperationalError(`${backup} has schema version ${backupVersion}, newer than this pricectl understands (${SCHEMA_VERSION}): upgrade pricectl, then restore it; the store was left untouched`)
  }
  let wal = 0
  try {
    wal = statSync(`${backup}-wal`).size
  } catch {}
  if (wal > 0) {
    throw new OperationalError(
      `${backup} has a -wal file beside it holding changes (a copy of a store in use?): restore a file made by "pricectl db backup", or fold them in first with "pricectl db check --db ${backup}"`,
    )
  }
  return {backup, backupVersion, held: await heldBy(store)}
}

/**
 * `db restore FILE` into a store that is not a file: FILE is copied to a temp folder (it is
 * never changed), migrated there when older, and copied into the store, replacing everything
 * in one transaction (a failure leaves the store as it was).
 */
export async function restoreFromFile(plan: FileRestorePlan, store: StorePort): Promise<CopyResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-restore-'))
  try {
    const tmp = join(dir, 'backup.db')
    copyFileSync(plan.backup, tmp)
    chmodSync(tmp, 0o600)
    const source = openStore(tmp)
    let result: CopyResult
    try {
      result = await copyStore(source, store, {names: {dest: store.path, source: plan.backup}})
    } finally {
      await source.close()
    }
    if (!result.ok) {
      const bad = result.tables.filter((t) => t.source_rows !== t.dest_rows).map((t) => `${t.table} ${t.source_rows} -> ${t.dest_rows}`)
      throw new OperationalError(`restored ${plan.backup} into ${store.path}, but row counts differ: ${bad.join(', ')}: restore it again`)
    }
    return result
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
}
