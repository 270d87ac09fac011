import type {LockRow} from './rows.js'

/**
 * Lock rows a long-lived process (the server) read outside a transaction, by lock key, up to
 * `max` (the oldest goes first: a Map keeps insertion order). They hold for the catalog
 * version seen last: a version that moved drops them all (another connection changed or
 * deleted a lock, or the catalog). This store's own lock writes drop their keys.
 *
 * `epoch` moves with every drop. A read that awaits (PostgreSQL) takes the epoch before it
 * and keeps its rows only when no drop came meanwhile: a row read before another server's
 * change must not be remembered under the version that change brought.
 */
export class RememberedLocks {
  private readonly rows = new Map<string, LockRow>()
  private version: number | undefined
  private dropped = 0

  constructor(private readonly max: number) {}

  /** The drop count a read starts from: hand it to keep() with the rows that read found. */
  get epoch(): number {
    return this.dropped
  }

  get(key: string): LockRow | undefined {
    return this.rows.get(key)
  }

  /** Remember a row read at `epoch`, unless a drop came since. */
  keep(row: LockRow, epoch = this.dropped): void {
    if (epoch !== this.dropped) return
    if (this.rows.size >= this.max && !this.rows.has(row[0])) this.rows.delete(this.rows.keys().next().value!)
    this.rows.set(row[0], row)
  }

  /** The catalog version just read: every row goes when it moved. */
  seen(version: number): void {
    if (version === this.version) return
    this.rows.clear()
    this.dropped++
    this.version = version
  }

  /** This store writes these locks: their rows go. */
  forget(keys: Iterable<string>): void {
    for (const k of keys) this.rows.delete(k)
    this.dropped++
  }
}
