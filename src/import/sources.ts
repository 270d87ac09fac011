import {closeSync, openSync, readdirSync, readSync, statSync} from 'node:fs'
import {basename, join, resolve} from 'node:path'

import {InvalidInputError} from '../errors.js'
import {CsvReader} from './csv-reader.js'
import {looksLikeRejects} from './rejects.js'

/**
 * The files an import reads, from its arguments (docs/revenue.md, "Several files at once"):
 * a file as named; a folder gives every `*.csv` directly in it (not in subfolders, not
 * hidden), sorted by name (code point order, so `2026-01.csv` before `2026-02.csv`). A
 * file named `*.rejects.csv` that starts with `line,reason,` (a rejects CSV an import wrote)
 * is skipped, named or in a folder, and so is the import's own rejects path inside a
 * folder. The same file reached twice is read once, where it first appears.
 */

export type Source = {
  /** As named, or the folder joined with the file's name. */
  path: string
  size: number
}

function cannotRead(path: string, error: unknown): InvalidInputError {
  const code = (error as NodeJS.ErrnoException).code
  return new InvalidInputError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
}

function isOwnRejects(path: string): boolean {
  return basename(path).toLowerCase().endsWith('.rejects.csv') && looksLikeRejects(path)
}

/** Where a folder import writes its rejects by default: inside it, skipped by the next run. */
export function folderRejectsPath(folder: string, kind: string): string {
  return join(folder, `${kind}.rejects.csv`)
}

export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Every file the arguments name, in order. Exit 2 naming the path for one that cannot be
 * read, and when nothing is left to import. `skip` is the rejects path (never read).
 */
export function importSources(paths: readonly string[], skip?: string): Source[] {
  if (paths.length === 0) throw new InvalidInputError('expected the path of a CSV export, or of a folder of them')
  const out: Source[] = []
  const seen = new Set<string>()
  const skipped: string[] = []
  const skipAt = skip === undefined ? undefined : resolve(skip)
  const add = (path: string, size: number, dev: number, ino: number) => {
    const key = `${dev}:${ino}`
    if (seen.has(key)) return
    seen.add(key)
    out.push({path, size})
  }
  for (const path of paths) {
    if (typeof path !== 'string' || path === '') throw new InvalidInputError(`expected the path of a CSV export, or of a folder of them, got ${JSON.stringify(path)}`)
    let s
    try {
      s = statSync(path)
    } catch (error) {
      throw cannotRead(path, error)
    }
    if (s.isDirectory()) {
      let names: string[]
      try {
        names = readdirSync(path)
      } catch (error) {
        throw cannotRead(path, error)
      }
      const before = out.length
      for (const name of names.filter((n) => !n.startsWith('.') && n.toLowerCase().endsWith('.csv')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        const file = join(path, name)
        if (skipAt !== undefined && resolve(file) === skipAt) continue
        let f
        try {
          f = statSync(file)
        } catch (error) {
          throw cannotRead(file, error)
        }
        if (!f.isFile()) continue
        if (isOwnRejects(file)) {
          skipped.push(file)
          continue
        }
        add(file, f.size, f.dev, f.ino)
      }
      if (out.length === before && !names.some((n) => n.toLowerCase().endsWith('.csv'))) {
        throw new InvalidInputError(`${path} is a folder without any *.csv file: pass the folder of the exports, or the files themselves`)
      }
      continue
    }
    if (!s.isFile()) throw new InvalidInputError(`${path} is not a file`)
    if (isOwnRejects(path)) {
      skipped.push(path)
      continue
    }
    add(path, s.size, s.dev, s.ino)
  }
  if (out.length === 0) {
    throw new InvalidInputError(`nothing to import: ${skipped.length > 0 ? `${skipped.join(', ')} ${skipped.length === 1 ? 'is a rejects CSV' : 'are rejects CSVs'} of an earlier import (line, reason, source_file, then the row), not an export` : 'no file given'}; pass the exports themselves`)
  }
  return out
}

/**
 * The header record of a file, read as the import worker reads it (CsvReader), so a file
 * that cannot be read or mapped is refused before anything is written. Undefined: no record.
 */
export function readHeader(path: string): string[] | undefined {
  let header: string[] | undefined
  const reader = new CsvReader({
    record(cells) {
      header ??= cells
    },
    unreadable() {},
  })
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    throw cannotRead(path, error)
  }
  try {
    const buf = Buffer.allocUnsafe(64 * 1024)
    for (;;) {
      let n: number
      try {
        n = readSync(fd, buf, 0, buf.length, null)
      } catch (error) {
        throw cannotRead(path, error)
      }
      if (n === 0) break
      reader.write(buf.subarray(0, n))
      if (header !== undefined) return header
    }
    reader.end()
    return header
  } finally {
    closeSync(fd)
  }
}
