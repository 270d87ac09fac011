import {createRequire} from 'node:module'
import {fileURLToPath} from 'node:url'

import type * as PriceSchemas from './price.js'

/**
 * The price schemas for the paths that need them only now and then: a request the
 * hand-written fast path does not take (src/pricing/request.ts), and the `price` command's
 * `outputSchema` (read by the contract tests). A cold `price` needs neither, and loading zod
 * with ./price.ts is about a sixth of its start (docs/performance.md "Cold start"), so this
 * module loads ./price.ts on the first call, with a synchronous `require` of that ES module
 * (node's require(esm)): the callers are synchronous. A node without require(esm) (before
 * 20.19, or 22 before 22.12) imports it with this module instead, as do the TypeScript
 * sources (tests, bin/dev.js), which node cannot require.
 *
 * Built, the module is ./price.js beside this file in dist/src/schemas/ or, where this code is
 * in the `price` command's bundle, the bundle's entry for it, which shares the bundle's
 * modules (scripts/build.mjs bundlePrice). So a process has one copy of each module, and
 * every caller gets the schema objects every other module imports.
 */
const here = import.meta.url
const built = here.endsWith('/dist/src/schemas/on-first-use.js')
  ? new URL('./price.js', here).href
  : here.endsWith('.js')
    ? `${here.slice(0, here.lastIndexOf('/dist/'))}/dist/bundle/price-schemas.js`
    : undefined
const requireModule = (process.features as {require_module?: boolean}).require_module === true
// From the sources the specifier is a literal, so a worker bundled from them (src/workers.ts)
// carries ./price.ts; built, it is the module's own file or the bundle's entry for it.
let loaded = built && requireModule ? undefined : ((built ? await import(built) : await import('./price.js')) as typeof PriceSchemas)

function schemas(): typeof PriceSchemas {
  return (loaded ??= createRequire(here)(fileURLToPath(built!)) as typeof PriceSchemas)
}

/** The PriceRequest schema. */
export function priceRequestSchema(): typeof PriceSchemas.PriceRequest {
  return schemas().PriceRequest
}

/** The PriceResult schema. */
export function priceResultSchema(): typeof PriceSchemas.PriceResult {
  return schemas().PriceResult
}
