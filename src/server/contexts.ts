import {PricingContext} from '../pricing/context.js'
import type {StorePort} from '../store/port.js'

/**
 * One cached PricingContext for the server (docs/serve.md, "Freshness of the catalog"): a new
 * one per request would make a locked quote ~8x slower. It is replaced when another connection
 * moved the store's catalogVersion(), when the server's own write calls `invalidate()` (its
 * commits do not move its data_version), and when the UTC day changed (a scheduled rate).
 * Locks and exposures the server writes are kept current in place.
 */
export class PricingContexts {
  private ctx?: PricingContext
  private version = -1
  /** How many contexts were built (for tests and the access log's curious reader). */
  builds = 0

  constructor(
    private readonly store: StorePort,
    private readonly options: {geoipDb?: string} = {},
  ) {}

  /** The context built for `version` while it stays current (no store read: the server's per-request path), else undefined. */
  known(version: number | undefined): PricingContext | undefined {
    return version !== undefined && version === this.version && this.ctx && !this.ctx.ratesStale() ? this.ctx : undefined
  }

  /** The context; `version` is the store's catalogVersion() when the caller has just read it (the server does, once per request). */
  async current(version?: number): Promise<PricingContext> {
    version ??= await this.store.pricing.catalogVersion()
    if (!this.ctx || version !== this.version || this.ctx.ratesStale()) {
      this.ctx = await PricingContext.open(this.store, {geoipDb: this.options.geoipDb})
      this.version = version
      this.builds++
    }
    return this.ctx
  }

  invalidate(): void {
    this.ctx = undefined
  }
}
