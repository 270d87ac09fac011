import {type ChildProcess, spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {connectPg} from '../../src/store/postgres/client.js'
import {CATALOG} from '../helpers/catalog.js'
import {freshPgDatabase, type PgDatabase} from '../helpers/postgres.js'
import {ROOT, run} from '../helpers/run.js'

/**
 * Issue 18, item 2: one lock per user across several `serve` instances and a CLI batch
 * pricing the same new users at once, on one PostgreSQL store. Each caller asks for a
 * different country, so a second quote for a user would show up as a different price:
 * exactly one lock per user, and every answer for a user is that lock's price. The servers,
 * the store and its catalog are made once; each walk prices new users of its own.
 */

/** Enough for every server to meet the batch and the others on hundreds of new users. */
const USERS = 500
const SERVERS = 3
/** Requests in flight per server. */
const IN_FLIGHT = 8

const children: ChildProcess[] = []
let database: PgDatabase | undefined
afterAll(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await database?.drop()
  database = undefined
})

function start(args: string[]): {child: ChildProcess; done: Promise<{code: null | number; stderr: string; stdout: string}>; stderr: () => string} {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), ...args], {cwd: ROOT, env: {...process.env, NODE_ENV: undefined} as NodeJS.ProcessEnv})
  children.push(child)
  let stderr = ''
  let stdout = ''
  child.stderr!.on('data', (d) => (stderr += d))
  child.stdout!.on('data', (d) => (stdout += d))
  const done = new Promise<{code: null | number; stderr: string; stdout: string}>((resolve) => child.on('exit', (code) => resolve({code, stderr, stdout})))
  return {child, done, stderr: () => stderr}
}

async function serve(db: string): Promise<number> {
  const s = start(['serve', '--port', '0', '--db', db])
  const until = Date.now() + 30_000
  while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(s.stderr())) {
    if (s.child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start: ${s.stderr()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(s.stderr())![1])
}

const agent = new http.Agent({keepAlive: true, maxSockets: IN_FLIGHT})

function post(port: number, key: string, body: unknown): Promise<{json: any; status: number}> {
  const text = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {agent, headers: {authorization: `Bearer ${key}`, 'content-length': Buffer.byteLength(text), 'content-type': 'application/json'}, host: '127.0.0.1', method: 'POST', path: '/v1/prices', port},
      (res) => {
        let data = ''
        res.on('data', (d) => (data += d))
        res.on('end', () => resolve({json: JSON.parse(data), status: res.statusCode ?? 0}))
      },
    )
    req.on('error', reject)
    req.end(text)
  })
}

/** A client as sellers write one: a 503 (busy) is tried again after a moment. */
async function priceOnce(port: number, key: string, body: unknown): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    const r = await post(port, key, body)
    if (r.status === 200) return r.json
    if (r.status !== 503 || attempt > 50) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.json)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** What a caller was quoted for pro_monthly: amount and currency. */
function quoted(result: any): string {
  const p = result.products.pro_monthly
  return JSON.stringify({amount: p.integrations.gateway_a.amount, currency: p.integrations.gateway_a.currency ?? p.currency})
}

const SERVER_COUNTRIES = ['DE', 'JP', 'KW']

