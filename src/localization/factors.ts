import type {StorePort} from '../store/port.js'
import type {LocalizationFactor} from '../domain.js'

/**
 * The localization_factors table: one factor per country (a price level ratio, 1 = US),
 * with the year it describes and where it came from. Pricing multiplies the FX-converted
 * USD base price by it; a country without a factor is priced at FX + rounding only.
 */

export type {LocalizationFactor}

/** The factor for a country, or undefined when none is on file. */
export async function localizationFactor(store: StorePort, country: string): Promise<number | undefined> {
  return await store.config.localizationFactor(country)
}

/** Every factor (or one country's), by country. */
export async function listFactors(store: StorePort, country?: string): Promise<LocalizationFactor[]> {
  return await store.config.localizationFactors(country)
}

export async function setFactor(store: StorePort, f: LocalizationFactor): Promise<LocalizationFactor> {
  await store.config.saveLocalizationFactors([f])
  return f
}

/** Delete every factor, or those of the given countries; returns how many went. */
export async function clearFactors(store: StorePort, countries?: string[]): Promise<number> {
  return await store.transaction(async () => await store.config.deleteLocalizationFactors(countries?.length ? countries : undefined), {write: true})
}

/**
 * Write many factors in one transaction. Unchanged ones (same factor, year, source) are
 * counted, not rewritten; `replace` first removes the countries the batch does not name.
 */
export async function writeFactors(store: StorePort, factors: LocalizationFactor[], options: {dryRun?: boolean; replace?: boolean} = {}): Promise<{removed: number; unchanged: number; written: number}> {
  const current = new Map((await listFactors(store)).map((f) => [f.country, f]))
  const named = new Set(factors.map((f) => f.country))
  const stale = options.replace ? [...current.keys()].filter((c) => !named.has(c)) : []
  const changed = factors.filter((f) => {
    const c = current.get(f.country)
    return !c || c.factor !== f.factor || c.year !== f.year || c.source !== f.source
  })
  if (!options.dryRun) {
    await store.transaction(
      async () => {
        if (stale.length > 0) await store.config.deleteLocalizationFactors(stale)
        await store.config.saveLocalizationFactors(changed)
      },
      {write: true},
    )
  }
  return {removed: stale.length, unchanged: factors.length - changed.length, written: changed.length}
}
