import {createHash, randomBytes} from 'node:crypto'

import {nowIso} from '../clock.js'
import {InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import {type ApiKeyRecord, KeyCreateInput} from '../schemas/server.js'
import {validate} from '../schemas/validate.js'
import type {StorePort} from '../store/port.js'
import type {ApiKeyRow, KeyCaller, KeyRef, KeysRepository} from '../store/port/keys.js'

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

function record(r: ApiKeyRow): ApiKeyRecord {
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
export async function createKey(store: StorePort, input: unknown): Promise<{key: string; record: ApiKeyRecord}> {
  const {name} = validate(KeyCreateInput, input, 'key')
  // A prefix is 48 random bits: a clash is all but impossible, but a retry costs nothing.
  for (let attempt = 0; attempt <= 3; attempt++) {
    const key = generateKey()
    const [row] = await store.keys.insert([{created_at: nowIso(), hash: hashKey(key), name, prefix: prefixOf(key)}])
    if (row) return {key, record: record(row)}
  }
  throw new OperationalError('could not draw an unused API key in 4 attempts: run "pricectl keys create" again')
}

export async function listKeys(store: StorePort, filter: {status?: string} = {}): Promise<ApiKeyRecord[]> {
  const status = filter.status === 'active' || filter.status === 'revoked' ? filter.status : undefined
  return (await store.keys.list(status)).map((r) => record(r))
}

export async function activeKeyCount(store: StorePort): Promise<number> {
  return await store.keys.activeCount()
}

/** A key named by its id, its prefix or the whole key (what an operator has at hand). */
export async function findKey(store: StorePort, ref: string): Promise<ApiKeyRecord> {
  const t = ref.trim()
  let by: KeyRef
  if (/^\d+$/.test(t)) by = {id: Number(t)}
  else if (KEY_SHAPE.test(t)) by = {hash: hashKey(t)}
  else if (t.startsWith(KEY_PREFIX)) {
    if (t.length < PREFIX_LENGTH) throw new InvalidInputError(`key ${JSON.stringify(ref)}: a prefix has ${PREFIX_LENGTH} characters, as "pricectl keys list" shows it`)
    by = {prefix: prefixOf(t)}
  } else {
    throw new InvalidInputError(`key ${JSON.stringify(ref)}: expected a key id, a prefix such as pk_AbC12xyz, or the key itself (see "pricectl keys list")`)
  }
  const [row] = await store.keys.find([by])
  if (!row) throw new NotFoundError(`no API key ${JSON.stringify(ref)} (see "pricectl keys list")`)
  return record(row)
}

/** Revoke: the key stops working on the server's next request. Revoking twice changes nothing. */
export async function revokeKey(store: StorePort, ref: string): Promise<{changed: boolean; record: ApiKeyRecord}> {
  const found = await findKey(store, ref)
  if (found.status === 'revoked') return {changed: false, record: found}
  await store.keys.revoke([found.id], nowIso())
  return {changed: true, record: await findKey(store, String(found.id))}
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

export type Caller = KeyCaller

/** How many distinct keys the checker remembers (a server has a handful; more are looked up each time). */
const KNOWN_KEYS = 256

/**
 * Checks every request's key against the store, so a key revoked by another process stops
 * working on the next request (docs/serve.md, "Authentication: API keys"). An active key is
 * remembered while the store's version stays put (SQLite's `PRAGMA data_version`; PostgreSQL's
 * catalog version, which a revoke moves), saving the hash and lookup. Last use is written by
 * `flush()`, so a request never waits for a write.
 */
export class KeyChecker {
  private readonly used = new Map<number, string>()
  private readonly keys: KeysRepository
  private readonly known = new Map<string, Caller>()
  private knownVersion: number | undefined
  private readonly warn: (message: string) => void
  /** A flush failed and none has written since: its warning was given. */
  private failing = false

  /** `warn`: where a flush that could not write says so (once until one writes again). */
  constructor(store: StorePort, options: {warn?: (message: string) => void} = {}) {
    this.keys = store.keys
    this.warn = options.warn ?? (() => {})
  }

  /**
   * The caller of a key checked before at this data version (no store read: the server's
   * per-request path), else undefined: check() then.
   */
  seen(key: string | undefined, version: number | undefined): Caller | undefined {
    if (key === undefined || version === undefined || version !== this.knownVersion) return undefined
    const caller = this.known.get(key)
    if (caller) this.used.set(caller.id, nowIso())
    return caller
  }

  async check(key: string | undefined, version?: number): Promise<Caller | undefined> {
    // Anything not shaped like a key cannot match: skip the hash and the query.
    if (!key || !KEY_SHAPE.test(key)) return undefined
    let caller: Caller | undefined
    if (version === undefined) {
      caller = await this.keys.activeByHash(hashKey(key))
    } else {
      if (version !== this.knownVersion) {
        this.known.clear()
        this.knownVersion = version
      }
      caller = this.known.get(key)
      if (!caller) {
        caller = await this.keys.activeByHash(hashKey(key))
        if (caller && this.known.size < KNOWN_KEYS) this.known.set(key, caller)
      }
    }
    if (caller) this.used.set(caller.id, nowIso())
    return caller
  }

  /**
   * Write the last use times gathered since the last flush. Never throws (the server calls it
   * from a timer): a busy store keeps the times for the next flush, and so does a store that
   * cannot be reached (PostgreSQL down) or fails otherwise, with one warning until a flush writes
   * again (last use is informational, one entry per key: nothing grows). `final` (the server
   * stops): what cannot be written is dropped, with a warning. True when nothing is left unwritten.
   */
  async flush(options: {final?: boolean} = {}): Promise<boolean> {
    if (this.used.size === 0) return true
    const entries = [...this.used]
    this.used.clear()
    let written: boolean
    try {
      written = await this.keys.recordUse(entries)
    } catch (error) {
      const n = `${entries.length} key${entries.length === 1 ? '' : 's'}`
      const why = (error as Error)?.message ?? String(error)
      if (options.final) {
        this.warn(`key use times of ${n} not written: ${why} (dropped: the server stops)`)
        return false
      }
      if (!this.failing) this.warn(`key use times of ${n} not written (${why}): kept, and written when the store answers again`)
      this.failing = true
      written = false
    }
    if (!written) {
      for (const [id, at] of entries) if (!this.used.has(id)) this.used.set(id, at)
      return false
    }
    this.failing = false
    return true
  }
}
