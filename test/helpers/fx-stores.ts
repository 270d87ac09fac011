import {afterEach} from 'vitest'

import {setRate} from '../../src/fx/repository.js'
import {openSqliteStore, type SqliteStore} from '../../src/store/db.js'
import {tempStore} from './run.js'

export type RateRow = {currency?: string; date: string; rate: number; source: string}

/**
 * For a test file: storeWith(rates) opens a store holding only the given rates (the bundled
 * snapshot removed; currency EUR unless given). Every store is closed after each test, and
 * PRICECTL_NOW is cleared.
 */
export function fxStores(): (rates: RateRow[]) => Promise<SqliteStore> {
  const stores: SqliteStore[] = []
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close()
    delete process.env.PRICECTL_NOW
  })
  return async (rates) => {
    const s = openSqliteStore(tempStore())
    stores.push(s)
    s.db.prepare('DELETE FROM fx_rates').run()
    for (const r of rates) await setRate(s, {currency: r.currency ?? 'EUR', date: r.date, rate: r.rate, source: r.source})
    return s
  }
}
