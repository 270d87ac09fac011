import {type ChildProcess, spawn} from 'node:child_process'
import {chmodSync, mkdtempSync, rmSync} from 'node:fs'
import http from 'node:http'
import {connect, createServer, type Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {type Cluster, startCluster} from '../../scripts/postgres-cluster.mjs'
import {UnavailableError} from '../../src/errors.js'
import {ErrorBody} from '../../src/schemas/common.js'
import {Health} from '../../src/schemas/server.js'
import {createKey, findKey, KeyChecker} from '../../src/server/keys.js'
import {openStore} from '../../src/store/db.js'
import {connectPg} from '../../src/store/postgres/client.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {ROOT, run} from '../helpers/run.js'
import {pathToFileURL} from 'node:url'

/**
 * PostgreSQL goes away under `serve` and comes back (docs/serve.md "Outages"): the server
 * stays up, answers 503 with Retry-After meanwhile (/healthz at once), and the next requests
 * after the database's return succeed without a restart. The run's cluster is shared with
 * other files, so this file stops and starts a cluster of its own (fast shutdown, as
 * `pg_ctl stop -m fast`, then a start on the same port and data).
 */

let cluster: Cluster
let parent: string
let url: string
let key: string
let database = 0
const children: ChildProcess[] = []

beforeAll(async () => {
  // As root the server runs as another user, so its folder is beside the run's (as reconnect.test.ts does).
  const base = process.env.PRICECTL_TEST_RUN_DIR ? dirname(process.env.PRICECTL_TEST_RUN_DIR) : tmpdir()
  parent = mkdtempSync(join(base, 'pricectl-outage-test-'))
  chmodSync(parent, 0o711)
  cluster = await startCluster({parent})
})

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await cluster.start()
})

afterAll(async () => {
  await cluster?.stop()
  if (parent) rmSync(parent, {force: true, recursive: true})
})

/** A new database on the cluster with the catalog and one API key (`key`). */
async function freshStore(): Promise<string> {
  const name = `pricectl_outage_${++database}`
  const admin = connectPg(cluster.url)
  try {
    await admin.exec(`CREATE DATABASE ${name}`)
  } finally {
    await admin.close()
  }
  const u = new URL(cluster.url)
  u.pathname = `/${name}`
  url = u.toString()
  await createProducts(url, CATALOG)
  const k = await run(url, ['keys', 'create', '--name', 'outage', '--json'])
  expect(k.code, k.stderr).toBe(0)
  key = k.json.api_key as string
  return url
}

type Served = {child: ChildProcess; output: () => {stderr: string; stdout: string}; port: number}

