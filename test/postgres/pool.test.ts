import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {buildServer, DEFAULT_POOL_SIZE, type Server} from '../../src/server/app.js'
import {connectPg, type PgClient} from '../../src/store/postgres/client.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {run} from '../helpers/run.js'

const closing: {close(): Promise<unknown>}[] = []
const made: PgDatabase[] = []
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close()
  for (const d of made.splice(0)) await d.drop()
})

/** A server on a new PostgreSQL store with the demo catalog, and a price call with a key. */
async function server(poolSize?: number) {
  const d = await freshPgDatabase()
  made.push(d)
  await createProducts(d.url, CATALOG)
  const {api_key: key} = (await run(d.url, ['keys', 'create', '--name', 'pool', '--json'])).json as {api_key: string}
  const app: Server = buildServer({db: d.url, log: () => {}, poolSize})
  closing.push(app)
  const base = await app.listen({host: '127.0.0.1', port: 0})
  const price = async (user: string) => {
    const r = await fetch(`${base}/v1/prices`, {
      body: JSON.stringify({country: 'US', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: user}),
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
      method: 'POST',
    })
    return {json: (await r.json()) as {success: boolean}, status: r.status}
  }
  const admin: PgClient = connectPg(d.url)
  closing.push(admin)
  return {app, admin, price}
}

describe('serve on PostgreSQL: a pool of transactions (--pool-size)', () => {
  it('a group of new users waiting on the database does not hold up the next group; with one slot it does', async () => {
    for (const poolSize of [2, 1]) {
      const {admin, app, price} = await server(poolSize)
      expect(app.pricectl.writes.slots).toBe(poolSize)
      // Another session's uncommitted row for user "held": the group that claims it waits for that session.
      await admin.exec('BEGIN')
      await admin.run(`INSERT INTO users (user_id, country, created_at, updated_at) VALUES ('held', 'US', '2026-01-01', '2026-01-01')`)
      const held = price('held')
      await new Promise((r) => setTimeout(r, 300))
      const t0 = performance.now()
      const next = await Promise.race([price('next'), new Promise<'waited'>((r) => setTimeout(() => r('waited'), 1000))])
      if (poolSize === 2) {
        expect(next).toMatchObject({json: {success: true}, status: 200})
        expect(performance.now() - t0).toBeLessThan(1000)
      } else expect(next).toBe('waited')
      await admin.exec('ROLLBACK')
      expect(await held).toMatchObject({json: {success: true}, status: 200})
      expect(app.pricectl.writes.mostAside).toBe(poolSize === 2 ? 2 : 0)
    }
  })

  it(`serves ${DEFAULT_POOL_SIZE} groups at once by default; a SQLite store writes one at a time`, async () => {
    const {app} = await server()
    expect(app.pricectl.writes.slots).toBe(DEFAULT_POOL_SIZE)
    const sqlite = buildServer({db: join(mkdtempSync(join(tmpdir(), 'pricectl-pool-')), 'shop.db'), log: () => {}, poolSize: 8})
    closing.push(sqlite)
    expect(sqlite.pricectl.writes.slots).toBe(1)
  })
})