describe('PostgreSQL: one lock per user across 3 serve instances and a price --input batch', () => {
  let db: string
  let dir: string
  let key: string
  let ports: number[]

  beforeAll(async () => {
    database = await freshPgDatabase()
    db = database.url
    // The catalog and the key are set up in-process: the processes under test are the servers and the batch.
    dir = mkdtempSync(join(tmpdir(), 'pricectl-batch-'))
    const catalog = join(dir, 'catalog.json')
    writeFileSync(catalog, JSON.stringify(CATALOG))
    const imported = await run(db, ['products', 'import', catalog, '--json'])
    expect(imported.code, imported.stderr).toBe(0)
    const k = await run(db, ['keys', 'create', '--name', 'load', '--json'])
    expect(k.code, k.stderr).toBe(0)
    key = k.json.api_key as string
    ports = await Promise.all(Array.from({length: SERVERS}, () => serve(db)))
  }, 120_000)

  // Staggered: each server starts at a different user, so the servers meet the batch more
  // than each other. Same order: the servers walk the users in step, so they claim the same
  // new user at the same moment and the losing claims are exercised end to end. Write lock:
  // as same order, but the batch also changes a lock (an override of a user it priced first),
  // so its group runs with the store's write lock, which the servers' claims do not wait for:
  // its own claims lose to theirs and it runs again. Experiment: as same order, with a price
  // experiment running, so every new lock also gets an arm and its user an exposure, written
  // with the claim and lost with it.
  it.each(['staggered', 'same order', 'write lock', 'experiment'] as const)(`prices the same ${USERS} new users from ${SERVERS} servers (%s) and a batch at once: exactly one lock each, every answer for a user the same`, async (walk) => {
    // New users of this walk's own: the other walks' locks are not this one's.
    const prefix = {experiment: 'expt-', 'same order': 'same-', staggered: 'stag-', 'write lock': 'wlck-'}[walk]
    const userId = (i: number) => `${prefix}${String(i).padStart(4, '0')}`
    if (walk === 'experiment') {
      const started = await run(db, ['experiments', 'create', '--name', 'one lock', '-p', 'pro_monthly', '--arm', 'x0.8', '--arm', 'x1.2', '--seed', '1', '--start', '--json'])
      expect(started.code, started.stderr).toBe(0)
      // Each server follows the catalog version by its notifications: wait until it assigns arms.
      for (const [s, port] of ports.entries()) {
        for (let i = 0; !(await priceOnce(port, key, {country: 'US', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: `warm-${s}-${i}`})).variants?.arm_id; i++) {
          if (i > 100) throw new Error(`server ${s} assigns no arm`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
    }

    // The batch: every user, in the US (the servers ask for DE, JP and KW).
    const input = join(dir, `requests-${prefix}jsonl`)
    const changed = [
      {country: 'US', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: 'changed-by-batch'},
      {country: 'FR', integrations: ['gateway_a'], override: true, products: ['pro_monthly'], user_id: 'changed-by-batch'},
    ]
    const requests = Array.from({length: USERS}, (_, i) => ({country: 'US', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: userId(i)}))
    writeFileSync(input, [...(walk === 'write lock' ? changed : []), ...requests].map((r) => JSON.stringify(r)).join('\n') + '\n')
    const batch = start(['price', '--input', input, '--output', 'jsonl', '--db', db])

    const answers = new Map<string, Set<string>>()
    const note = (user: string, result: any) => {
      let set = answers.get(user)
      if (!set) answers.set(user, (set = new Set()))
      set.add(quoted(result))
    }
    await Promise.all(
      ports.map(async (port, s) => {
        // Each server walks the users IN_FLIGHT at a time, from its own starting point or from the first.
        const start = walk === 'staggered' ? Math.floor((s * USERS) / SERVERS) : 0
        const order = Array.from({length: USERS}, (_, i) => (i + start) % USERS)
        let next = 0
        await Promise.all(
          Array.from({length: IN_FLIGHT}, async () => {
            while (next < order.length) {
              const i = order[next++]
              note(userId(i), await priceOnce(port, key, {country: SERVER_COUNTRIES[s], integrations: ['gateway_a'], products: ['pro_monthly'], user_id: userId(i)}))
            }
          }),
        )
      }),
    )
    const b = await batch.done
    expect(b.code, b.stderr).toBe(0)
    const all = b.stdout.trim().split('\n').map((l) => JSON.parse(l))
    const lines = all.filter((l) => l.user_id !== 'changed-by-batch')
    expect(lines).toHaveLength(USERS)
    for (const l of lines) note(l.user_id, l)
    if (walk === 'write lock') expect(all.slice(0, 2).map((l) => JSON.parse(quoted(l)).currency)).toEqual(['USD', 'EUR'])

    expect(answers.size).toBe(USERS)
    const split = [...answers].filter(([, set]) => set.size !== 1)
    expect(split.slice(0, 5), 'users with more than one price').toEqual([])

    const pg = connectPg(db)
    try {
      const mine = `starts_with(lock_key, '${prefix}')`
      const [row] = await pg.query<{keys: number; locks: number; users: number}>(`SELECT count(*) AS locks, count(DISTINCT lock_key) AS keys, (SELECT count(*) FROM users WHERE starts_with(user_id, '${prefix}')) AS users FROM locks WHERE ${mine}`)
      expect(row).toEqual({keys: USERS, locks: USERS, users: USERS})
      // Each lock's country is the country of the answer everyone got.
      const countries = await pg.queryArrays<[string, string]>(`SELECT lock_key, country FROM locks WHERE ${mine}`)
      const currency: Record<string, string> = {DE: 'EUR', JP: 'JPY', KW: 'KWD', US: 'USD'}
      for (const [user, country] of countries) expect(JSON.parse([...answers.get(user)!][0]).currency).toBe(currency[country])
      if (walk === 'experiment') {
        // One exposure per user, to the arm of the user's one lock.
        const [exposed] = await pg.query<{exposures: number; matching: number}>(
          `SELECT count(*) AS exposures, count(*) FILTER (WHERE l.arm_id = e.arm_id) AS matching
           FROM exposures e JOIN locks l ON l.lock_key = e.user_id AND l.experiment_id = e.experiment_id WHERE starts_with(e.user_id, '${prefix}')`,
        )
        expect(exposed).toEqual({exposures: USERS, matching: USERS})
        expect((await pg.query<{n: number}>(`SELECT count(*) AS n FROM exposures WHERE starts_with(user_id, '${prefix}')`))[0].n).toBe(USERS)
      }
    } finally {
      await pg.close()
    }
  }, 300_000)
})
