import Database from 'better-sqlite3'
import {accessSync, closeSync, constants, existsSync, openSync, readSync, statSync} from 'node:fs'
import {dirname} from 'node:path'

import {OperationalError} from '../errors.js'

/**
 * What a path given as the store holds, decided from the file's bytes alone (never through
 * a read-write SQLite connection, which would switch a foreign database to WAL, add -wal
 * and -shm files beside it, or migrate it), and whether this process may write it.
 */

/** `PRAGMA application_id` of a pricectl store: "PCTL" in ASCII. */
export const APPLICATION_ID = 0x50_43_54_4c

/**
 * Tables every pricectl store has had since schema version 1: a store made before stores
 * were marked with APPLICATION_ID is recognised by them (and marked when opened).
 */
const STORE_TABLES = ['settings', 'products', 'coupons', 'users', 'fx_rates', 'locks', 'subscriptions', 'charges', 'events', 'experiments', 'arms', 'exposures']

const SQLITE_MAGIC = 'SQLite format 3\0'
/** The schema of a store lives in its first pages; the rest of the file is read only when needed. */
const PROBE_BYTES = 16 * 1024 * 1024
const MAX_PROBE_BYTES = 512 * 1024 * 1024

export type StoreFile =
  /** Nothing there yet. */
  | {kind: 'missing'}
  /** 0 bytes, or an SQLite database without a single table: becomes a store. */
  | {kind: 'empty'}
  /** Carries APPLICATION_ID. */
  | {kind: 'pricectl'}
  /** A store of a release before the mark: application_id 0, schema version >= 1, pricectl's tables. */
  | {kind: 'unmarked'}

function notAStore(path: string, why: string): OperationalError {
  return new OperationalError(`${path} is not a pricectl store (${why}); it was left untouched: pass --db with a pricectl store, or a new path to create one`)
}

function nonEmpty(path: string): boolean {
  try {
    return statSync(path).size > 0
  } catch {
    return false
  }
}

function readHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r')
  try {
    const buf = Buffer.alloc(bytes)
    const n = readSync(fd, buf, 0, bytes, 0)
    return buf.subarray(0, n)
  } finally {
    closeSync(fd)
  }
}

/**
 * How long identification waits for a file another process is writing in place (ms). An
 * unmarked store is read from its raw bytes with no lock, so while another process migrates
 * and marks it (a rollback journal: pages rewritten in the file itself) the bytes read can mix
 * two states and look damaged.
 */
const SETTLE_MS = 2000

/** Classify `path`; anything that is neither empty nor a pricectl store is refused (exit 1). */
export function identifyStore(path: string): StoreFile {
  const deadline = performance.now() + SETTLE_MS
  for (;;) {
    const seen: Seen = {}
    try {
      return identifyOnce(path, seen)
    } catch (error) {
      if (!beingWritten(path, seen) || performance.now() > deadline) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
    }
  }
}

/** What one reading saw: the header it read, and whether a journal was beside the file before it. */
export type Seen = {header?: Buffer; journal?: boolean}

/**
 * Whether an unmarked file whose read failed (`seen`) is being written: a journal was beside
 * it when the read began or is there now (a transaction in flight; one that began and ended
 * in between moved the header), or its header moved since (each commit changes it).
 */
export function beingWritten(path: string, seen: Seen): boolean {
  const {header} = seen
  if (header === undefined || header.length < 100 || header.readUInt32BE(68) !== 0) return false
  return seen.journal === true || !header.equals(headerOf(path) ?? Buffer.alloc(0)) || nonEmpty(`${path}-journal`)
}

/** The file's first 100 bytes (SQLite's header), undefined when it cannot be read. */
function headerOf(path: string): Buffer | undefined {
  try {
    return readHead(path, 100)
  } catch {
    return undefined
  }
}

