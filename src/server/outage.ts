import {UnavailableError} from '../errors.js'

/**
 * Whether the store is out (PostgreSQL down or unreachable: an UnavailableError), for the
 * server's log (docs/serve.md "Outages"): one note when an outage begins and one when the store
 * answers again, however many requests got their 503 in between.
 */
export class StoreOutage {
  /** When the outage began (Date.now()); undefined while the store answers. */
  private since: number | undefined

  constructor(
    /** The store as messages name it. */
    private readonly where: string,
    private readonly note: (message: string) => void,
  ) {}

  get down(): boolean {
    return this.since !== undefined
  }

  /** Something failed: an UnavailableError begins an outage (noted once); anything else is not one. */
  failed(error: unknown): void {
    if (!(error instanceof UnavailableError) || this.since !== undefined) return
    this.since = Date.now()
    this.note(`the store ${this.where} is unavailable (${error.message}): requests get 503 with Retry-After until it answers again`)
  }

  /** The store answered: an outage, if one was on, ends. */
  answered(): void {
    if (this.since === undefined) return
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1)
    this.since = undefined
    this.note(`the store ${this.where} answers again (unavailable for ${seconds} s)`)
  }
}