async function startServe(db: string): Promise<Served> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'serve', '--port', '0', '--db', db, '--json'], {
    cwd: ROOT,
    env: {...process.env, NODE_ENV: undefined} as NodeJS.ProcessEnv,
  })
  children.push(child)
  let stderr = ''
  let stdout = ''
  child.stderr!.on('data', (c) => (stderr += c))
  child.stdout!.on('data', (c) => (stdout += c))
  const until = Date.now() + 30_000
  while (!/listening on http:\/\/127\.0\.0\.1:\d+/.test(stderr)) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start: ${stderr}`)
    await sleep(20)
  }
  return {child, output: () => ({stderr, stdout}), port: Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)![1])}
}

type Answer = {at: number; body: any; headers: http.IncomingHttpHeaders; ms: number; started: number; status: number}

/** One request; `status` 0 with the error in `body` when the connection failed or no answer came within 5 s. */
function request(port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body)
  const started = Date.now()
  return new Promise((resolve) => {
    const headers: http.OutgoingHttpHeaders = {authorization: `Bearer ${key}`}
    if (text !== undefined) Object.assign(headers, {'content-length': Buffer.byteLength(text), 'content-type': 'application/json'})
    const req = http.request({agent: false, headers, host: '127.0.0.1', method, path, port, timeout: 5000}, (res) => {
      let data = ''
      res.on('data', (c) => (data += c))
      res.on('end', () => {
        const at = Date.now()
        let json: unknown
        try {
          json = JSON.parse(data)
        } catch {
          json = data
        }
        resolve({at, body: json, headers: res.headers, ms: at - started, started, status: res.statusCode ?? 0})
      })
    })
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')))
    req.on('error', (error) => resolve({at: Date.now(), body: error.message, headers: {}, ms: Date.now() - started, started, status: 0}))
    req.end(text)
  })
}

const priceBody = (user: string) => ({country: 'DE', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: user})

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** `clients` loops pricing new users (and now and then one priced before) until stop() resolves; every answer, in order. */
function keyedLoad(port: number, clients: number): {answers: (Answer & {user: string})[]; stop: () => Promise<void>} {
  const answers: (Answer & {user: string})[] = []
  let running = true
  const loops = Array.from({length: clients}, async (_, c) => {
    for (let i = 0; running; i++) {
      const user = i % 5 === 4 ? `load-${c}-${i - 4}` : `load-${c}-${i}`
      answers.push({...(await request(port, 'POST', '/v1/prices', priceBody(user))), user})
      await sleep(15)
    }
  })
  return {
    answers,
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}

describe('serve while PostgreSQL is down', () => {
  it('stays up under keyed load through a 10 s outage: 503 with Retry-After meanwhile (/healthz at once), 200 within 2 s of the return, no 200 lost', async () => {
    const db = await freshStore()
    const served = await startServe(db)
    const {child, port} = served
    const first = await request(port, 'POST', '/v1/prices', priceBody('before-outage'))
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const healthy = await request(port, 'GET', '/healthz')
    expect(healthy.status).toBe(200)
    Health.parse(healthy.body)

    const load = keyedLoad(port, 4)
    await sleep(1000)
    const downFrom = Date.now()
    await cluster.halt()
    const down = Date.now()

    // /healthz at once: 503, the error shape, Retry-After, saying the store is unavailable.
    const health = await request(port, 'GET', '/healthz')
    expect(health.status, JSON.stringify(health.body)).toBe(503)
    expect(health.ms).toBeLessThan(1000)
    expect(ErrorBody.parse(health.body).message).toMatch(/^the store postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ is unavailable: /)
    expect(health.headers['retry-after']).toBe('1')

    // 10 s of outage (the key-use flush runs every 5 s: twice), /healthz asked every second.
    const probes: Answer[] = []
    while (Date.now() - down < 10_000) {
      await sleep(1000)
      probes.push(await request(port, 'GET', '/healthz'))
      expect(child.exitCode, served.output().stderr).toBe(null)
    }
    for (const p of probes) {
      expect(p.status, JSON.stringify(p.body)).toBe(503)
      expect(p.ms).toBeLessThan(1000)
    }
    const upFrom = Date.now()
    await cluster.start()
    const up = Date.now()
    // Load goes on until 3 s after the return.
    await sleep(3000)
    await load.stop()
    expect(child.exitCode, served.output().stderr).toBe(null)

    const answers = load.answers
    // Nothing but 200 and 503, each answered (none hung, none 500).
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => [a.status, a.body])).toEqual([])
    // While the database was down (sent after it was down, answered before its start began): 503 with Retry-After, at once.
    const during = answers.filter((a) => a.started >= down && a.at <= upFrom)
    expect(during.length).toBeGreaterThan(20)
    for (const a of during) {
      expect([a.status, a.headers['retry-after'], a.body.success]).toEqual([503, '1', false])
      expect(a.ms).toBeLessThan(1000)
    }
    const lastOk = answers.filter((a) => a.started < downFrom && a.status === 200).length
    expect(lastOk).toBeGreaterThan(0)
    // The first 200 sent after the return: within 2 s of it.
    const back = answers.find((a) => a.started >= up && a.status === 200)
    expect(back, 'no 200 after the database came back').toBeDefined()
    const recovery = back!.at - up
    console.log(`outage: first 200 ${recovery} ms after the database accepted connections again; ${during.length} answers while down`)
    expect(recovery).toBeLessThan(2000)
    expect(answers.filter((a) => a.started >= up + 2000).every((a) => a.status === 200)).toBe(true)

    // No 200 lost: each user that got a 200 has its lock, and the same quote when asked again.
    const quoted = new Map<string, unknown>()
    for (const a of answers) if (a.status === 200 && !quoted.has(a.user)) quoted.set(a.user, a.body.products)
    quoted.set('before-outage', first.body.products)
    const pg = connectPg(db)
    try {
      const found = (await pg.query<{lock_key: string}>('SELECT lock_key FROM locks WHERE lock_key = ANY($1::text[])', [[...quoted.keys()]])).map((r) => r.lock_key)
      expect(found.sort()).toEqual([...quoted.keys()].sort())
    } finally {
      await pg.close()
    }
    for (const [user, products] of quoted) {
      const again = await request(port, 'POST', '/v1/prices', priceBody(user))
      expect(again.status).toBe(200)
      expect(again.body.products, user).toEqual(products)
    }
    expect((await request(port, 'GET', '/healthz')).status).toBe(200)

    // One note when the outage began and one when it ended, not one per request or flush.
    const {stderr} = served.output()
    expect(stderr.match(/the store \S+ is unavailable/g) ?? [], stderr).toHaveLength(1)
    expect(stderr.match(/key use times of \d+ keys? not written/g) ?? [], stderr).toHaveLength(1)
    expect(stderr.match(/the store \S+ answers again/g) ?? [], stderr).toHaveLength(1)
    child.kill('SIGTERM')
    const code = await new Promise((resolve) => child.once('exit', resolve))
    expect(code, served.output().stderr).toBe(0)
    // The key use of the requests before the outage was written after it.
    const store = openStore(db)
    try {
      expect((await findKey(store, key)).last_used_at).not.toBe(null)
    } finally {
      await store.close()
    }
  }, 90_000)

  it('SIGTERM during the outage exits 0 (key use times kept unwritten are dropped, said on stderr)', async () => {
    const db = await freshStore()
    const served = await startServe(db)
    const {child, port} = served
    expect((await request(port, 'POST', '/v1/prices', priceBody('before-stop'))).status).toBe(200)
    await cluster.halt()
    const during = await request(port, 'POST', '/v1/prices', priceBody('during'))
    expect([during.status, during.headers['retry-after']]).toEqual([503, '1'])
    const stopping = Date.now()
    child.kill('SIGTERM')
    const code = await new Promise((resolve) => child.once('exit', resolve))
    const {stderr, stdout} = served.output()
    expect(code, stderr).toBe(0)
    expect(Date.now() - stopping).toBeLessThan(3000)
    expect(JSON.parse(stdout)).toMatchObject({requests: 2, signal: 'SIGTERM', success: true})
    expect(stderr).toMatch(/key use times of 1 key not written: /)
    expect(stderr).not.toMatch(/^\s+at /m)
  })
})

describe('the client while PostgreSQL is down', () => {
  it('fails each call at once, and the first call after the return that finds the background connection made uses it, even one made and lost again before any call', async () => {
    const db = await freshStore()
    const store = openStore(db)
    const firstOk = async (): Promise<number> => {
      const from = Date.now()
      for (;;) {
        try {
          await store.health()
          return Date.now() - from
        } catch (error) {
          expect(error).toBeInstanceOf(UnavailableError)
          if (Date.now() - from > 5000) throw error
          await sleep(20)
        }
      }
    }
    try {
      await store.health()
      await cluster.halt()
      await expect(async () => await store.health()).rejects.toThrow(UnavailableError)
      const started = Date.now()
      for (let i = 0; i < 100; i++) await expect(async () => await store.health()).rejects.toThrow(/no new connection could be made/)
      expect(Date.now() - started).toBeLessThan(500)
      // Back long enough for the background connection, then down again before any call used it.
      await cluster.start()
      await sleep(1000)
      await cluster.halt()
      await expect(async () => await store.health()).rejects.toThrow(UnavailableError)
      await cluster.start()
      expect(await firstOk()).toBeLessThan(1000)
    } finally {
      await store.close()
    }
  })
})

describe('KeyChecker.flush while PostgreSQL is down', () => {
  it('does not throw, warns once, and writes the use once the store is back', async () => {
    const db = await freshStore()
    const store = openStore(db)
    const warnings: string[] = []
    try {
      const {key: secret, record} = await createKey(store, {name: 'flush'})
      const keys = new KeyChecker(store, {warn: (m) => warnings.push(m)})
      expect((await keys.check(secret))?.id).toBe(record.id)
      await cluster.halt()
      await keys.flush()
      await keys.flush()
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/^key use times of 1 key not written \(the connection to the PostgreSQL store .* was lost .*\): kept, and written when the store answers again$/)
      await cluster.start()
      // Back: the first call after the return may still find no connection (it is made in the background).
      const until = Date.now() + 5000
      while (!await keys.flush() && Date.now() < until) await sleep(100)
      expect((await findKey(store, String(record.id))).last_used_at).not.toBe(null)
    } finally {
      await store.close()
    }
  })
})

/**
 * A TCP proxy to PostgreSQL whose hold() makes every connection it carries half-open: nothing
 * more is passed either way and nothing is closed, as when a network path dies. Connections made
 * after hold() pass, unless silent (a host that answers nothing: they are held from the start).
 */
async function holdingProxy(target: number): Promise<{close(): void; hold(): void; port: number; silent: boolean}> {
  const pairs: {a: Socket; b: Socket; held: boolean}[] = []
  const proxy = {silent: false}
  const server = createServer((a) => {
    const b = connect(target, '127.0.0.1')
    const pair = {a, b, held: proxy.silent}
    pairs.push(pair)
    a.on('data', (d) => pair.held || b.write(d))
    b.on('data', (d) => pair.held || a.write(d))
    for (const [x, y] of [[a, b], [b, a]]) {
      x.on('error', () => y.destroy())
      x.on('close', () => pair.held || y.destroy())
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return Object.assign(proxy, {
    close() {
      for (const p of pairs) p.a.destroy(), p.b.destroy()
      server.close()
    },
    hold() {
      for (const p of pairs) p.held = true
    },
    port: (server.address() as {port: number}).port,
  })
}

/** A store in a process of its own (it blocks while a statement waits): one health() per line read, answered as a JSON line. */
const HEALTH_LOOP = `
import {createInterface} from 'node:readline'
const {openStore} = await import(process.argv[2])
const store = openStore(process.argv[1], {statementTimeoutMs: 1000})
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n')
say({statement_timeout: (await store.pg.query('SHOW statement_timeout'))[0].statement_timeout})
for await (const _ of createInterface({input: process.stdin})) {
  const t = Date.now()
  try {
    await store.health()
    say({ms: Date.now() - t, ok: true})
  } catch (e) {
    say({error: e.constructor.name, message: e.message, ms: Date.now() - t})
  }
}
`

/** HEALTH_LOOP on `db` through the proxy on `port`; next(n): its answer n (0: the statement timeout it shows), waited for up to 10 s. */
function healthLoop(db: string, port: number, query = ''): {child: ChildProcess; next: (n: number) => Promise<any>} {
  const via = new URL(db)
  via.port = String(port)
  via.search = query
  const child = spawn(process.execPath, ['--input-type=module', '-e', HEALTH_LOOP, via.toString(), pathToFileURL(join(ROOT, 'dist', 'src', 'store', 'db.js')).href], {cwd: ROOT})
  children.push(child)
  let out = ''
  let err = ''
  child.stdout!.on('data', (c) => (out += c))
  child.stderr!.on('data', (c) => (err += c))
  const next = async (n: number): Promise<any> => {
    child.stdin!.write('\n'.repeat(n === 0 ? 0 : 1))
    const until = Date.now() + 10_000
    while (out.split('\n').length - 1 <= n) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`no answer ${n} from the store's process within 10 s: ${out} ${err}`)
      await sleep(10)
    }
    return JSON.parse(out.split('\n')[n])
  }
  return {child, next}
}

