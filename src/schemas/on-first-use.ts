import {PriceRequest, PriceResult} from './price.js'

/**
 * The price schemas for the paths that need them only now and then: a request the
 * hand-written fast path does not take (src/pricing/request.ts), and the `price` command's
 * `outputSchema` (read by the contract tests). Functions, not the constants: in the `price`
 * command's bundle these build zod and the two schemas on their first call instead of at
 * start (scripts/build.mjs schemasOnFirstUse; docs/performance.md "Cold start").
 * Here they return the constants of ./price.ts, the same objects every other module uses.
 */
export function priceRequestSchema(): typeof PriceRequest {
  return PriceRequest
}

/** The PriceResult schema (see priceRequestSchema). */
export function priceResultSchema(): typeof PriceResult {
  return PriceResult
}
