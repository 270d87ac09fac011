import pg from 'pg'
import {afterEach, describe, expect, it} from 'vitest'

import {openStore} from '../../src/store/db.js'
import type {StorePort} from '../../src/store/port.js'
import {addProduct, charge, chargeRow} from '../helpers/contract-fixtures.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'

/**
 * A PostgreSQL import batch of new keys streams its rows through one COPY left open across
 * passes (imports.ts copyNew): the COPY's own error must end the batch, with nothing of it
 * committed, and statements between passes must not wait behind the open COPY.
 */
describe('PostgreSQL import: the COPY left open across a batch', () => {
  let db: PgDatabase | undefined
  let store: StorePort | undefined
  afterEach(async () => {
    await store?.close()
    await db?.drop()
    store = db = undefined
  })

  const rows = (product: number, from: number, to: number) =>
    Array.from({length: to - from}, (_, i) => chargeRow(charge({origin_id: `ch_${from + i}`, product_id: product, user_id: `u${from + i}`})))

  it("a key written meanwhile by a writer outside the store's lock fails the batch with the COPY's error, and nothing of the batch is kept", async () => {
    db = await freshPgDatabase()
    store = openStore(db.url)
    const product = await addProduct(store, 'pro_monthly')
    const w = store.imports.writer('charges')
    await w.writeChunk(rows(product, 0, 2000))
    // The batch's COPY is open; another client adds a key of the next pass without the lock.
    const other = new pg.Client({connectionString: db.url})
    await other.connect()
    try {
      await other.query(
        `INSERT INTO charges (user_id, origin, origin_id, product_id, status, latest_event_timestamp, latest_event_id) VALUES ('u2500', 'gateway_a', 'ch_2500', $1, 'succeeded', 1, 'x')`,
        [product],
      )
    } finally {
      await other.end()
    }
    const failed = await (async () => {
      await w.writeChunk(rows(product, 2000, 4000))
      return await w.commit()
    })().then(
      () => undefined,
      (error: Error) => error,
    )
    await w.close()
    expect(failed?.message).toMatch(/charges_user_id_origin_origin_id_key|duplicate key/)
    const listed = await store.revenue.list('charges', {limit: 10})
    expect(listed.rows.map((r) => r.origin_id)).toEqual(['ch_2500'])
  })

  it('a pass that needs a statement (a product not seen in the batch yet) ends the COPY and opens another; every row is written', async () => {
    db = await freshPgDatabase()
    store = openStore(db.url)
    const first = await addProduct(store, 'pro_monthly')
    const second = await addProduct(store, 'pro_yearly')
    const w = store.imports.writer('charges')
    await w.writeChunk(rows(first, 0, 1500))
    await w.writeChunk(rows(second, 1500, 3000))
    await w.writeChunk(rows(first, 3000, 4000))
    expect(await w.commit()).toBe(true)
    await w.close()
    expect(w.counts.inserted).toBe(4000)
    const listed = await store.revenue.list('charges', {limit: 10_000})
    expect(listed.rows.filter((r) => r.product_id === second)).toHaveLength(1500)
    expect(listed.rows).toHaveLength(4000)
  })
})
