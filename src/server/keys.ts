import {createHash, randomBytes} from 'node:crypto'

import {nowIso} from '../clock.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import {type ApiKeyRecord, KeyCreateInput} from '../schemas/server.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'

/**
 * API keys of `pricectl serve`. A key is `pk_` followed by 32 random bytes in base64url;
 * the store keeps its SHA-256 and its first 11 characters (the prefix) to name it.
 */
export const KEY_PREFIX = 'pk_'
const PREFIX_LENGTH = KEY_PREFIX.length + 8
const KEY_SHAPE = /^pk_[A-Za-z0-9_-]{43}$/

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

export function prefixOf(key: string): string {
  return key.slice(0, PREFIX_LENGTH)
}

type Row = {created_at: string; id: number; last_used_at: null | string; name: string; prefix: string; revoked_at: null | string}

const COLUMNS = 'id, name, prefix, created_at, revoked_at, last_used_at'

function record(r: Row): ApiKeyRecord {
  return {
    created_at: r.created_at,
    id: r.id,
    last_used_at: r.last_used_at,
    name: r.name,
    prefix: r.prefix,
    revoked_at: r.revoked_at,
    status: r.revoked_at === null ? 'active' : 'revoked',
  }
}

/** Create a key; the returned `key` is the only time it exists outside the caller. */
export function createKey(db: DB, input: unknown): {key: string; record: ApiKeyRecord} {
  const {name} = validate(KeyCreateInput, input, 'key')
  const insert = db.prepare(`INSERT INTO api_keys (name, prefix, hash, created_at) VALUES (?, ?, ?, ?) RETURNING ${COLUMNS}`)
  // A prefix is 48 random bits: a clash is all but impossible, but a retry costs nothing.
  for (let attempt = 0; ; attempt++) {
    const key = generateKey()
    try {
      const row = insert.get(name, prefixOf(key), hashKey(key), nowIso()) as Row
      return {key, record: record(row)}
    } catch (error) {
      if ((error as {code?: string}).code !== 'SQLITE_CONSTRAINT_UNIQUE' || attempt >= 3) throw error
    }
  }
}

export function listKeys(db: DB, filter: {status?: string} = {}): ApiKeyRecord[] {
  const where = filter.status === 'active' ? 'WHERE revoked_at IS NULL' : filter.status === 'revoked' ? 'WHERE revoked_at IS NOT NULL' : ''
  return (db.prepare(`SELECT ${COLUMNS} FROM api_keys ${where} ORDER BY id`).all() as Row[]).map((r) => record(r))
}

export function activeKeyCount(db: DB): number {
  return (db.prepare('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL').get() as {n: number}).n
}

/** A key named by its id, its prefix or the whole key (what an operator has at hand). */
export function findKey(db: DB, ref: string): ApiKeyRecord {
  const t = ref.trim()
  let row: Row | undefined
  if (/^\d+$/.test(t)) row = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(Number(t)) as Row | undefined
  else if (KEY_SHAPE.test(t)) row = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE hash = ?`).get(hashKey(t)) as Row | undefined
  else if (t.startsWith(KEY_PREFIX)) {
    if (t.length < PREFIX_LENGTH) throw new InvalidInputError(`key ${JSON.stringify(ref)}: a prefix has ${PREFIX_LENGTH} characters, as "pricectl keys list" shows it`)
    row = db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE prefix = ?`).get(prefixOf(t)) as Row | undefined
  } else {
    throw new InvalidInputError(`key ${JSON.stringify(ref)}: expected a key id, a prefix such as pk_AbC12xyz, or the key itself (see "pricectl keys list")`)
  }
  if (!row) throw new NotFoundError(`no API key ${JSON.stringify(ref)} (see "pricectl keys list")`)
  return record(row)
}

/** Revoke: the key stops working on the server's next request. Revoking twice changes nothing. */
export function revokeKey(db: DB, ref: string): {changed: boolean; record: ApiKeyRecord} {
  const found = findKey(db, ref)
  if (found.status === 'revoked') return {changed: false, record: found}
  db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(nowIso(), found.id)
  return {changed: true, record: findKey(db, String(found.id))}
}

/** The key of a request: `Authorization: Bearer KEY` or `X-Api-Key: KEY`. */
export function presentedKey(headers: {authorization?: string; 'x-api-key'?: string | string[]}): string | undefined {
  const auth = headers.authorization
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth)
    if (m) return m[1]
  }
  const x = headers['x-api-key']
  if (typeof x === 'string' && x.trim()) return x.trim()
  return undefined
}

export type Caller = {id: number; name: string; prefix: string}

/**
 * Checks keys against the store on every request: one prepared SELECT by hash, so a key
 * revoked by another process stops working at once. Last use is kept in memory and
 * written by `flush()` (the server calls it every few seconds and at shutdown), so a
 * request never waits for a write.
 */
export class KeyChecker {
  private readonly byHash
  private readonly touch
  private readonly used = new Map<number, string>()

  constructor(private readonly db: DB) {
    this.byHash = db.prepare('SELECT id, name, prefix FROM api_keys WHERE hash = ? AND revoked_at IS NULL')
    this.touch = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  }

  check(key: string | undefined): Caller | undefined {
    // Anything not shaped like a key cannot match: skip the hash and the query.
    if (!key || !KEY_SHAPE.test(key)) return undefined
    const caller = this.byHash.get(hashKey(key)) as Caller | undefined
    if (caller) this.used.set(caller.id, nowIso())
    return caller
  }

  flush(): void {
    if (this.used.size === 0 || !this.db.open) return
    const entries = [...this.used]
    this.used.clear()
    // Never wait for another writer here (a wait would stall every request): a busy
    // store keeps the times for the next flush; last use is informational.
    const timeout = this.db.pragma('busy_timeout', {simple: true}) as number
    this.db.pragma('busy_timeout = 0')
    try {
      this.db.transaction(() => {
        for (const [id, at] of entries) this.touch.run(at, id)
      })()
    } catch {
      for (const [id, at] of entries) if (!this.used.has(id)) this.used.set(id, at)
    } finally {
      this.db.pragma(`busy_timeout = ${timeout}`)
    }
  }
}
