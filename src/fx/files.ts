import {basename} from 'node:path'

import {decodeUtf8, readInput} from '../input.js'
import {InvalidInputError} from '../errors.js'

/**
 * Largest data file an import reads into memory (the full ECB history is ~2 MB, World
 * Bank files ~200 KB); bigger input is refused before it can exhaust memory.
 */
export const MAX_IMPORT_BYTES = 64 * 1024 * 1024

/** Read an import FILE (or `-` for stdin, counted as it is read) whole; unreadable files are input errors naming the path. */
export function readDataFile(path: string): {bytes: Uint8Array; name: string} {
  return {bytes: readInput(path, {limit: MAX_IMPORT_BYTES}), name: path === '-' ? 'stdin' : basename(path)}
}

/** Text of a file: UTF-8 without a byte-order mark; other encodings are refused naming `name`. */
export function decodeText(bytes: Uint8Array, name = 'input'): string {
  return decodeUtf8(bytes, name)
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
