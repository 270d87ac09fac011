import {type ChildProcess, spawn} from 'node:child_process'
import {chmodSync, mkdtempSync, rmSync} from 'node:fs'
import http from 'node:http'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {startCluster} from '../../scripts/postgres-cluster.mjs'
import {UnavailableError} from '../../src/errors.js'
import {httpError} from '../../src/server/errors.js'
import {openStore} from '../../src/store/db.js'
import {connectPg, type PgClient} from '../../src/store/postgres/client.js'
import type {PgStore} from '../../src/store/postgres/store.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {freshPgDatabase, type PgDatabase, pgServerUrl} from '../helpers/postgres.js'
import {ROOT, run} from '../helpers/run.js'

/**
 * A dropped connection (server restart, pg_terminate_backend) is replaced by the next call
 * (docs/postgres.md#connections-and-reconnecting): the tests end the store's backend from
 * another connection, as an operator or a restart would.
 */

const made: PgDatabase[] = []
const opened: {close(): Promise<void>}[] = []
const children: ChildProcess[] = []
let admin: PgClient | undefined
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const s of opened.splice(0)) await s.close()
  for (const d of made.splice(0)) await d.drop()
  await admin?.close()
  admin = undefined
})

async function database(): Promise<PgDatabase> {
  const d = await freshPgDatabase()
  made.push(d)
  return d
}

function adminPg(): PgClient {
  if (!admin) admin = connectPg(pgServerUrl())
  return admin
}

/** End every session on `name` (pg_terminate_backend) and wait until they are gone. */
async function terminate(name: string): Promise<number> {
  const pg = adminPg()
  const [{n}] = await pg.query<{n: number}>('SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
  const until = Date.now() + 10_000
  while ((await pg.query<{n: number}>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]))[0].n > 0) {
    if (Date.now() > until) throw new Error(`the sessions on ${name} did not end`)
  }
  // The sessions ended while idle: their clients read the notice that says so before the next call (an
  // answer to the poll above can come first in the same turn of the event loop).
  await new Promise((resolve) => setTimeout(resolve, 20))
  return n
}

/**
 * A child process that ends the session on `name` running a statement that contains
 * `marker`, once it shows up (this thread is blocked in that statement meanwhile).
 */
async function terminateWhenRunning(name: string, marker: string): Promise<ChildProcess> {
  const script = `
const pg = require('pg')
const c = new pg.Client({connectionString: process.argv[1]})
c.connect().then(async () => {
  process.stdout.write('ready\\n')
  for (let i = 0; i < 2400; i++) {
    const r = await c.query("SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE $2", [process.argv[2], '%' + process.argv[3] + '%'])
    if (r.rows.length > 0) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  await c.end()
})`
  const child = spawn(process.execPath, ['-e', script, pgServerUrl(), name, marker], {cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit']})
  children.push(child)
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve())
    child.once('exit', (code) => reject(new Error(`the terminating child exited (${code}) before it connected`)))
  })
  return child
}

function openPg(url: string): PgStore {
  const s = openStore(url) as PgStore
  opened.push(s)
  return s
}

async function caught(fn: () => unknown): Promise<unknown> {
  try {
    await fn()
  } catch (error) {
    return error
  }
  throw new Error('expected an error')
}

