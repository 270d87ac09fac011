import fc from 'fast-check'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {importFiles} from '../../src/import/importer.js'
import {createCharge, deleteCharge, listCharges, updateCharge} from '../../src/revenue/charges.js'
import {createSubscription, deleteSubscription, listSubscriptions, updateSubscription} from '../../src/revenue/subscriptions.js'
import {buildServer, type Server} from '../../src/server/app.js'
import {openStore, sqliteOf} from '../../src/store/db.js'
import {applyEvent, type Channel, type Ev, ordered, orderStream, type Stream, streamOf, T0} from '../helpers/revenue-order.js'
import {runArgs, seededStores, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {run} from '../helpers/run.js'

/**
 * Issue 16, point 1, through the front ends: any delivery order of a stream of creates,
 * partial updates, deletes and redeliveries ends in the state of the ordered stream through
 * the CLI (in-process), the HTTP API (inject) and CSV imports (an export row is a full-record
 * event at its timestamp). The engine runs the same property with more cases
 * (test/engine/revenue-order.test.ts).
 */

type Kind = 'charges' | 'subscriptions'

/** A seeded store of its own. */
const freshStore = seededStores()

function sorted(records: {origin_id: string}[]): {origin_id: string}[] {
  return records.sort((a, b) => (a.origin_id < b.origin_id ? -1 : 1))
}

async function records(db: string, kind: Kind): Promise<unknown> {
  return await withStore(db, async (_db, store) => sorted(kind === 'subscriptions' ? (await listSubscriptions(store, {})).records : (await listCharges(store, {})).records))
}

/** The ordered stream through the engine's own functions, on a store of its own: what every front end must end with. */
function engine(kind: Kind): Channel {
  return {
    async run(stream) {
      const db = freshStore()
      await withStore(db, async (_db, store) => {
        for (const e of stream) {
          await applyEvent(kind, store, e)
        }
      })
      return await records(db, kind)
    },
  }
}

/**
 * A shuffled stream through `channel` ends as the ordered stream. The CLI and the HTTP API
 * compare with the ordered stream through the engine (`engine`), not through themselves: as
 * strong (a front end that maps an event wrongly fails either way, and here also when it is
 * wrong in every order) at half the commands and requests.
 */
function property(channel: Channel, kind: Kind, numRuns: number, options: Parameters<typeof streamOf>[1] = {}, oracle: Channel = channel) {
  return fc.assert(
    fc.asyncProperty(streamOf(kind, {maxLength: 8, ...options}), fc.integer(), async (stream: Stream, seed: number) => {
      const want = await oracle.run(ordered(stream))
      expect(await channel.run(orderStream(stream, seed))).toEqual(want)
    }),
    {numRuns},
  )
}

describe('the CLI (in-process)', () => {
  function cli(kind: Kind): Channel {
    return {
      async run(stream) {
        const db = freshStore()
        const dir = tempDir()
        for (const [n, e] of stream.entries()) {
          const body = join(dir, `${n}.json`)
          writeFileSync(body, JSON.stringify(e.body))
          const event = ['--event-id', e.event.id, '--event-timestamp', String(e.event.timestamp), '--json']
          const path = ['u1', 'gateway_a', e.key]
          const args = e.action === 'create' ? [kind, 'create', '--body', body] : e.action === 'update' ? [kind, 'update', ...path, '--body', body] : [kind, 'delete', ...path, '--yes']
          const r = await runArgs(db, [...args, ...event])
          expect(r.code, r.stdout + r.stderr).toBe(0)
          expect(r.json.success).toBe(true)
        }
        return await records(db, kind)
      },
    }
  }

  it('an update before its create: exit 0, record null, applied by the create', async () => {
    const db = freshStore()
    const early = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--amount', '20', '--event-id', 'u', '--event-timestamp', String(T0 + 200), '--json'])
    expect(early.code).toBe(0)
    expect(early.json).toMatchObject({message: expect.stringMatching(/^no subscription u1 gateway_a sub_1 yet: update u is kept \(pending\)/), record: null, success: true})
    const human = await runArgs(db, ['charges', 'delete', 'u1', 'gateway_a', 'ch_1', '--yes', '--event-id', 'd', '--event-timestamp', String(T0 + 200)])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^no charge u1 gateway_a ch_1 yet: delete d is kept, so a create older than it will not make the charge/)
    const create = await runArgs(db, ['subscriptions', 'create', '--user-id', 'u1', '--origin', 'gateway_a', '--origin-id', 'sub_1', '--product', 'pro_monthly', '--amount', '10', '--currency', 'USD', '--created', String(T0 - 86_400), '--status', 'active', '--event-id', 'c', '--event-timestamp', String(T0 + 100), '--json'])
    expect(create.json).toMatchObject({message: 'subscription created: u1 gateway_a sub_1', record: {amount: 20, latest_event_id: 'u'}})
  })

  for (const kind of ['subscriptions', 'charges'] as const) {
    it(`${kind}: any shuffle ends as the ordered stream`, () => property(cli(kind), kind, 6, {}, engine(kind)), 120_000)
  }
})

