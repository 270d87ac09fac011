import {closeSync, fchmodSync, fsyncSync, openSync, readdirSync, readSync, realpathSync, renameSync, rmSync, statSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, dirname, join, resolve} from 'node:path'

import {InvalidInputError, OperationalError} from '../errors.js'

/**
 * Every file a command writes besides the store (`db backup FILE`, `products export FILE`,
 * the rejects CSV of imports) goes through here:
 * - the path may not be the store, its -wal, -shm or -journal file, or a file the same
 *   command reads (compared by real path, through symlinks, and by device and inode, so a
 *   hard link counts too): exit 2, nothing written;
 * - an existing file needs `--force` (the rejects CSV of an earlier import is the exception);
 * - the content goes to `FILE.PID.tmp` in the same folder and is renamed over FILE when
 *   complete, so FILE is never half-written and a failure leaves the old FILE as it was;
 * - a FIFO or a character device (`/dev/stdout`, `/dev/null`, a process substitution) is
 *   written into, never renamed over (that would replace /dev/null with a regular file), and
 *   needs no --force: there is nothing to overwrite. A block device or a socket is refused.
 */

export type OutputRules = {
  /** Overwrite an existing file. */
  force?: boolean
  /** Files the same command reads, with how the user named them ("the file to import"). */
  inputs?: {path: string | undefined; what: string}[]
  /** How the path was given, for messages: "--rejects", "FILE". */
  label: string
  /** What to tell the user about an existing file (default: pass --force). */
  existsHint?: string
  /** An existing file this accepts is replaced without --force. */
  replaceable?: (path: string) => boolean
  /** The store of the command. */
  store?: string
  /** False where the output must be a file (a store): a FIFO or character device is refused. */
  stream?: boolean
}

type Identity = {inode?: string; real: string}

/** Where `path` really is (symlinks resolved, as far as they exist) and, when it exists, which file it is. */
function identity(path: string): Identity {
  const abs = resolve(path)
  let real = abs
  try {
    real = realpathSync(abs)
  } catch {
    try {
      real = join(realpathSync(dirname(abs)), basename(abs))
    } catch {
      // The folder does not exist either: compare as given.
    }
  }
  let inode: string | undefined
  try {
    const s = statSync(abs)
    inode = `${s.dev}:${s.ino}`
  } catch {
    // Not there.
  }
  return {inode, real}
}

function same(a: Identity, b: Identity): boolean {
  return a.real === b.real || (a.inode !== undefined && a.inode === b.inode)
}

/** The store's files: SQLite names -wal, -shm and -journal after the path, and after the file a symlink points to. */
function storeFiles(store: string): {id: Identity; what: string}[] {
  const given = resolve(store)
  const real = identity(given).real
  const out: {id: Identity; what: string}[] = []
  for (const [suffix, what] of [['', 'the store'], ['-wal', "the store's -wal file"], ['-shm', "the store's -shm file"], ['-journal', "the store's -journal file"]]) {
    out.push({id: identity(given + suffix), what}, {id: identity(real + suffix), what})
  }
  return out
}

/**
 * Vet an output path before anything is written (exit 2 when it is refused). Returns the
 * file to write: the path itself, or the file a symlink there points to (the link stays).
 */
export function checkOutput(path: string, rules: OutputRules): {exists: boolean; path: string} {
  const target = identity(path)
  const clash = (what: string) => new InvalidInputError(`${rules.label}: ${resolve(path)} is ${what}; pass another path`)
  if (rules.store) {
    for (const f of storeFiles(rules.store)) if (same(target, f.id)) throw clash(f.what)
  }
  for (const input of rules.inputs ?? []) {
    if (input.path !== undefined && same(target, identity(input.path))) throw clash(input.what)
  }
  let folder
  try {
    folder = statSync(dirname(target.real))
  } catch {
    folder = undefined
  }
  if (!folder?.isDirectory()) throw new InvalidInputError(`${rules.label}: folder ${dirname(target.real)} does not exist (create it, or pass another path)`)
  let exists = false
  let stream = false
  try {
    const s = statSync(target.real)
    if (s.isDirectory()) throw new InvalidInputError(`${rules.label}: ${resolve(path)} is a folder; give the path of a file`)
    if (s.isBlockDevice() || s.isSocket()) throw new InvalidInputError(`${rules.label}: ${resolve(path)} is a ${s.isSocket() ? 'socket' : 'block device'}, not a file; give the path of a file`)
    stream = s.isFIFO() || s.isCharacterDevice()
    if (stream && rules.stream === false) throw new InvalidInputError(`${rules.label}: ${resolve(path)} is a ${s.isFIFO() ? 'FIFO' : 'device'}, not a file; give the path of a file`)
    exists = true
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
  }
  if (exists && !stream && !rules.force && !rules.replaceable?.(target.real)) {
    throw new InvalidInputError(`${resolve(path)} exists: ${rules.existsHint ?? 'pass --force to overwrite it'}`)
  }
  return {exists, path: target.real}
}

