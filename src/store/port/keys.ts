/**
 * The keys part of the storage port (see ../port.ts): API keys of `pricectl serve`, stored
 * as a hash and a visible prefix, never the key. Methods are synchronous and shaped for bulk
 * work: a single call is a chunk of one.
 */

/** A stored key as the store has it (no hash). */
export type ApiKeyRow = {created_at: string; id: number; last_used_at: null | string; name: string; prefix: string; revoked_at: null | string}

/** A key to store: its name, visible prefix, SHA-256 (hex) and creation time. */
export type NewApiKey = {created_at: string; hash: string; name: string; prefix: string}

/** Who a valid key belongs to (what a request check needs). */
export type KeyCaller = {id: number; name: string; prefix: string}

/** How one key is looked up: by id, by the hash of the whole key, or by its prefix. */
export type KeyRef = {hash: string} | {id: number} | {prefix: string}

export interface KeysRepository {
  /**
   * Store keys, in order. A key whose prefix or hash is taken already is not stored: its
   * entry is undefined (the caller draws a new key), and the others are stored.
   */
  insert(keys: readonly NewApiKey[]): Promise<(ApiKeyRow | undefined)[]>
  /** Keys by id order; `status` filters active (not revoked) or revoked keys. */
  list(status?: 'active' | 'revoked'): Promise<ApiKeyRow[]>
  /** How many keys are not revoked. */
  activeCount(): Promise<number>
  /** The keys the refs name, in order (undefined where none). */
  find(refs: readonly KeyRef[]): Promise<(ApiKeyRow | undefined)[]>
  /** Revoke the keys (a revoked key stays revoked, with its first time); returns how many changed. */
  revoke(ids: readonly number[], at: string): Promise<number>
  /** The caller of an active key by the hash of the whole key: one prepared lookup per request. */
  activeByHash(hash: string): Promise<KeyCaller | undefined>
  /**
   * Record last use of keys, in one write that never waits for another writer: false when
   * the store is busy (nothing written; the caller keeps the times for later).
   */
  recordUse(uses: readonly (readonly [id: number, at: string])[]): Promise<boolean>
}
