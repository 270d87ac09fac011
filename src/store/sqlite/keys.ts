import type {DB} from '../db.js'
import type {ApiKeyRow, KeyCaller, KeyRef, KeysRepository, NewApiKey} from '../port/keys.js'

const COLUMNS = 'id, name, prefix, created_at, revoked_at, last_used_at'

/** SQLite adapter of the keys repository: every statement prepared once per store. */
export class SqliteKeys implements KeysRepository {
  private readonly s

  constructor(private readonly db: DB) {
    this.s = {
      active: db.prepare('SELECT count(*) FROM api_keys WHERE revoked_at IS NULL').pluck(),
      byHash: db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE hash = ?`),
      byId: db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`),
      byPrefix: db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE prefix = ?`),
      callerByHash: db.prepare('SELECT id, name, prefix FROM api_keys WHERE hash = ? AND revoked_at IS NULL'),
      insert: db.prepare(`INSERT INTO api_keys (name, prefix, hash, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`),
      list: {
        active: db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE revoked_at IS NULL ORDER BY id`),
        all: db.prepare(`SELECT ${COLUMNS} FROM api_keys ORDER BY id`),
        revoked: db.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE revoked_at IS NOT NULL ORDER BY id`),
      },
      revoke: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      touch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
    }
  }

  async insert(keys: readonly NewApiKey[]): Promise<(ApiKeyRow | undefined)[]> {
    return this.db.transaction(() => keys.map((k) => this.s.insert.get(k.name, k.prefix, k.hash, k.created_at) as ApiKeyRow | undefined))()
  }

  async list(status?: 'active' | 'revoked'): Promise<ApiKeyRow[]> {
    return this.s.list[status ?? 'all'].all() as ApiKeyRow[]
  }

  async activeCount(): Promise<number> {
    return this.s.active.get() as number
  }

  async find(refs: readonly KeyRef[]): Promise<(ApiKeyRow | undefined)[]> {
    return refs.map((r) => ('id' in r ? this.s.byId.get(r.id) : 'hash' in r ? this.s.byHash.get(r.hash) : this.s.byPrefix.get(r.prefix)) as ApiKeyRow | undefined)
  }

  async revoke(ids: readonly number[], at: string): Promise<number> {
    return this.db.transaction(() => ids.reduce((n, id) => n + this.s.revoke.run(at, id).changes, 0))()
  }

  async activeByHash(hash: string): Promise<KeyCaller | undefined> {
    return this.s.callerByHash.get(hash) as KeyCaller | undefined
  }

  async recordUse(uses: readonly (readonly [id: number, at: string])[]): Promise<boolean> {
    if (uses.length === 0) return true
    if (!this.db.open) return false
    // Never wait for another writer here (a wait would stall every request).
    const timeout = this.db.pragma('busy_timeout', {simple: true}) as number
    this.db.pragma('busy_timeout = 0')
    try {
      this.db.transaction(() => {
        for (const [id, at] of uses) this.s.touch.run(at, id)
      })()
      return true
    } catch {
      return false
    } finally {
      this.db.pragma(`busy_timeout = ${timeout}`)
    }
  }
}