/** identifyStore's one reading of the file; `seen` records what it saw. */
function identifyOnce(path: string, seen: Seen): StoreFile {
  let size: number
  try {
    const s = statSync(path)
    if (s.isDirectory()) throw notAStore(path, 'it is a folder')
    if (!s.isFile()) throw notAStore(path, 'it is not a regular file')
    size = s.size
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {kind: 'missing'}
    if (error instanceof OperationalError) throw error
    throw new OperationalError(`cannot read the store at ${path}: ${(error as Error).message}`)
  }
  // A pricectl store always has its header in the main file (the mark is written before WAL
  // is switched on), so a WAL beside an empty file belongs to something else.
  if (size === 0) {
    if (nonEmpty(`${path}-wal`)) throw notAStore(path, 'it is empty but has a -wal file of another program beside it')
    return {kind: 'empty'}
  }
  let header: Buffer
  // Before the read: a transaction that ends while the pages are read leaves no journal to see after.
  seen.journal = nonEmpty(`${path}-journal`)
  try {
    header = readHead(path, 100)
    seen.header = header
  } catch (error) {
    throw new OperationalError(`cannot read the store at ${path}: ${(error as Error).message}`)
  }
  if (header.length < 100 || header.subarray(0, 16).toString('latin1') !== SQLITE_MAGIC) throw notAStore(path, 'not an SQLite database')
  const applicationId = header.readUInt32BE(68)
  if (applicationId === APPLICATION_ID) return {kind: 'pricectl'}
  if (applicationId !== 0) throw notAStore(path, `an SQLite database of another application, application_id 0x${applicationId.toString(16).padStart(8, '0')}`)
  const userVersion = header.readUInt32BE(60)
  const tables = schemaTables(path, size, header)
  if (tables.length === 0 && userVersion === 0) {
    if (nonEmpty(`${path}-wal`)) throw notAStore(path, 'an SQLite database whose tables are still in its -wal file')
    return {kind: 'empty'}
  }
  const missing = STORE_TABLES.filter((t) => !tables.includes(t))
  if (userVersion >= 1 && missing.length === 0) return {kind: 'unmarked'}
  const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, ... (${tables.length} tables)` : '')
  throw notAStore(path, `an SQLite database of another application, with tables ${shown || 'none'} and user_version ${userVersion}`)
}

/**
 * The table names of the database in `path`, read from a copy of its pages in memory (a
 * read-only SQLite connection to the file itself would create -wal and -shm files beside a
 * WAL database). The first PROBE_BYTES hold the schema of any store pricectl created; the
 * whole file is read only when they do not.
 */
function schemaTables(path: string, size: number, header: Buffer): string[] {
  const raw = header.readUInt16BE(16)
  const pageSize = raw === 1 ? 65_536 : raw
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) throw notAStore(path, 'a damaged SQLite header')
  for (const limit of [PROBE_BYTES, MAX_PROBE_BYTES]) {
    const pages = Math.floor(Math.min(size, limit) / pageSize)
    const truncated = pages * pageSize < size
    let image: Buffer
    try {
      image = readHead(path, pages * pageSize)
    } catch (error) {
      throw new OperationalError(`cannot read the store at ${path}: ${(error as Error).message}`)
    }
    // An in-memory image cannot use WAL: read it as a rollback-journal database, only as
    // long as the part that was read.
    image[18] = 1
    image[19] = 1
    if (truncated) image.writeUInt32BE(pages, 28)
    let db: Database.Database | undefined
    try {
      db = new Database(image, {readonly: true})
      return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").all() as {name: string}[]).map((r) => r.name)
    } catch (error) {
      const code = (error as {code?: string}).code ?? ''
      if (truncated && code.startsWith('SQLITE_CORRUPT') && size <= MAX_PROBE_BYTES) continue
      throw notAStore(path, `an SQLite database SQLite cannot read (${code || (error as Error).message})`)
    } finally {
      db?.close()
    }
  }
  throw notAStore(path, `an SQLite database whose schema is not in its first ${PROBE_BYTES} bytes`)
}

/**
 * Why this process cannot write the store at `path` (undefined when it can). SQLite needs
 * the file and, for its -wal and -shm files, the folder (unless both already exist and are
 * writable). access(2) answers EROFS on a read-only file system even for root.
 */
export function whyReadOnly(path: string): string | undefined {
  const probe = (p: string): NodeJS.ErrnoException | undefined => {
    try {
      accessSync(p, constants.W_OK)
      return undefined
    } catch (error) {
      return error as NodeJS.ErrnoException
    }
  }
  const reason = (e: NodeJS.ErrnoException, what: string) => (e.code === 'EROFS' ? 'it is on a read-only file system' : `${what} is not writable by this user`)
  const file = probe(path)
  if (file) return reason(file, 'the file')
  const folder = probe(dirname(path))
  if (folder && !(existsSync(`${path}-wal`) && existsSync(`${path}-shm`) && !probe(`${path}-wal`) && !probe(`${path}-shm`))) {
    return reason(folder, `its folder ${dirname(path)} (where SQLite keeps the -wal and -shm files)`)
  }
  return undefined
}

/**
 * A read-only connection. SQLite cannot read a WAL database on read-only media without its
 * -shm file (it would have to create it); then, when no -wal holds changes, the file is
 * read into memory instead (its size in RAM, for this one command).
 */
export function openReadOnly(path: string): {db: Database.Database; inMemory: boolean} {
  let db: Database.Database | undefined
  try {
    db = new Database(path, {fileMustExist: true, readonly: true})
    db.prepare('SELECT count(*) FROM sqlite_master').get()
    return {db, inMemory: false}
  } catch (error) {
    db?.close()
    // CANTOPEN on read-only media; READONLY_DIRECTORY / READONLY_CANTINIT in a folder this
    // user may not write: either way the -shm file cannot be made.
    const code = String((error as {code?: string}).code)
    if (!code.startsWith('SQLITE_CANTOPEN') && !code.startsWith('SQLITE_READONLY')) throw error
  }
  if (nonEmpty(`${path}-wal`)) {
    throw new OperationalError(`cannot read the store at ${path}: it is read-only and its -wal file holds changes SQLite can only read with a -shm file it cannot create; open it once where it is writable`)
  }
  let image: Buffer
  try {
    image = readHead(path, statSync(path).size)
  } catch (error) {
    throw new OperationalError(`cannot read the store at ${path}: ${(error as Error).message}`)
  }
  image[18] = 1
  image[19] = 1
  return {db: new Database(image, {readonly: true}), inMemory: true}
}
