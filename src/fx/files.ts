import {readFileSync, statSync} from 'node:fs'
import {basename} from 'node:path'

import {InvalidInputError} from '../errors.js'

/** Largest data file an import reads into memory (the full ECB history is ~2 MB). */
export const MAX_IMPORT_BYTES = 256 * 1024 * 1024

/** Read an import FILE (or `-` for stdin) whole; unreadable files are input errors naming the path. */
export function readDataFile(path: string): {bytes: Uint8Array; name: string} {
  try {
    if (path === '-') return {bytes: readFileSync(0), name: 'stdin'}
    const st = statSync(path)
    if (st.isDirectory()) throw new InvalidInputError(`${path} is a directory, not a file`)
    if (st.size > MAX_IMPORT_BYTES) throw new InvalidInputError(`${path} is ${st.size} bytes; the limit is ${MAX_IMPORT_BYTES}`)
    return {bytes: readFileSync(path), name: basename(path)}
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    const e = error as NodeJS.ErrnoException
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.message
    throw new InvalidInputError(`cannot read ${path}: ${why}`)
  }
}

/** Text of a file: UTF-8 without a byte-order mark. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '')
}

/**
 * Collects row errors so one run reports every bad line (up to a limit) instead of the
 * first one only; `throwIfAny` raises a single InvalidInputError.
 */
export class RowErrors {
  private readonly items: string[] = []
  private total = 0

  constructor(private readonly what: string, private readonly limit = 20) {}

  add(message: string): void {
    this.total++
    if (this.items.length < this.limit) this.items.push(message)
  }

  get count(): number {
    return this.total
  }

  throwIfAny(hint = 'nothing was written'): void {
    if (this.total === 0) return
    const more = this.total > this.items.length ? `; and ${this.total - this.items.length} more` : ''
    throw new InvalidInputError(`${this.what}: ${this.total} bad ${this.total === 1 ? 'row' : 'rows'} (${hint}): ${this.items.join('; ')}${more}`)
  }
}
