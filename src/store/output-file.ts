import {closeSync, fchmodSync, fsyncSync, openSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeSync} from 'node:fs'
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
 *   complete, so FILE is never half-written and a failure leaves the old FILE as it was.
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
  try {
    const s = statSync(target.real)
    if (s.isDirectory()) throw new InvalidInputError(`${rules.label}: ${resolve(path)} is a folder; give the path of a file`)
    exists = true
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
  }
  if (exists && !rules.force && !rules.replaceable?.(target.real)) {
    throw new InvalidInputError(`${resolve(path)} exists: ${rules.existsHint ?? 'pass --force to overwrite it'}`)
  }
  return {exists, path: target.real}
}

/** The temporary file an output is written to before it is renamed into place. */
export function tempPathFor(path: string): string {
  return `${path}.${process.pid}.tmp`
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

function alive(pid: number): boolean {
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
  readonly tmp: string

  /** `mode` is exact (0600 for files with customer data), else the default 0666 less the umask. */
  constructor(
    readonly path: string,
    mode?: number,
  ) {
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
    removeTemp(this.tmp)
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