describe('PostgreSQL: a dropped connection', () => {
  it('outside a transaction: the next store call succeeds on a new connection, with the session settings made again', async () => {
    const d = await database()
    const store = openPg(d.url)
    await store.setBusyTimeout(7000)
    expect((await store.health()).schemaVersion).toBeGreaterThan(0)
    const before = (await store.pg.query<{pid: number}>('SELECT pg_backend_pid() AS pid'))[0].pid
    // Its two sessions: the transactions' and the other statements'.
    expect(await terminate(d.name)).toBe(2)
    // A read, then a write transaction (BEGIN and the write lock): both on the new connection.
    expect((await store.health()).schemaVersion).toBeGreaterThan(0)
    expect((await store.pg.query<{pid: number}>('SELECT pg_backend_pid() AS pid'))[0].pid).not.toBe(before)
    expect(await store.pg.query(`SELECT current_setting('lock_timeout') AS t`)).toEqual([{t: '7s'}])
    await terminate(d.name)
    await store.transaction(async () => await store.pg.run(`INSERT INTO settings (key, value) VALUES ('reconnect', 'yes')`), {write: true})
    expect(await store.pg.query(`SELECT value FROM settings WHERE key = 'reconnect'`)).toEqual([{value: 'yes'}])
  })

  it('inside a transaction: the call fails with an operational error saying so, nothing of the transaction is kept, and the next call works', async () => {
    const d = await database()
    const store = openPg(d.url)
    let inside: unknown
    const error = await caught(async () =>
      await store.transaction(
        async () => {
          await store.pg.run(`INSERT INTO settings (key, value) VALUES ('lost', 'yes')`)
          await terminate(d.name)
          inside = await caught(async () => await store.pg.query('SELECT 1'))
          // Every later call of the lost transaction fails too, rather than run outside it.
          await store.pg.run(`INSERT INTO settings (key, value) VALUES ('after', 'yes')`)
        },
        {write: true},
      ),
    )
    for (const e of [inside, error]) {
      expect(e).toBeInstanceOf(UnavailableError)
      expect((e as UnavailableError).exitCode).toBe(1)
      expect((e as Error).message).toMatch(/^the connection to the PostgreSQL store postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ was lost \(terminating connection due to administrator command: a server restart, or its session was ended\) inside a transaction: the transaction was rolled back, nothing of it was written; retry/)
    }
    expect(await store.pg.query(`SELECT key FROM settings WHERE key IN ('lost', 'after')`)).toEqual([])
    expect((await store.health()).schemaVersion).toBeGreaterThan(0)
  })

  it('during a statement: no statement runs twice, a read or a write fails saying it may have been applied, and the next call works', async () => {
    const d = await database()
    const pg = connectPg(d.url)
    opened.push(pg)
    await pg.exec('CREATE TABLE t (a bigint)')
    // The statements sleep long enough for the child (polling every 25 ms) to see them, even on a loaded machine.
    const killer = await terminateWhenRunning(d.name, 'pg_sleep(1.51)')
    const read = await caught(async () => await pg.query('SELECT 42 AS n, pg_sleep(1.51) AS s'))
    await new Promise((r) => killer.once('exit', r))
    expect(read).toBeInstanceOf(UnavailableError)
    expect((read as Error).message).toMatch(/was lost \(terminating connection due to administrator command: .*\) while a statement ran: it may or may not have been applied/)
    expect(await pg.query('SELECT 42 AS n')).toEqual([{n: 42}])

    const killer2 = await terminateWhenRunning(d.name, 'pg_sleep(1.52)')
    const error = await caught(async () => await pg.run('INSERT INTO t SELECT 1 FROM pg_sleep(1.52)'))
    await new Promise((r) => killer2.once('exit', r))
    expect(error).toBeInstanceOf(UnavailableError)
    expect((error as Error).message).toMatch(/was lost \(terminating connection due to administrator command: .*\) while a statement ran: it may or may not have been applied; check, then retry/)
    expect(await pg.query('SELECT count(*) AS n FROM t')).toEqual([{n: 0}])
  })

  it('during its COMMIT: the transaction fails saying it may or may not have been written, and the next call works', async () => {
    const d = await database()
    const store = openPg(d.url)
    // A commit that takes 1.5 s: a deferred trigger sleeps when the transaction commits.
    await store.pg.exec(`CREATE TABLE slow (a bigint);
      CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(1.53); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON slow DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`)
    const killer = await terminateWhenRunning(d.name, 'COMMIT')
    const error = await caught(async () => await store.transaction(async () => await store.pg.run('INSERT INTO slow VALUES (1)'), {write: true}))
    await new Promise((r) => killer.once('exit', r))
    expect(error).toBeInstanceOf(UnavailableError)
    expect((error as Error).message).toMatch(/was lost \(terminating connection due to administrator command: .*\) while its transaction committed: the transaction may or may not have been written; check, then retry/)
    expect(await store.pg.query('SELECT count(*) AS n FROM slow')).toEqual([{n: 0}])
  })
})