describe('a connection that stops answering (half-open)', () => {
  it('is dropped a second past the statement timeout (503 material), and the next call opens a new connection', async () => {
    const db = await freshStore()
    const proxy = await holdingProxy(Number(new URL(db).port))
    const {child, next} = healthLoop(db, proxy.port)
    try {
      expect(await next(0)).toEqual({statement_timeout: '1s'})
      expect(await next(1)).toMatchObject({ok: true})
      proxy.hold()
      const silent = await next(2)
      expect(silent).toMatchObject({error: 'UnavailableError'})
      expect(silent.message).toMatch(/was lost \(no answer within 2 s, the statement timeout and a second: .*\) while a statement ran/)
      expect(silent.ms).toBeGreaterThanOrEqual(1900)
      expect(silent.ms).toBeLessThan(4000)
      expect(await next(3)).toMatchObject({ok: true})
    } finally {
      child.kill('SIGKILL')
      proxy.close()
    }
  })

  it('a host that answers nothing at all: one call waits for the statement timeout, one for connect_timeout, the rest fail at once; back, the next calls work', async () => {
    const db = await freshStore()
    const proxy = await holdingProxy(Number(new URL(db).port))
    const {child, next} = healthLoop(db, proxy.port, '?connect_timeout=2')
    try {
      expect(await next(0)).toEqual({statement_timeout: '1s'})
      expect(await next(1)).toMatchObject({ok: true})
      proxy.hold()
      proxy.silent = true
      expect(await next(2)).toMatchObject({error: 'UnavailableError', message: expect.stringMatching(/no answer within 2 s/)})
      const reconnect = await next(3)
      expect(reconnect).toMatchObject({error: 'UnavailableError', message: expect.stringMatching(/no answer within 2 s\b.*no new connection could be made/)})
      expect(reconnect.ms).toBeGreaterThanOrEqual(1900)
      for (let n = 4; n < 24; n++) {
        const r = await next(n)
        expect(r).toMatchObject({error: 'UnavailableError'})
        expect(r.ms).toBeLessThan(50)
      }
      proxy.silent = false
      const back = Date.now()
      let n = 24
      while ((await next(n)).ok !== true) n++
      // A background attempt started while silent takes its connect_timeout (2 s) to fail; the next one gets through.
      expect(Date.now() - back).toBeLessThan(3000)
    } finally {
      child.kill('SIGKILL')
      proxy.close()
    }
  })

  it('statement_timeout: the URL\'s wins over the opener\'s (serve: 5 s); none by default', async () => {
    const db = await freshStore()
    const show = async (url: string, options: {statementTimeoutMs?: number}) => {
      const store = openStore(url, options)
      try {
        return (await (store as unknown as {pg: {query(sql: string): Promise<{statement_timeout: string}[]>}}).pg.query('SHOW statement_timeout'))[0].statement_timeout
      } finally {
        await store.close()
      }
    }
    expect(await show(db, {statementTimeoutMs: 5000})).toBe('5s')
    expect(await show(`${db}?statement_timeout=2500`, {statementTimeoutMs: 5000})).toBe('2500ms')
    expect(await show(db, {})).toBe('0')
  })
})
