import {closeSync, fstatSync, openSync, readSync} from 'node:fs'

import {InvalidInputError} from './errors.js'

/**
 * Reading and parsing input text, for every front end: files and stdin with a size limit,
 * UTF-8 decoding that names the bad byte, JSON with a nesting limit. Flag- and prompt-shaped
 * input (--body, KEY=VALUE flags, prompts) is the CLI's: src/cli/input.ts.
 */

/**
 * The bytes of FILE, or of stdin for `-`, refusing more than `limit` bytes with an input
 * error instead of reading them all into memory (stdin is read in chunks and counted).
 */
export function readInput(path: string, o: {hint?: string; limit: number; what?: string}): Buffer {
  const prefix = o.what ? `${o.what}: ` : ''
  const tooBig = (size: string) => new InvalidInputError(`${prefix}${path === '-' ? 'stdin' : path} is ${size}; the limit is ${o.limit} bytes${o.hint ? ` (${o.hint})` : ''}`)
  const unreadable = (error: unknown) => {
    const e = error as NodeJS.ErrnoException
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'a directory, not a file' : e.message
    return new InvalidInputError(`${prefix}cannot read ${path}: ${why}`)
  }
  let fd: number
  try {
    fd = path === '-' ? 0 : openSync(path, 'r')
  } catch (error) {
    throw unreadable(error)
  }
  try {
    const st = fstatSync(fd)
    if (st.isDirectory()) throw new InvalidInputError(`${prefix}${path} is a directory, not a file`)
    if (st.isFile() && st.size > o.limit) throw tooBig(`${st.size} bytes`)
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(1 << 16)
      let n: number
      try {
        n = readSync(fd, chunk, 0, chunk.length, null)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        // A non-blocking stdin has no data yet: wait a little and read again.
        if (code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
          continue
        }
        if (code === 'EOF') break
        throw error
      }
      if (n === 0) break
      total += n
      if (total > o.limit) throw tooBig(`over ${o.limit} bytes`)
      chunks.push(chunk.subarray(0, n))
    }
    return Buffer.concat(chunks, total)
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    throw unreadable(error)
  } finally {
    if (fd !== 0) closeSync(fd)
  }
}

/**
 * UTF-8 text of an input file, without its byte-order mark. UTF-16 and other encodings
 * (latin-1 bytes, binary files) are refused with the line of the first bad byte, rather
 * than read as replacement characters that would land in the store.
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  const b0 = bytes[0]
  const b1 = bytes[1]
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) {
    throw new InvalidInputError(`${what}: the file is UTF-16 text; save it as UTF-8 (for example: iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8)`)
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', {fatal: true}).decode(bytes)
  } catch {
    const at = firstInvalidUtf8(bytes)
    const line = lineAt(bytes, at)
    throw new InvalidInputError(
      `${what}: not UTF-8 text (byte 0x${bytes[at].toString(16).padStart(2, '0')} on line ${line}); save it as UTF-8 (for example: iconv -f LATIN1 -t UTF-8 FILE > FILE.utf8)`,
    )
  }
  const nul = text.indexOf('\u0000')
  if (nul !== -1) {
    const line = text.slice(0, nul).split('\n').length
    throw new InvalidInputError(`${what}: holds NUL bytes (line ${line}): a binary file, or UTF-16 without a byte-order mark; save it as UTF-8 text`)
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let lo = 0
  let hi = bytes.length
  // The longest prefix that decodes (a sequence cut at its end is fine in stream mode), by bisection.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    try {
      new TextDecoder('utf-8', {fatal: true}).decode(bytes.subarray(0, mid), {stream: true})
      lo = mid
    } catch {
      hi = mid - 1
    }
  }
  // When the prefix ends inside a sequence, the bad byte is that sequence's lead byte.
  let at = lo
  try {
    new TextDecoder('utf-8', {fatal: true}).decode(bytes.subarray(0, lo))
  } catch {
    while (at > 0 && (bytes[at - 1] & 0xc0) === 0x80) at--
    if (at > 0) at--
  }
  return Math.min(at, bytes.length - 1)
}

function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1
  for (let i = 0; i < offset && i < bytes.length; i++) if (bytes[i] === 0x0a) line++
  return line
}

/**
 * Deepest nesting of arrays and objects accepted in JSON input. pricectl's own documents
 * need a few levels (a products file: array > product > country_prices > price is 4);
 * deeper input is refused before it is parsed, because validation, messages and
 * JSON.stringify recurse and ~5,000 levels overflow the stack.
 */
export const MAX_JSON_DEPTH = 64

/**
 * Refuse JSON text nested deeper than MAX_JSON_DEPTH, naming the line where it goes too
 * deep. One pass over the text, string-aware; malformed text is left to JSON.parse.
 * `lines: false` leaves the line out: the text is one line (or cell) of a file whose own line
 * number the caller reports (price --input), so "line 1" would contradict it.
 */
export function checkJsonDepth(text: string, what?: string, options: {lines?: boolean} = {}): void {
  if (!mayNestTooDeep(text)) return
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // Skip the string: a bracket inside it is text, and an escaped quote does not end it.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) {
        const where = options.lines === false ? '' : ` (line ${text.slice(0, i).split('\n').length})`
        throw new InvalidInputError(`${what ? `${what}: ` : ''}JSON nested more than ${MAX_JSON_DEPTH} levels deep${where}; no pricectl input needs more than a few levels`)
      }
    } else if (c === 0x5d || c === 0x7d) depth--
  }
}

/**
 * Whether the text holds more opening brackets than the depth limit: when it does not, it
 * cannot nest too deep, and the string-aware scan is skipped (a batch line holds a handful;
 * native indexOf finds them without a loop over every character).
 */
function mayNestTooDeep(text: string): boolean {
  let n = 0
  for (const open of ['{', '[']) {
    for (let i = text.indexOf(open); i !== -1; i = text.indexOf(open, i + 1)) if (++n > MAX_JSON_DEPTH) return true
  }
  return false
}

/** JSON text to a value, with the depth limit; errors are input errors naming `what` (options: checkJsonDepth's). */
export function parseJson(text: string, what?: string, options: {lines?: boolean} = {}): unknown {
  checkJsonDepth(text, what, options)
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(`${what ? `${what}: ` : ''}malformed JSON (${(error as Error).message})`)
  }
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  const value = parseJson(text, what)
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(`${what}: expected a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`)
  }
  return value as Record<string, unknown>
}

/** A flag value that is JSON (object or array); `what` names the flag in errors. */
export function parseJsonValue(text: string, what: string): unknown {
  checkJsonDepth(text, what)
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(`${what}: malformed JSON ${JSON.stringify(text.slice(0, 80))} (${(error as Error).message})`)
  }
}
