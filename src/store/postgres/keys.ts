import type {ApiKeyRow, KeyCaller, KeyRef, KeysRepository, NewApiKey} from '../port/keys.js'
import {isBusyCode} from '../busy.js'
import type {PgStore} from './store.js'
import {NOTIFY_VERSION} from './version-watch.js'

const COLUMNS = 'id, name, prefix, created_at, revoked_at, last_used_at'

/** PostgreSQL adapter of the keys repository (one round trip per key looked up: keys are few). */
export class PgKeys implements KeysRepository {
  constructor(private readonly store: PgStore) {}

  private get pg() {
    return this.store.pg
  }

  async insert(keys: readonly NewApiKey[]): Promise<(ApiKeyRow | undefined)[]> {
    return await this.store.transaction(async () => {
      const rows: (ApiKeyRow | undefined)[] = []
      for (const k of keys) {
        const [row] = await this.pg.query<ApiKeyRow>(`INSERT INTO api_keys (name, prefix, hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`, [k.name, k.prefix, k.hash, k.created_at])
        rows.push(row)
      }
      return rows
    })
  }

  async list(status?: 'active' | 'revoked'): Promise<ApiKeyRow[]> {
    const where = status === 'active' ? 'WHERE revoked_at IS NULL' : status === 'revoked' ? 'WHERE revoked_at IS NOT NULL' : ''
    return await this.pg.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys ${where} ORDER BY id`)
  }

  async activeCount(): Promise<number> {
    return (await this.pg.query<{n: number}>('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL'))[0].n
  }

  async find(refs: readonly KeyRef[]): Promise<(ApiKeyRow | undefined)[]> {
    const rows: (ApiKeyRow | undefined)[] = []
    for (const r of refs) {
      const [column, value] = 'id' in r ? ['id', r.id] : 'hash' in r ? ['hash', r.hash] : ['prefix', r.prefix]
      rows.push((await this.pg.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE ${column} = $1`, [value]))[0])
    }
    return rows
  }

  async revoke(ids: readonly number[], at: string): Promise<number> {
    if (ids.length === 0) return 0
    // The catalog version moves with it (API keys are configuration): a server remembers the
    // keys it checked while the version stays (src/server/keys.ts). A data-modifying WITH runs
    // whether or not the query reads it.
    const [row] = await this.pg.query<{n: number}>(
      `WITH r AS (UPDATE api_keys SET revoked_at = $1 WHERE id = ANY($2::bigint[]) AND revoked_at IS NULL RETURNING id),
         v AS (UPDATE pricectl_data_version SET version = version + 1 WHERE id = 1 AND EXISTS (SELECT 1 FROM r) RETURNING ${NOTIFY_VERSION('version::text')})
       SELECT count(*)::int AS n FROM r`,
      [at, [...new Set(ids)]],
    )
    return row.n
  }

  async activeByHash(hash: string): Promise<KeyCaller | undefined> {
    const [row] = await this.store.lookup<[number, string, string]>('SELECT id, name, prefix FROM api_keys WHERE hash = $1 AND revoked_at IS NULL', [hash])
    return row && {id: row[0], name: row[1], prefix: row[2]}
  }

  async recordUse(uses: readonly (readonly [id: number, at: string])[]): Promise<boolean> {
    if (uses.length === 0) return true
    if (this.store.raw.closed) return false
    const last = [...new Map(uses)].sort((x, y) => x[0] - y[0]) // a key used twice keeps its last time, as one update after another would
    // One statement on its own (its own transaction), without the store's write lock: it
    // touches the keys' rows only, and commits no catalog change (the catalog version stays,
    // so no instance reloads its catalog for it). A row another writer holds is not waited
    // for beyond the busy timeout (the server's: at once): false, tried again at the next flush.
    try {
      await this.pg.run('UPDATE api_keys AS k SET last_used_at = u.at FROM unnest($1::bigint[], $2::text[]) AS u(id, at) WHERE k.id = u.id', [
        last.map(([id]) => id),
        last.map(([, at]) => at),
      ])
      return true
    } catch (error) {
      if (isBusyCode((error as {code?: unknown}).code)) return false
      throw error
    }
  }
}
