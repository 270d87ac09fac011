import type Pg from 'pg'

import {connectTimeoutMs, KEEPALIVE_MS, RECONNECT_RETRY_MS} from './client.js'

// After client.ts, which sets what pg looks for as it loads.
const pg = (await import('pg')).default

/** The channel every commit that moves pricectl_data_version notifies, with `schema:version`. */
export const VERSION_CHANNEL = 'pricectl_version'

/** The notification a statement that moves the version sends (delivered when its transaction commits). */
export const NOTIFY_VERSION = (version: string) => `pg_notify('${VERSION_CHANNEL}', current_schema() || ':' || ${version})`

/**
 * The store's catalog version kept current by PostgreSQL's notifications (LISTEN) on a
 * connection of its own, for a long-lived process (the server) that would otherwise read it
 * before every request. `current()` is undefined while the watch is not live (not yet
 * connected, or its connection was lost): the store reads the version then, and the watch
 * connects again in the background. A commit is known to a watching process once its
 * notification arrives, a moment after the commit (docs/postgres.md, "The catalog version").
 */
export class VersionWatch {
  private client?: Pg.Client
  private version?: number
  private retry?: NodeJS.Timeout
  private closed = false

  constructor(
    private readonly url: string,
    private readonly read: () => Promise<number>,
  ) {}

  /** The version, while notifications are received; undefined otherwise. */
  current(): number | undefined {
    return this.version
  }

  start(): void {
    if (this.client || this.closed) return
    const client = new pg.Client({
      application_name: 'pricectl watch',
      connectionString: this.url,
      connectionTimeoutMillis: connectTimeoutMs(this.url),
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_MS,
    })
    this.client = client
    let schema: string | undefined
    // The highest version notified while the first read was in flight (its snapshot may be older).
    let notified = 0
    const lost = () => {
      if (this.client !== client) return
      this.client = undefined
      this.version = undefined
      client.end().catch(() => {})
      if (this.closed) return
      this.retry = setTimeout(() => {
        this.retry = undefined
        this.start()
      }, RECONNECT_RETRY_MS)
      this.retry.unref()
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (n) => {
      const payload = n.payload ?? ''
      const at = payload.lastIndexOf(':')
      if (at < 0 || payload.slice(0, at) !== schema) return
      const version = Number(payload.slice(at + 1))
      if (this.version === undefined) notified = Math.max(notified, version)
      else this.version = Math.max(this.version, version)
    })
    // LISTEN before the read: a commit before the read is read, one after LISTEN is notified,
    // also while the read is in flight (kept in `notified`: the read may not see that commit).
    const connected = async () => {
      await client.connect()
      ;[{schema}] = (await client.query<{schema: string}>('SELECT current_schema() AS schema')).rows
      await client.query(`LISTEN ${VERSION_CHANNEL}`)
      const version = await this.read()
      if (this.client === client) this.version = Math.max(version, notified)
    }
    connected().catch(lost)
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.retry)
    const c = this.client
    this.client = undefined
    this.version = undefined
    if (!c) return
    // A server that is gone never answers end(): the socket is destroyed after a wait.
    await Promise.race([c.end().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 1000).unref())])
    ;(c as unknown as {connection?: {stream?: {destroy(): void}}}).connection?.stream?.destroy()
  }
}
