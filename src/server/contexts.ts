import {PricingContext} from '../pricing/context.js'
import type {StorePort} from '../store/port.js'

/**
 * One PricingContext for the server, as long as the store does not change under it.
 * The context caches the catalog, rates, rules, segments and experiments (that is what
 * makes pricing fast), so it is replaced:
 * - when another connection (a `pricectl` command, an import) committed anything:
 *   the store's catalogVersion() (SQLite's `PRAGMA data_version`) moves, checked on every request (a few
 *   microseconds; a new context per request would make a locked quote ~8x slower);
 * - when a write through the server itself changed the store (the routes call
 *   `invalidate()`): the server's own commits do not move its data_version;
 * - when the day (UTC) changed since it read the FX rates: a rate scheduled for today
 *   applies from today.
 * Price requests write locks and exposures on the server's connection; the context
 * keeps those current itself, so they do not replace it.
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

  /** The context; `version` is the store's catalogVersion() when the caller has just read it (the server does, once per request). */
  current(version = this.store.pricing.catalogVersion()): PricingContext {
    if (!this.ctx || version !== this.version || this.ctx.ratesStale()) {
      this.ctx = new PricingContext(this.store, {geoipDb: this.options.geoipDb})
      this.version = version
      this.builds++
    }
    return this.ctx
  }

  invalidate(): void {
    this.ctx = undefined
  }
}
