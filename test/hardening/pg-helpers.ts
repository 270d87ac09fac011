import {createProduct} from '../../src/catalog/products.js'
import {openStore} from '../../src/store/db.js'
import {connectPg} from '../../src/store/postgres/client.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'

/** A fresh PostgreSQL store with the products the generated exports name (generate.ts). */
export async function pgStoreWithProducts(): Promise<PgDatabase> {
  const db = await freshPgDatabase()
  const store = openStore(db.url)
  try {
    await createProduct(store, {api_id: 'prod_pro', base_px: 10, interval: 'month', interval_count: 1, name: 'Pro'})
    await createProduct(store, {api_id: 'pro_yearly', base_px: 100, interval: 'year', interval_count: 1, name: 'Pro yearly'})
    await createProduct(store, {api_id: 'lifetime', base_px: 300, interval: 'one_time', interval_count: 1, name: 'Lifetime'})
  } finally {
    await store.close()
  }
  return db
}

/**
 * What an import writes: charges by key without the surrogate id (a sequence does not roll
 * back with a killed batch, so ids may differ from an uninterrupted run's), and row counts.
 */
export async function pgRevenueDump(url: string): Promise<{charges: Record<string, unknown>[]; counts: Record<string, number>}> {
  const pg = connectPg(url)
  try {
    const charges = (await pg.query<Record<string, unknown>>('SELECT * FROM charges ORDER BY user_id, origin, origin_id')).map(({id: _id, ...r}) => r)
    const counts: Record<string, number> = {}
    for (const t of ['charges', 'subscriptions', 'events', 'products', 'changes']) counts[t] = (await pg.query<{n: number}>(`SELECT count(*)::int AS n FROM ${t}`))[0].n
    return {charges, counts}
  } finally {
    await pg.close()
  }
}