describe('PostgreSQL: statements sent together on a connection that is not pipelined', () => {
  it('run one after another, each with the whole statement timeout, and no warning from the driver', async () => {
    const d = await database()
    // statement_timeout 1 s: a statement without an answer 2 s after it was sent is taken as lost.
    const pg = connectPg(`${d.url}?statement_timeout=1000`)
    opened.push(pg)
    const warnings: string[] = []
    const warned = (w: Error) => warnings.push(w.message)
    process.on('warning', warned)
    try {
      // The third is answered ~2.4 s after the three were called: within its 2 s only when counted from when it was sent.
      const slept = await Promise.all([0, 1, 2].map(async (i) => await pg.query<{i: number}>('SELECT $1::int AS i, pg_sleep(0.8) IS NULL AS slept', [i])))
      expect(slept.map(([r]) => r.i)).toEqual([0, 1, 2])
    } finally {
      process.off('warning', warned)
    }
    expect(warnings).toEqual([])
  })
})

describe('PostgreSQL: a server restart', () => {
  it('the next call works once the server is back; while it is down a call fails with an operational error (HTTP 503)', async () => {
    // A cluster of this test's own (the run's is shared): as root the server runs as another user, so its folder is beside the run's.
    const base = process.env.PRICECTL_TEST_RUN_DIR ? dirname(process.env.PRICECTL_TEST_RUN_DIR) : tmpdir()
    const parent = mkdtempSync(join(base, 'pricectl-restart-test-'))
    chmodSync(parent, 0o711)
    const cluster = await startCluster({parent})
    try {
      const store = openPg(cluster.url)
      await store.transaction(async () => await store.pg.run(`INSERT INTO settings (key, value) VALUES ('before', 'restart')`), {write: true})
      await cluster.restart()
      expect(await store.pg.query(`SELECT value FROM settings WHERE key = 'before'`)).toEqual([{value: 'restart'}])
      await cluster.stop()
      const down = await caught(async () => await store.health())
      expect(down).toBeInstanceOf(UnavailableError)
      expect((down as Error).message).toMatch(/^the connection to the PostgreSQL store postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres was lost \(.*\) and no new connection could be made: check that the server runs and accepts connections, then retry$/)
      const answer = httpError(down, {bodyLimit: 1})
      expect([answer.status, answer.headers]).toEqual([503, {'retry-after': '1'}])
      expect(answer.body.message).toBe((down as Error).message)
    } finally {
      await cluster.stop()
      rmSync(parent, {force: true, recursive: true})
    }
  })
})

describe('PostgreSQL: serve after its backend is killed', () => {
  it('keeps answering: the next request prices on a new connection', async () => {
    const d = await database()
    // The catalog and the key in-process: the process under test is the server.
    await createProducts(d.url, CATALOG)
    const k = await run(d.url, ['keys', 'create', '--name', 'reconnect', '--json'])
    expect(k.code, k.stderr).toBe(0)
    const key = k.json.api_key as string
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'serve', '--port', '0', '--db', d.url], {cwd: ROOT, env: {...process.env, NODE_ENV: undefined} as NodeJS.ProcessEnv})
    children.push(child)
    let stderr = ''
    child.stderr!.on('data', (c) => (stderr += c))
    const until = Date.now() + 30_000
    while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(stderr)) {
      if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start: ${stderr}`)
      await new Promise((r) => setTimeout(r, 20))
    }
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)![1])
    const price = (user: string) => post(port, key, {country: 'DE', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: user})

    const first = await price('user-1')
    expect(first.status, JSON.stringify(first.json)).toBe(200)
    expect(await terminate(d.name)).toBeGreaterThan(0)
    const second = await price('user-2')
    expect(second.status, JSON.stringify(second.json)).toBe(200)
    expect(second.json.products.pro_monthly).toEqual(first.json.products.pro_monthly)
    const again = await price('user-1')
    expect(again.status).toBe(200)
    expect(again.json.products.pro_monthly).toEqual(first.json.products.pro_monthly)
    expect(await get(port, '/healthz')).toBe(200)
    expect(child.exitCode).toBe(null)
  })
})

function post(port: number, key: string, body: unknown): Promise<{json: any; status: number}> {
  const text = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {headers: {authorization: `Bearer ${key}`, 'content-length': Buffer.byteLength(text), 'content-type': 'application/json'}, host: '127.0.0.1', method: 'POST', path: '/v1/prices', port},
      (res) => {
        let data = ''
        res.on('data', (c) => (data += c))
        res.on('end', () => resolve({json: JSON.parse(data), status: res.statusCode ?? 0}))
      },
    )
    req.on('error', reject)
    req.end(text)
  })
}

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({host: '127.0.0.1', path, port}, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    }).on('error', reject)
  })
}