/** Whether `path` is a FIFO or a character device: written into, never replaced. */
export function isStream(path: string): boolean {
  try {
    const s = statSync(path)
    return s.isFIFO() || s.isCharacterDevice()
  } catch {
    return false
  }
}

/** The temporary file an output is written to before it is put in place (placeOutput): beside it, or in the temp folder for a FIFO or device. */
export function tempPathFor(path: string): string {
  return isStream(path) ? join(tmpdir(), `pricectl-${basename(path)}.${process.pid}.tmp`) : `${path}.${process.pid}.tmp`
}

/**
 * Put a complete temporary output in place: renamed over a file; copied into a FIFO or
 * character device and then removed. Returns its size in bytes.
 */
export function placeOutput(tmp: string, dest: string): number {
  const bytes = statSync(tmp).size
  if (!isStream(dest)) {
    renameSync(tmp, dest)
    return bytes
  }
  const from = openSync(tmp, 'r')
  const to = openSync(dest, 'w')
  try {
    const buffer = Buffer.allocUnsafe(1 << 16)
    for (let n; (n = readSync(from, buffer, 0, buffer.length, null)) > 0; ) {
      for (let at = 0; at < n; ) at += writeSync(to, buffer, at, n - at)
    }
  } finally {
    closeSync(from)
    closeSync(to)
  }
  rmSync(tmp, {force: true})
  return bytes
}

/** Every file a temporary output may leave (SQLite adds its journals to a backup's). */
export function removeTemp(tmp: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(tmp + suffix, {force: true})
}

/**
 * Remove what a killed pricectl left beside `path` (`path.PID.tmp` of a process that is gone):
 * a failure cleans up after itself, a SIGKILL cannot.
 */
export function removeStaleTemps(path: string): void {
  const base = basename(path)
  let names: string[]
  try {
    names = readdirSync(dirname(path))
  } catch {
    return
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`)) continue
    const m = /^\.(\d+)\.tmp(?:-journal|-wal|-shm)?$/.exec(name.slice(base.length))
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue
    rmSync(join(dirname(path), name), {force: true})
  }
}

/** Whether a process with this id runs (one of another user counts: EPERM). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** An output file written whole: into a temporary file beside it, renamed over it by commit(). */
export class OutputFile {
  private fd: number | undefined
  /** The file written: the temporary file, or the path itself for a FIFO or device. */
  readonly tmp: string
  private readonly direct: boolean

  /** `mode` is exact (0600 for files with customer data), else the default 0666 less the umask. */
  constructor(
    readonly path: string,
    mode?: number,
  ) {
    this.direct = isStream(path)
    if (this.direct) {
      // A FIFO or device: written into as it goes (a reader may be waiting on it).
      this.tmp = path
      try {
        this.fd = openSync(path, 'w')
      } catch (error) {
        throw new OperationalError(`cannot write ${path}: ${(error as Error).message}`)
      }
      return
    }
    removeStaleTemps(path)
    this.tmp = tempPathFor(path)
    try {
      this.fd = openSync(this.tmp, 'wx', mode ?? 0o666)
      if (mode !== undefined) fchmodSync(this.fd, mode)
    } catch (error) {
      this.abort()
      throw new OperationalError(`cannot write ${path}: ${(error as Error).message}`)
    }
  }

  write(data: string | Uint8Array): void {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(this.fd!, bytes, at, bytes.length - at)
    } catch (error) {
      this.abort()
      throw new OperationalError(`cannot write ${this.path}: ${(error as Error).message}`)
    }
  }

  /** Flush to disk and put the file in place. */
  commit(): void {
    if (this.direct) {
      closeSync(this.fd!)
      this.fd = undefined
      return
    }
    try {
      fsyncSync(this.fd!)
      closeSync(this.fd!)
      this.fd = undefined
      renameSync(this.tmp, this.path)
    } catch (error) {
      this.abort()
      throw new OperationalError(`cannot write ${this.path}: ${(error as Error).message}`)
    }
  }

  /** Drop the temporary file; the path keeps what it had. */
  abort(): void {
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd)
      } catch {
        // Already failing: the temporary file goes anyway.
      }
      this.fd = undefined
    }
    if (!this.direct) removeTemp(this.tmp)
  }
}

/** Check the path, then write `text` whole. */
export function writeOutputFile(path: string, text: string, rules: OutputRules, mode?: number): string {
  const {path: target} = checkOutput(path, rules)
  const out = new OutputFile(target, mode)
  out.write(text)
  out.commit()
  return target
}

/** Why writing a backup (a store file) failed, for both `db backup` paths: its temp file is already removed. */
export function backupFailed(error: unknown, shown: string): OperationalError {
  const e = error as {code?: string; message: string}
  const why = e.code === 'SQLITE_FULL' || /ENOSPC/.test(e.message) ? `the disk is full (${e.message})` : e.message
  return new OperationalError(`backup to ${shown} failed: ${why}; nothing was written`)
}