describe('the HTTP API (inject)', () => {
  let app: Server
  let key: string
  beforeAll(async () => {
    const db = freshStore()
    key = (await run(db, ['keys', 'create', '--name', 'order', '--json'])).json.api_key
    app = buildServer({accessLog: false, db, log: () => {}})
    await app.ready()
  })
  afterAll(async () => {
    await app.close()
  })

  async function send(kind: Kind, e: Ev) {
    const path = `/v1/${kind}/u1/gateway_a/${e.key}`
    return app.inject({
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-event-id': e.event.id, 'x-event-timestamp': String(e.event.timestamp)},
      method: e.action === 'delete' ? 'DELETE' : 'POST',
      payload: e.action === 'delete' ? undefined : JSON.stringify(e.body),
      url: e.action === 'create' ? `/v1/${kind}` : path,
    })
  }

  function http(kind: Kind): Channel {
    return {
      async run(stream) {
        sqliteOf(app.pricectl.store, 'this test').db.exec('DELETE FROM subscriptions; DELETE FROM charges; DELETE FROM events; DELETE FROM pending_fields')
        for (const e of stream) {
          const r = await send(kind, e)
          expect([200, 202], r.body).toContain(r.statusCode)
          expect(r.json().success).toBe(true)
        }
        return sorted((kind === 'subscriptions' ? await listSubscriptions(app.pricectl.store, {}) : await listCharges(app.pricectl.store, {})).records)
      },
    }
  }

  it('an update or delete before its create is 202 Accepted with the spec body, record null', async () => {
    sqliteOf(app.pricectl.store, 'this test').db.exec('DELETE FROM subscriptions; DELETE FROM events; DELETE FROM pending_fields')
    const update = await send('subscriptions', {action: 'update', body: {amount: 20}, event: {id: 'u', timestamp: T0 + 200}, key: 'sub_1'})
    expect(update.statusCode).toBe(202)
    expect(update.json()).toEqual({message: expect.stringMatching(/^no subscription u1 gateway_a sub_1 yet: update u is kept \(pending\)/), record: null, success: true})
    const del = await send('subscriptions', {action: 'delete', body: {}, event: {id: 'd', timestamp: T0 + 50}, key: 'sub_1'})
    expect(del.statusCode).toBe(202)
    const body = {amount: 10, created: T0 - 86_400, currency: 'USD', origin: 'gateway_a', origin_id: 'sub_1', product: 'pro_monthly', status: 'active', user_id: 'u1'}
    const create = await send('subscriptions', {action: 'create', body, event: {id: 'c', timestamp: T0 + 100}, key: 'sub_1'})
    expect(create.statusCode).toBe(200)
    expect(create.json()).toMatchObject({message: 'subscription created: u1 gateway_a sub_1', record: {amount: 20}})
  })

  for (const kind of ['subscriptions', 'charges'] as const) {
    // The spec has no charge delete endpoint: charge streams there have none.
    it(`${kind}: any shuffle ends as the ordered stream`, () => property(http(kind), kind, 40, {deletes: kind === 'subscriptions'}, engine(kind)), 120_000)
  }
})

