import {createRequire} from 'node:module'

import {isCountry, upperCode} from '../currency.js'

// The package's index without its 80 name locales (the main entry loads them all).
const require = createRequire(import.meta.url)
const iso = require('i18n-iso-countries/index.js') as {alpha3ToAlpha2(code: string): string | undefined}

/**
 * ISO3 codes the World Bank uses for places ISO 3166 has no alpha-3 for. Kosovo has the
 * user-assigned XK, which the rest of pricectl (currencies, prices) knows.
 */
const WORLD_BANK_ALIASES: Record<string, string> = {XKX: 'XK'}

/**
 * A country code from a data file (ISO 3166 alpha-2 or alpha-3) as alpha-2, or undefined
 * for a code that names no country: World Bank aggregates (WLD, EUU, HIC, 1W, XC, ...).
 */
export function toCountry(code: string): string | undefined {
  const c = upperCode(code.trim())
  if (c.length === 2) return isCountry(c) ? c : undefined
  if (c.length === 3) {
    const a2 = WORLD_BANK_ALIASES[c] ?? iso.alpha3ToAlpha2(c)
    return a2 && isCountry(a2) ? a2 : undefined
  }
  return undefined
}
