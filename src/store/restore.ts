import {chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, statSync} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {InvalidInputError, OperationalError} from '../errors.js'
import {openSqliteStore as openStore, type SqliteStore as Store} from './db.js'
import {identifyStore} from './identify.js'
import {checkStore} from './maintenance.js'
import {SCHEMA_VERSION} from './migrations.js'
import {checkOutput, removeStaleTemps, removeTemp, tempPathFor} from './output-file.js'

/**
 * `db restore FILE` (docs/hardening.md, "Restore"): the backup is copied beside the store,
 * migrated and checked there, then renamed over it, so a failure leaves the store as it was.
 * The store's -wal must be gone first (replayed onto the restored file it would corrupt it);
 * when it is still there after closing, another process has the store open: refused.
 */

export type RestorePlan = {
  /** The backup, resolved. */
  backup: string
  /** Schema version of the backup (read from its header). */
  backupVersion: number
  /** What the current store holds beyond a new store's seed; empty when there is none. */
  held: {rows: number; table: string}[]
  /** The store file that will be replaced (symlinks resolved). */
  target: string
}

export type RestoreResult = {
  backup: string
  backup_schema_version: number
  foreign_key_violations: number
  integrity: string
  path: string
  /** The store had data that was replaced. */
  replaced: boolean
  schema_version: number
}

/** The schema version in an SQLite file's header. */
export function userVersion(path: string): number {
  const fd = openSync(path, 'r')
  try {
    const header = Buffer.alloc(100)
    readSync(fd, header, 0, 100, 0)
    return header.readUInt32BE(60)
  } finally {
    closeSync(fd)
  }
}

function size(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** Which of the store's files `backup` is (by real path or inode), if any. */
function checkSame(backup: string, storePath: string): string | undefined {
  try {
    checkOutput(backup, {force: true, label: 'db restore', store: storePath})
    return undefined
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error
    const m = / is (the store(?:'s -\w+ file)?);/.exec(error.message)
    return m?.[1]
  }
}

/** Vet FILE and the store before anything is written or asked. */
export async function planRestore(file: string, storePath: string): Promise<RestorePlan> {
  const backup = resolve(file)
  let kind: ReturnType<typeof identifyStore>['kind']
  try {
    kind = identifyStore(backup).kind
  } catch (error) {
    // identify.ts speaks of --db; here the file is the backup.
    if (error instanceof OperationalError) {
      throw new OperationalError(error.message.replace(/; it was left untouched: .*$/, '; the store was left untouched: give a file "pricectl db backup FILE" wrote'))
    }
    throw error
  }
  if (kind === 'missing') throw new InvalidInputError(`db restore: ${backup} does not exist (give the file "pricectl db backup FILE" wrote)`)
  if (kind === 'empty') throw new OperationalError(`${backup} is not a pricectl store (it is empty); the store was left untouched: give the file "pricectl db backup FILE" wrote`)
  const backupVersion = userVersion(backup)
  if (backupVersion > SCHEMA_VERSION) {
    throw new OperationalError(`${backup} has schema version ${backupVersion}, newer than this pricectl understands (${SCHEMA_VERSION}): upgrade pricectl, then restore it; the store was left untouched`)
  }
  if (size(`${backup}-wal`) > 0) {
    throw new OperationalError(
      `${backup} has a -wal file beside it holding changes (a copy of a store in use?): restore a file made by "pricectl db backup", or fold them in first with "pricectl db check --db ${backup}"`,
    )
  }
  const same = checkSame(backup, storePath)
  if (same) throw new InvalidInputError(`db restore: ${backup} is ${same}; give a backup file, or pass --db with the store to replace`)
  mkdirSync(dirname(storePath), {mode: 0o700, recursive: true})
  const {path: target} = checkOutput(storePath, {force: true, inputs: [{path: backup, what: 'the backup to restore'}], label: 'db restore', stream: false})
  // Refuses a target that is not a pricectl store (never overwritten).
  const targetKind = identifyStore(target).kind
  let held: RestorePlan['held'] = []
  if (targetKind === 'pricectl' || targetKind === 'unmarked') {
    const store = openStore(target, {migrate: false})
    try {
      held = await store.catalog.storeContents()
    } finally {
      await store.close()
    }
  }
  return {backup, backupVersion, held, target}
}

/** Copy, migrate, check, swap. */
export async function restoreStore(plan: RestorePlan): Promise<RestoreResult> {
  const {backup, target} = plan
  removeStaleTemps(target)
  const tmp = tempPathFor(target)
  let checked: ReturnType<typeof checkStore>
  try {
    copyFileSync(backup, tmp)
    chmodSync(tmp, 0o600)
    // openStore marks an unmarked store, switches to WAL and migrates an older one.
    const copy = openStore(tmp)
    try {
      checked = checkStore(copy.db)
    } finally {
      await copy.close()
    }
    if (!checked.ok) {
      throw new OperationalError(
        `${backup} is damaged: integrity ${checked.integrity}, ${checked.foreign_key_violations} foreign key violations, schema version ${checked.schema_version}; the store was left untouched: restore another backup`,
      )
    }
    const fd = openSync(tmp, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    if (existsSync(tmp + '-wal') || existsSync(tmp + '-shm')) throw new OperationalError(`could not close the restored copy ${tmp} cleanly; the store was left untouched`)
    await releaseTarget(target)
    renameSync(tmp, target)
  } catch (error) {
    removeTemp(tmp)
    if (error instanceof OperationalError || error instanceof InvalidInputError) throw error
    throw new OperationalError(`restore of ${backup} failed: ${(error as Error).message}; the store was left untouched`)
  }
  return {
    backup,
    backup_schema_version: plan.backupVersion,
    foreign_key_violations: checked.foreign_key_violations,
    integrity: checked.integrity,
    path: target,
    replaced: plan.held.length > 0,
    schema_version: checked.schema_version,
  }
}

/**
 * Fold the store's -wal into it and close it: SQLite removes -wal and -shm when the last
 * connection closes. Still there afterwards: another process holds the store open.
 */
async function releaseTarget(target: string): Promise<void> {
  const kind = identifyStore(target).kind
  if (kind === 'pricectl' || kind === 'unmarked') {
    let store: Store | undefined
    try {
      store = openStore(target, {migrate: false})
      store.db.pragma('wal_checkpoint(TRUNCATE)')
    } finally {
      await store?.close()
    }
  }
  if (existsSync(`${target}-wal`) || existsSync(`${target}-shm`)) {
    throw new OperationalError(
      `the store ${target} is in use by another process (its -wal/-shm files stay open): stop other pricectl processes (serve, imports) and run "pricectl db restore" again; the store was left untouched`,
    )
  }
}