describe('CSV imports (export rows are full-record events at their timestamp)', () => {
  const HEADERS: Record<Kind, string[]> = {
    charges: ['id', 'user', 'created', 'amount', 'amount_refunded', 'tax', 'currency', 'status', 'product', 'country', 'event'],
    subscriptions: ['id', 'user', 'created', 'amount', 'tax', 'currency', 'status', 'product', 'country', 'cancel_at', 'canceled_at', 'trial_start', 'trial_end', 'event'],
  }
  const FIELD: Record<string, string> = {id: 'origin_id', user: 'user_id'}

  function mappingFile(kind: Kind, dir: string): string {
    const columns: Record<string, string> = {}
    for (const h of HEADERS[kind]) if (h !== 'event') columns[FIELD[h] ?? h] = h
    const path = join(dir, `${kind}.mapping.json`)
    writeFileSync(path, JSON.stringify({columns, event_timestamp: ['event'], kind, origin: 'gateway_a'}))
    return path
  }

  /** Runs of creates go in as one export file each; updates and deletes as single writes between them. */
  function imports(kind: Kind): Channel {
    return {
      async run(stream) {
        const db = freshStore()
        const dir = tempDir()
        const mapping = mappingFile(kind, dir)
        const store = openStore(db)
        try {
          let rows: string[] = []
          let files = 0
          const flush = async () => {
            if (rows.length === 0) return
            const file = join(dir, `export-${files++}.csv`)
            writeFileSync(file, [HEADERS[kind].join(','), ...rows].join('\n') + '\n')
            rows = []
            const r = await importFiles(store, {kind, mapping, paths: [file]})
            expect(r.rejected, `rejects of ${file}`).toBe(0)
          }
          for (const e of stream) {
            if (e.action === 'create') {
              const b: Record<string, unknown> = {...e.body, event: e.event.timestamp, id: e.key, user: 'u1'}
              rows.push(HEADERS[kind].map((h) => (b[h] === undefined || b[h] === null ? '' : String(b[h]))).join(','))
              continue
            }
            await flush()
            const k = {origin: 'gateway_a', origin_id: e.key, user_id: 'u1'}
            if (kind === 'subscriptions') {
              if (e.action === 'update') await updateSubscription(store, k, e.body, e.event)
              else await deleteSubscription(store, k, e.event)
            } else if (e.action === 'update') await updateCharge(store, k, e.body, e.event)
            else await deleteCharge(store, k, e.event)
          }
          await flush()
          return await sorted(kind === 'subscriptions' ? (await listSubscriptions(store, {})).records : (await listCharges(store, {})).records)
        } finally {
          await store.close()
        }
      },
    }
  }

  // The case fast-check found: the row that makes a record must take the update that came first.
  for (const [kind, create, update] of [
    ['subscriptions', {amount: 10, created: T0 - 86_400, currency: 'USD', product: 'pro_monthly', status: 'active', tax: 0}, {status: 'pending'}],
    ['charges', {amount: 10, amount_refunded: 0, created: T0 - 86_400, currency: 'USD', product: 'lifetime', status: 'succeeded', tax: 0}, {status: 'failed'}],
  ] as const) {
    it(`${kind}: an update that came before its record is applied by the older export row that makes it`, async () => {
      const at = (t: number) => ({id: `import:${t}`, timestamp: t})
      const stream: Ev[] = [
        {action: 'update', body: update, event: at(T0 + 1), key: 'k1'},
        {action: 'create', body: {...create, origin: 'gateway_a', origin_id: 'k2', user_id: 'u1'}, event: at(T0 + 2), key: 'k2'},
        {action: 'create', body: {...create, origin: 'gateway_a', origin_id: 'k1', user_id: 'u1'}, event: at(T0), key: 'k1'},
      ]
      const got = (await imports(kind).run(stream)) as {latest_event_id: string; origin_id: string; status: string}[]
      expect(got.map((r) => [r.origin_id, r.status])).toEqual([['k1', update.status], ['k2', create.status]])
      // An import row's id carries its precedence and fingerprint after the moment (src/import/rows.ts).
      const bare = got.map((r) => ({...r, latest_event_id: r.latest_event_id.replace(/^(import:\d+):.*$/, '$1')}))
      expect(bare).toEqual(await engine(kind).run(ordered(stream)))
    }, 60_000)
  }

  it('the same stream gives the same records whether its creates come as import rows or single writes', async () => {
    await fc.assert(
      fc.asyncProperty(streamOf('subscriptions', {imports: true, maxLength: 8, metadata: false}), async (stream) => {
        const engine = freshStore()
        await withStore(engine, async (_db, store) => {
          for (const e of ordered(stream)) {
            const k = {origin: 'gateway_a', origin_id: e.key, user_id: 'u1'}
            if (e.action === 'create') await createSubscription(store, e.body, e.event)
            else if (e.action === 'update') await updateSubscription(store, k, e.body, e.event)
            else await deleteSubscription(store, k, e.event)
          }
        })
        // An import row's id is import:<timestamp>:<precedence>:<fingerprint> (src/import/rows.ts); the
        // stream gives every event its own second, so the moment alone orders it as the single write's id.
        const imported = (await imports('subscriptions').run(ordered(stream))) as {latest_event_id: string}[]
        const bare = imported.map((r) => ({...r, latest_event_id: r.latest_event_id.replace(/^(import:\d+):.*$/, '$1')}))
        expect(bare).toEqual(await records(engine, 'subscriptions'))
      }),
      {numRuns: 5},
    )
  }, 120_000)

  for (const kind of ['subscriptions', 'charges'] as const) {
    it(`${kind}: any shuffle ends as the ordered stream`, () => property(imports(kind), kind, 5, {imports: true, metadata: false}), 180_000)
  }
})
