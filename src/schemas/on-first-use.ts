import {createRequire} from 'node:module'

import type * as PriceSchemas from './price.js'

/**
 * The price schemas for the paths that need them only now and then: a request the
 * hand-written fast path does not take (src/pricing/request.ts), and the `price` command's
 * `outputSchema` (read by the contract tests). A cold `price` needs neither, and loading zod
 * with ./price.ts is about a fifth of its start (docs/performance.md "Cold start"), so this
 * module loads ./price.ts on the first call, with a synchronous `require` of that ES module
 * (node's require(esm)): the callers are synchronous. A node without require(esm) (before
 * 20.19, or 22 before 22.12), or the TypeScript sources (tests, bin/dev.js: node cannot
 * require a .ts file), import it with this module instead. Either way the functions return
 * the constants of ./price.ts, the same objects every other module uses.
 */
const features = process.features as {require_module?: boolean}
let loaded: typeof PriceSchemas | undefined = features.require_module && import.meta.url.endsWith('.js') ? undefined : await import('./price.js')

function schemas(): typeof PriceSchemas {
  return (loaded ??= createRequire(import.meta.url)('./price.js') as typeof PriceSchemas)
}

/** The PriceRequest schema. */
export function priceRequestSchema(): typeof PriceSchemas.PriceRequest {
  return schemas().PriceRequest
}

/** The PriceResult schema. */
export function priceResultSchema(): typeof PriceSchemas.PriceResult {
  return schemas().PriceResult
}
