import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'

import {isCurrency} from '../currency.js'
import {SNAPSHOT_PREFIX} from './sources.js'

const require = createRequire(import.meta.url)

/**
 * The FX snapshot shipped with the install: a daily USD table from an npm package. Its
 * label starts with SNAPSHOT_PREFIX, which is how the rate selection tells it from the
 * operator's rates (src/fx/sources.ts). Read once per process (fx delete and prune ask
 * for it to put snapshot rates back).
 */
export function defaultFxSnapshot(): {date: string; rates: Record<string, number>; source: string} {
  snapshot ??= readFxSnapshot()
  return snapshot
}

let snapshot: ReturnType<typeof readFxSnapshot> | undefined

function readFxSnapshot(): {date: string; rates: Record<string, number>; source: string} {
  const pkg = require('@fawazahmed0/currency-api/package.json') as {version: string}
  const path = require.resolve('@fawazahmed0/currency-api/v1/currencies/usd.min.json')
  const data = JSON.parse(readFileSync(path, 'utf8')) as {date: string; usd: Record<string, number>}
  const rates: Record<string, number> = {}
  for (const [code, rate] of Object.entries(data.usd)) {
    const c = code.toUpperCase()
    // The package also carries crypto and retired codes; keep ISO 4217 only.
    if (isCurrency(c) && Number.isFinite(rate) && rate > 0) rates[c] = rate
  }
  rates.USD = 1
  return {date: data.date, rates, source: `${SNAPSHOT_PREFIX}@fawazahmed0/currency-api ${pkg.version})`}
}
