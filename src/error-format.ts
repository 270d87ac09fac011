import {PricectlError} from './errors.js'
import {isBusyCode} from './store/busy.js'
import {diskFullHint} from './store/disk-full.js'

/**
 * Turn anything thrown into an exit code, a one-line message and extra JSON fields: the
 * engine's errors, zod's and SQLite's. The CLI adds oclif's and the prompts' (src/cli/base.ts),
 * the server maps the code to an HTTP status (src/server/errors.ts).
 */
export function describeError(err: unknown): {body: Record<string, unknown>; code: number; message: string} {
  const d = describeRaw(err)
  return {...d, message: oneLine(d.message)}
}

/** Quoted values longer than this are shortened in messages (a 10,000-character cell stays readable). */
const MAX_QUOTED = 80
/**
 * Every quoted value, short ones too: matching only long ones would pair the closing quote
 * of a short value with the opening quote of the next and cut the text between them.
 */
const QUOTED = /"((?:[^"\\]|\\.)*)"/g

/**
 * One line, whatever the input held: line breaks joined with "; " (or a space after a
 * colon), other control characters shown as escapes, long quoted values shortened.
 */
export function oneLine(message: string): string {
  const joined = message
    .split(/\r\n|[\r\n\u2028\u2029]/)
    .map((l) => l.trim())
    .filter(Boolean)
    .reduce((acc, l) => (acc === '' ? l : `${acc}${/[:;,]$/.test(acc) ? ' ' : '; '}${l}`), '')
  // eslint-disable-next-line no-control-regex
  const visible = joined.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replaceAll('\t', ' ')
  return visible.replace(QUOTED, (all: string, inner: string) => (inner.length < MAX_QUOTED ? all : `"${inner.slice(0, MAX_QUOTED)}..." (${inner.length} characters)`))
}

function describeRaw(err: unknown): {body: Record<string, unknown>; code: number; message: string} {
  if (err instanceof PricectlError) return {body: err.body, code: err.exitCode, message: err.message}
  const e = err as {code?: string; message?: string; name?: string}
  if (e?.name === 'ZodError') return {body: {}, code: 2, message: String(e.message)}
  if (isBusyCode(e?.code)) {
    return {body: {}, code: 1, message: 'the store is busy (another pricectl is writing); try again'}
  }
  if (e?.name === 'PgError') {
    // PostgreSQL's own report (src/store/postgres/client.ts), with its SQLSTATE when it has one.
    return {body: {}, code: 1, message: `store error${e.code ? ` ${e.code}` : ''}: ${e.message} (PostgreSQL; run "pricectl db check")`}
  }
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) {
    // File-system trouble is not damage: "db check" would fail the same way and help no one.
    if (e.code.startsWith('SQLITE_READONLY')) {
      return {body: {}, code: 1, message: `store error ${e.code}: ${e.message} (the store, or its folder, is not writable: check its permissions and that its file system is mounted read-write)`}
    }
    if (e.code.startsWith('SQLITE_CANTOPEN')) {
      return {body: {}, code: 1, message: `store error ${e.code}: ${e.message} (check that the store's folder exists and is writable: SQLite keeps -wal and -shm files beside the store)`}
    }
    if (e.code === 'SQLITE_FULL') {
      // The store's disk, or the temp folder where SQLite and imports write temporary data.
      return {body: {}, code: 1, message: `store error ${e.code}: ${e.message} (${diskFullHint()})`}
    }
    if (e.code.startsWith('SQLITE_IOERR')) {
      return {body: {}, code: 1, message: `store error ${e.code}: ${e.message} (check free space and the file system of the store's folder)`}
    }
    return {body: {}, code: 1, message: `store error ${e.code}: ${e.message} (run "pricectl db check")`}
  }
  const message = (e?.message ?? String(err)).split('\n')[0]
  if (e?.code === 'ENOSPC') return {body: {}, code: 1, message: `${message} (${diskFullHint({path: (e as {path?: string}).path})})`}
  return {body: {}, code: 1, message: message || 'unexpected error (set DEBUG=1 for details)'}
}
