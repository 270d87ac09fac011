import {statfsSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, resolve, sep} from 'node:path'

/**
 * "database or disk is full" (SQLITE_FULL) or ENOSPC does not say which disk: the store's,
 * or the temp folder's, where SQLite writes temporary data (large sorts, indexes, VACUUM) and
 * imports write their stage files. SQLite removes its temp files when the statement fails, so
 * the temp folder may have room again by the time the error is reported: the store's disk is
 * the one that can be measured. These name the folder that filled up when that can be told.
 */

/** The store the process opened last (a SQLite file's path, or "postgres" for a PostgreSQL store): openStore notes it. */
let openedStore: {kind: 'postgres'} | {kind: 'sqlite'; path: string} | undefined

export function noteOpenedStore(store: {kind: 'postgres'} | {kind: 'sqlite'; path: string}): void {
  openedStore = store
}

/** A store folder with less free space than this is the one that is full (a statement's writes are far smaller). */
export const LOW_SPACE_BYTES = 64 * 1024 * 1024

/** What the hint reads of the file systems (a test gives its own). */
export type DiskProbe = {
  /** Bytes free to this process on the file system of `path`. */
  free: (path: string) => number
  /** The device of `path` (same device: same file system). */
  device: (path: string) => number
}

const realProbe: DiskProbe = {
  device: (path) => statSync(path).dev,
  free: (path) => {
    const s = statfsSync(path)
    return Number(s.bavail) * Number(s.bsize)
  },
}

/** The temp folder SQLite and imports write to, as the hint names it. */
export function tempFolder(): string {
  return tmpdir()
}

function tempIsFull(temp: string): string {
  return `the temp folder TMPDIR (${temp}) is full; free space there or point TMPDIR elsewhere (SQLite and imports write temporary data there)`
}

/**
 * The hint for a full disk: the temp folder when the error is on a file in it, when the store
 * is PostgreSQL (SQLite writes only temp and stage files then), or when the store's disk is
 * another one with room; the store's folder when its disk is low; otherwise both.
 */
export function diskFullHint(options: {path?: string; probe?: DiskProbe; store?: typeof openedStore} = {}): string {
  const temp = tempFolder()
  const store = options.store ?? openedStore
  const probe = options.probe ?? realProbe
  if (options.path !== undefined && isInside(options.path, temp)) return tempIsFull(temp)
  if (store?.kind === 'postgres') return tempIsFull(temp)
  const both = `check free space in the store's folder and in the temp folder TMPDIR (${temp}), where SQLite and imports write temporary data; free space there or point TMPDIR elsewhere`
  if (store?.kind !== 'sqlite') return both
  const storeDir = dirname(resolve(store.path))
  try {
    if (probe.free(storeDir) < LOW_SPACE_BYTES) return `the store's folder (${storeDir}) is full; free space there`
    if (probe.device(storeDir) !== probe.device(temp)) return tempIsFull(temp)
  } catch {
    // A folder that cannot be measured: say both.
  }
  return both
}

function isInside(path: string, folder: string): boolean {
  const p = resolve(path)
  const f = resolve(folder)
  return p === f || p.startsWith(f.endsWith(sep) ? f : f + sep)
}
