import type {Statement} from 'better-sqlite3'

import type {DB} from '../store/db.js'

/**
 * The localization_factors table: one factor per country (a price level ratio, 1 = US),
 * with the year it describes and where it came from. Pricing multiplies the FX-converted
 * USD base price by it; a country without a factor is priced at FX + rounding only.
 */

export type LocalizationFactor = {country: string; factor: number; source: string; year: null | number}

// One prepared statement per open store: the price command asks once per country.
const lookups = new WeakMap<DB, Statement>()

/** The factor for a country, or undefined when none is on file. */
export function localizationFactor(db: DB, country: string): number | undefined {
  let stmt = lookups.get(db)
  if (!stmt) {
    stmt = db.prepare('SELECT factor FROM localization_factors WHERE country = ?')
    lookups.set(db, stmt)
  }
  return (stmt.get(country) as {factor: number} | undefined)?.factor
}

/** Every factor (or one country's), by country. */
export function listFactors(db: DB, country?: string): LocalizationFactor[] {
  return (
    country
      ? db.prepare('SELECT country, factor, year, source FROM localization_factors WHERE country = ?').all(country)
      : db.prepare('SELECT country, factor, year, source FROM localization_factors ORDER BY country').all()
  ) as LocalizationFactor[]
}

export function setFactor(db: DB, f: LocalizationFactor): LocalizationFactor {
  db.prepare(
    `INSERT INTO localization_factors (country, factor, year, source) VALUES (?, ?, ?, ?)
     ON CONFLICT (country) DO UPDATE SET factor = excluded.factor, year = excluded.year, source = excluded.source`,
  ).run(f.country, f.factor, f.year, f.source)
  return f
}

/** Delete every factor, or those of the given countries; returns how many went. */
export function clearFactors(db: DB, countries?: string[]): number {
  if (!countries?.length) return db.prepare('DELETE FROM localization_factors').run().changes
  const del = db.prepare('DELETE FROM localization_factors WHERE country = ?')
  let n = 0
  db.transaction(() => {
    for (const c of countries) n += del.run(c).changes
  }).immediate()
  return n
}

/**
 * Write many factors in one transaction. Unchanged ones (same factor, year, source) are
 * counted, not rewritten; `replace` first removes the countries the batch does not name.
 */
export function writeFactors(db: DB, factors: LocalizationFactor[], options: {dryRun?: boolean; replace?: boolean} = {}): {removed: number; unchanged: number; written: number} {
  const current = new Map(listFactors(db).map((f) => [f.country, f]))
  const named = new Set(factors.map((f) => f.country))
  const stale = options.replace ? [...current.keys()].filter((c) => !named.has(c)) : []
  const changed = factors.filter((f) => {
    const c = current.get(f.country)
    return !c || c.factor !== f.factor || c.year !== f.year || c.source !== f.source
  })
  if (!options.dryRun) {
    const upsert = db.prepare(
      `INSERT INTO localization_factors (country, factor, year, source) VALUES (?, ?, ?, ?)
       ON CONFLICT (country) DO UPDATE SET factor = excluded.factor, year = excluded.year, source = excluded.source`,
    )
    const del = db.prepare('DELETE FROM localization_factors WHERE country = ?')
    db.transaction(() => {
      for (const c of stale) del.run(c)
      for (const f of changed) upsert.run(f.country, f.factor, f.year, f.source)
    }).immediate()
  }
  return {removed: stale.length, unchanged: factors.length - changed.length, written: changed.length}
}
