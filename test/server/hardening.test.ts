import Database from 'better-sqlite3'
import net from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildServer, DEFAULT_TIMEOUTS, type Server, type ServerOptions} from '../../src/server/app.js'
import {capMessage, MAX_MESSAGE_CHARS} from '../../src/server/errors.js'
import {parseSeconds} from '../../src/server/serve.js'
import {DEFAULT_WRITE_TIMEOUT_MS, WriteQueue} from '../../src/server/write-queue.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {dump} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * docs/hardening.md "The HTTP server": what `pricectl serve` guarantees when another
 * process holds the write lock, and against hostile or broken requests (bad bytes, deep
 * JSON, slow or oversized requests, unknown content types, huge error messages).
 */

type Reply = {headers: Headers; json: any; ms: number; status: number; text: string}

async function call(base: string, method: string, path: string, options: {body?: string | Uint8Array | unknown; headers?: Record<string, string>; key?: string} = {}): Promise<Reply> {
  const headers: Record<string, string> = {accept: 'application/json', ...options.headers}
  if (options.key) headers.authorization = `Bearer ${options.key}`
  let body: string | Uint8Array | undefined
  if (options.body !== undefined) {
    body = typeof options.body === 'string' || options.body instanceof Uint8Array ? options.body : JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const t0 = performance.now()
  const r = await fetch(base + path, {body, headers, method})
  const text = await r.text()
  const ms = performance.now() - t0
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return {headers: r.headers, json, ms, status: r.status, text}
}

/** Raw bytes on a socket (requests fetch will not send); resolves with what came back when the server closes. */
function raw(base: string, chunks: (Buffer | string)[], o: {gapMs?: number; keepSending?: string} = {}): Promise<{closedAfterMs: number; text: string}> {
  const port = Number(new URL(base).port)
  return new Promise((resolve) => {
    const t0 = performance.now()
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    let timer: NodeJS.Timeout | undefined
    socket.on('data', (d) => (text += d))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      resolve({closedAfterMs: performance.now() - t0, text})
    })
    socket.on('connect', () => {
      if (!o.gapMs) {
        for (const c of chunks) socket.write(c)
        return
      }
      // Trickle: one chunk per gap, then `keepSending` once per gap for ever.
      let i = 0
      timer = setInterval(() => {
        if (socket.destroyed) return
        if (i < chunks.length) socket.write(chunks[i++])
        else if (o.keepSending) socket.write(o.keepSending)
      }, o.gapMs)
    })
  })
}

function bodyOf(text: string): any {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))
}

async function newKey(db: string): Promise<string> {
  const r = await run(db, ['keys', 'create', '--name', 'hardening', '--json'])
  if (r.code !== 0) throw new Error(r.stdout + r.stderr)
  return r.json.api_key
}

async function start(options: ServerOptions = {}) {
  const db = tempStore()
  await createProducts(db, CATALOG)
  const key = await newKey(db)
  const logs: string[] = []
  const app: Server = buildServer({db, log: (t) => logs.push(t), ...options})
  const base = await app.listen({host: '127.0.0.1', port: 0})
  return {app, base, db, key, logs}
}

const price = (user: string) => ({country: 'DE', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: user})

describe('serve: a write waiting for the store lock never delays other requests (#13.3)', () => {
  const BUDGET_MS = 1500
  let s: Awaited<ReturnType<typeof start>>
  let holder: Database.Database
  beforeAll(async () => {
    s = await start({writeTimeoutMs: BUDGET_MS})
    holder = new Database(s.db)
    holder.pragma('busy_timeout = 0')
  })
  afterAll(async () => {
    if (holder.inTransaction) holder.exec('ROLLBACK')
    holder.close()
    await s.app.close()
  })

  it('while another connection holds the write lock: health, reads, 401s and locked users answer at once; writes get 503 + Retry-After after their budget', async () => {
    const locked = await call(s.base, 'POST', '/v1/prices', {body: price('already-locked'), key: s.key})
    expect(locked.status).toBe(200)
    const before = dump(s.db)

    holder.exec('BEGIN IMMEDIATE')
    try {
      const t0 = performance.now()
      // Three writes (new users) and a product update wait for the lock...
      const writes = [
        call(s.base, 'POST', '/v1/prices', {body: price('waiting-1'), key: s.key}),
        call(s.base, 'POST', '/v1/prices', {body: price('waiting-2'), key: s.key}),
        call(s.base, 'POST', '/v1/prices', {body: price('waiting-3'), key: s.key}),
        call(s.base, 'POST', '/v1/products/pro_yearly', {body: {base_px: 111}, key: s.key}),
      ]
      await new Promise((r) => setTimeout(r, 150))
      // ...and meanwhile every other kind of request is served at once.
      const timings: Record<string, number[]> = {auth401: [], healthz: [], lockedPrice: [], product: []}
      for (let round = 0; round < 4; round++) {
        const [h, p, a, l] = await Promise.all([
          call(s.base, 'GET', '/healthz'),
          call(s.base, 'GET', '/v1/products/pro_monthly', {key: s.key}),
          call(s.base, 'POST', '/v1/prices', {body: price('x')}),
          call(s.base, 'POST', '/v1/prices', {body: price('already-locked'), key: s.key}),
        ])
        expect([h.status, p.status, a.status, l.status]).toEqual([200, 200, 401, 200])
        expect(l.json).toEqual(locked.json)
        timings.healthz.push(h.ms)
        timings.product.push(p.ms)
        timings.auth401.push(a.ms)
        timings.lockedPrice.push(l.ms)
      }
      // The design target is < 50 ms; the slack is for a loaded CI machine.
      for (const [what, ms] of Object.entries(timings)) expect(Math.max(...ms), `${what}: ${ms.map((m) => m.toFixed(0)).join(', ')} ms`).toBeLessThan(250)

      const answered = await Promise.all(writes.map(async (w) => ({...(await w), at: performance.now() - t0})))
      for (const r of answered) {
        expect(r.status).toBe(503)
        expect(r.headers.get('retry-after')).toBe('1')
        expect(r.json).toEqual({message: expect.stringContaining('write budget (serve --write-timeout)'), success: false})
        // Each write waited its own budget, not the sum of the ones before it.
        expect(r.at).toBeGreaterThanOrEqual(BUDGET_MS - 50)
        expect(r.at).toBeLessThan(BUDGET_MS + 1000)
      }
      expect(dump(s.db)).toEqual(before)
    } finally {
      holder.exec('ROLLBACK')
    }
  })

  it('writes waiting for the lock go through once it is released', async () => {
    holder.exec('BEGIN IMMEDIATE')
    const writes = ['after-1', 'after-2', 'after-3'].map((u) => call(s.base, 'POST', '/v1/prices', {body: price(u), key: s.key}))
    const product = call(s.base, 'POST', '/v1/products/pro_yearly', {body: {base_px: 112}, key: s.key})
    await new Promise((r) => setTimeout(r, 300))
    holder.exec('COMMIT')
    for (const r of await Promise.all(writes)) {
      expect(r.status).toBe(200)
      expect(r.json.products.pro_monthly.integrations.gateway_a.amount).toBe(899)
    }
    expect((await product).status).toBe(200)
    expect(s.app.pricectl.writes.busyAttempts).toBeGreaterThan(0)
    const cli = await run(s.db, ['price', '--user-id', 'after-2', '--product', 'pro_monthly', '--integration', 'gateway_a', '--country', 'DE', '--json'])
    expect(cli.json.products.pro_monthly.price).toBe(8.99)
    expect((await run(s.db, ['products', 'get', 'pro_yearly', '--json'])).json.base_px).toBe(112)
  })

  it('the write queue serves writes first come, first served, and expires each at its own deadline', async () => {
    const busy = Object.assign(new Error('database is locked'), {code: 'SQLITE_BUSY'})
    let locked = true
    const order: number[] = []
    const q = new WriteQueue(2000)
    const attempt = (i: number) => () => {
      if (locked) throw busy
      order.push(i)
      return i
    }
    const first = [1, 2, 3].map((i) => q.run(attempt(i)))
    await new Promise((r) => setTimeout(r, 40))
    locked = false
    // A write arriving now waits behind the ones already waiting.
    const late = q.run(attempt(4))
    expect(await Promise.all([...first, late])).toEqual([1, 2, 3, 4])
    expect(order).toEqual([1, 2, 3, 4])

    locked = true
    const short = new WriteQueue(200)
    const t0 = performance.now()
    const expired = await Promise.allSettled([short.run(attempt(5)), short.run(attempt(6))])
    expect(performance.now() - t0).toBeLessThan(600)
    for (const e of expired) expect(e).toMatchObject({reason: {headers: {'retry-after': '1'}, status: 503}, status: 'rejected'})
    // Other errors pass straight through; an uncontended write runs in the caller's turn.
    locked = false
    await expect(new WriteQueue().run(() => {
      throw new Error('boom')
    })).rejects.toThrow('boom')
    expect(new WriteQueue().budgetMs).toBe(DEFAULT_WRITE_TIMEOUT_MS)
  })

  it('group commit: writes that arrive together share one attempt, each with its own outcome and its own deadline', async () => {
    const busy = Object.assign(new Error('database is locked'), {code: 'SQLITE_BUSY'})
    let locked = false
    const runs: number[][] = []
    const group = {
      run: (items: readonly number[]) => {
        if (locked) throw busy
        runs.push([...items])
        return items.map((i) => (i === 3 ? {error: new Error(`item ${i} failed`)} : {value: i * 10}))
      },
    }
    const q = new WriteQueue(2000)
    // Arriving in one turn of the event loop: one attempt, answered item by item.
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => q.join(group, i)))
    expect(runs).toEqual([[1, 2, 3, 4]])
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([10, 20, 'item 3 failed', 40])

    // Another write queued between them keeps the arrival order: no joining a group behind it.
    runs.length = 0
    const order: string[] = []
    const a = q.join(group, 5)
    const b = q.run(() => order.push('product'))
    const c = q.join(group, 6)
    await Promise.all([a, b, c])
    expect(runs).toEqual([[5], [6]])

    // While the store is locked, each member gets its 503 at its own deadline.
    locked = true
    const short = new WriteQueue(300)
    const t0 = performance.now()
    const first = short.join(group, 7).catch((error) => ({at: performance.now() - t0, error}))
    await new Promise((r) => setTimeout(r, 150))
    // Joins the group still waiting? No: it started (and waits for the lock); this one opens another behind it.
    const second = short.join(group, 8).catch((error) => ({at: performance.now() - t0, error}))
    const [e1, e2] = (await Promise.all([first, second])) as {at: number; error: {status: number}}[]
    expect(e1.error.status).toBe(503)
    expect(e2.error.status).toBe(503)
    expect(e1.at).toBeLessThan(300 + 120)
    expect(e2.at).toBeGreaterThanOrEqual(150 + 300 - 20)
    expect(runs).toEqual([[5], [6]])
  })

  it('parallel groups (PostgreSQL lock writers) run side by side up to the queue\'s slots; any other write runs alone, after those begun before it', async () => {
    const settle = () => new Promise((r) => setTimeout(r, 10))
    const open: (() => void)[] = []
    const log: string[] = []
    let running = 0
    let busyOnce = false
    const group = {
      parallel: true,
      run: async (items: readonly number[]) => {
        if (busyOnce) {
          busyOnce = false
          throw Object.assign(new Error('could not obtain lock'), {code: '55P03'})
        }
        running++
        log.push(`start ${items.join(',')}`)
        await new Promise<void>((r) => open.push(r))
        running--
        log.push(`end ${items.join(',')}`)
        return items.map((i) => ({value: i * 10}))
      },
    }
    const q = new WriteQueue(2000, 2)
    const a = q.join(group, 1)
    await settle()
    const b = q.join(group, 2)
    await settle()
    // Both slots taken: the next group waits for one, and collects what arrives meanwhile.
    const c = q.join(group, 3)
    const c2 = q.join(group, 4)
    const write = q.run(() => {
      log.push(`write with ${running} running`)
      return 'written'
    })
    // Behind the write: not joined to the group ahead of it.
    const d = q.join(group, 5)
    await settle()
    expect(log).toEqual(['start 1', 'start 2'])
    open.shift()!()
    await settle()
    expect(log).toEqual(['start 1', 'start 2', 'end 1', 'start 3,4'])
    open.shift()!()
    open.shift()!()
    await settle()
    open.shift()!()
    expect(await Promise.all([a, b, c, c2, write, d])).toEqual([10, 20, 30, 40, 'written', 50])
    expect(log).toEqual(['start 1', 'start 2', 'end 1', 'start 3,4', 'end 2', 'end 3,4', 'write with 0 running', 'start 5', 'end 5'])
    expect(q.mostAside).toBe(2)

    // A busy store tries a parallel group again (its own backoff); one slot (SQLite) runs one group at a time.
    busyOnce = true
    const one = new WriteQueue(2000, 1)
    const e = one.join(group, 6)
    await settle()
    const f = one.join(group, 7)
    await settle()
    expect(running).toBe(1)
    open.shift()!()
    await settle()
    open.shift()!()
    expect(await Promise.all([e, f])).toEqual([60, 70])
    expect(one.busyAttempts).toBe(1)
    expect(one.mostAside).toBe(0)
    const two = new WriteQueue(2000, 2)
    busyOnce = true
    const g = two.join(group, 8)
    await settle()
    await settle()
    open.shift()!()
    expect(await g).toBe(80)
    expect(two.busyAttempts).toBe(1)

    // A group starts beside running ones at once while a slot is free: no timer holds it back
    // for the running ones to end. With every slot taken, the next waits for one.
    log.length = 0
    const three = new WriteQueue(2000, 2)
    const turn = async () => await new Promise((r) => setImmediate(r))
    const h = three.join(group, 9)
    await turn()
    await turn()
    const i = three.join(group, 10)
    await turn()
    await turn()
    expect(log).toEqual(['start 9', 'start 10'])
    expect(three.mostAside).toBe(2)
    const j = three.join(group, 11)
    await turn()
    await turn()
    expect(log).toEqual(['start 9', 'start 10'])
    open.shift()!()
    expect(await h).toBe(90)
    while (log.length < 4) await turn()
    expect(log).toEqual(['start 9', 'start 10', 'end 9', 'start 11'])
    open.shift()!()
    open.shift()!()
    expect(await Promise.all([i, j])).toEqual([100, 110])
  })

  it.each([1, 2])('a group started in a poll phase (a database answer, %i slot(s)) collects the requests the next poll phase reads', async (slots) => {
    // A server's group starts when the group before it ends, from the database's answer, read
    // in a poll phase; the answers it sends bring the next requests, read in the next one.
    const runs: number[][] = []
    const group = {parallel: true, run: (items: readonly number[]) => (runs.push([...items]), items.map((i) => ({value: i * 10})))}
    const q = new WriteQueue(2000, slots)
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const answers: Promise<number>[] = []
    try {
      await new Promise<void>((resolve) => {
        server.on('connection', (socket) =>
          socket.once('data', () => {
            answers.push(q.join(group, 1))
            // Readable for the client from now on: its data event is the next poll phase's.
            socket.end('next')
          }),
        )
        const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1', () => client.write('first'))
        client.once('data', () => {
          answers.push(q.join(group, 2))
          client.destroy()
          resolve()
        })
      })
      expect(await Promise.all(answers)).toEqual([10, 20])
      expect(runs).toEqual([[1, 2]])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('--write-timeout reads seconds', () => {
    expect(parseSeconds('5', '--write-timeout')).toBe(5)
    expect(parseSeconds('0.25', '--write-timeout')).toBe(0.25)
    expect(() => parseSeconds('5s', '--write-timeout')).toThrow(/--write-timeout: expected seconds such as 5 or 0.5, got "5s"/)
    expect(() => parseSeconds('601', '--write-timeout')).toThrow(/600 s ceiling/)
  })
})

describe('serve: hostile and broken requests', () => {
  let s: Awaited<ReturnType<typeof start>>
  beforeAll(async () => {
    s = await start()
  })
  afterAll(async () => {
    await s.app.close()
  })

  it('a body that is not UTF-8 is 400 and writes nothing (#13.5)', async () => {
    const before = dump(s.db)
    const bytes = (prefix: string, suffix: string) => new Uint8Array(Buffer.concat([Buffer.from(prefix), Buffer.from([0xe9]), Buffer.from(suffix)]))
    const cases: [string, Uint8Array][] = [
      ['/v1/prices', bytes('{"user_id":"caf', '","country":"US","products":["pro_monthly"]}')],
      ['/v1/products', bytes('{"api_id":"latin","name":"Caf', '","base_px":5,"interval":"month","interval_count":1}')],
      ['/v1/charges', bytes('{"amount":1,"created":1793000000,"currency":"USD","origin":"gateway_a","origin_id":"c1","product":"lifetime","status":"succeeded","user_id":"caf', '"}')],
    ]
    for (const [path, body] of cases) {
      const r = await call(s.base, 'POST', path, {body, key: s.key})
      expect(r.status, path).toBe(400)
      expect(r.json).toEqual({message: expect.stringMatching(/^body: not UTF-8 \(byte 0xe9 at offset \d+\); send the JSON body encoded as UTF-8$/), success: false})
    }
    // A charset other than UTF-8 is refused as a media type; UTF-8 and a byte-order mark are fine.
    const latin = await call(s.base, 'POST', '/v1/prices', {body: price('charset'), headers: {'content-type': 'application/json; charset=iso-8859-1'}, key: s.key})
    expect(latin.status).toBe(415)
    expect(latin.json).toEqual({message: expect.stringContaining('UTF-8'), success: false})
    expect(dump(s.db)).toEqual(before)
    const bom = await call(s.base, 'POST', '/v1/prices', {body: `\uFEFF${JSON.stringify(price('café'))}`, headers: {'content-type': 'application/json; charset=UTF-8'}, key: s.key})
    expect(bom.status).toBe(200)
    expect(bom.json.user_id).toBe('café')
  })

  it('JSON nested deeper than 64 levels is 400, never a stack overflow (#13.6)', async () => {
    const before = dump(s.db)
    for (const depth of [65, 5000, 200_000]) {
      const deep = `{"user_id":"deep","products":["pro_monthly"],"features":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`
      const r = await call(s.base, 'POST', '/v1/prices', {body: deep, key: s.key})
      expect(r.status, `depth ${depth}`).toBe(400)
      expect(r.json).toEqual({message: 'body: JSON nested more than 64 levels deep (line 1); no pricectl input needs more than a few levels', success: false})
    }
    expect(dump(s.db)).toEqual(before)
    // Brackets inside strings do not count; 64 levels are parsed (and then validated).
    const text = await call(s.base, 'POST', '/v1/prices', {body: {features: {note: '['.repeat(1000)}, products: ['pro_monthly'], user_id: 'brackets'}, key: s.key})
    expect(text.status).toBe(200)
    const at64 = await call(s.base, 'POST', '/v1/prices', {body: `{"user_id":"d64","products":["pro_monthly"],"features":{"a":${'['.repeat(62)}${']'.repeat(62)}}}`, key: s.key})
    expect(at64.status).toBe(400)
    expect(at64.json.message).toMatch(/^invalid price request: features/)
  })

  it('every error, including node:http and fastify ones, is {success: false, message} (#13.9)', async () => {
    // Headers over node's 16 KB limit.
    const big = await raw(s.base, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`])
    expect(big.text).toMatch(/^HTTP\/1\.1 431 /)
    expect(bodyOf(big.text)).toEqual({message: expect.stringContaining('headers are over 16384 bytes'), success: false})
    // A malformed request line, a bad HTTP version.
    for (const line of ['GARBAGE\r\n\r\n', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n', `GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n`]) {
      const bad = await raw(s.base, [line])
      expect(bad.text, line).toMatch(/^HTTP\/1\.1 400 /)
      expect(bodyOf(bad.text)).toEqual({message: expect.stringMatching(/^malformed HTTP request \(HPE_\w+: .+\): send an HTTP\/1\.1 request$/), success: false})
    }
    // Unknown route, text/plain body (415 as documented, not 400), no content type, too large.
    const notFound = await call(s.base, 'GET', '/nothing')
    expect([notFound.status, Object.keys(notFound.json).sort()]).toEqual([404, ['message', 'success']])
    const plain = await call(s.base, 'POST', '/v1/prices', {body: JSON.stringify(price('plain')), headers: {'content-type': 'text/plain'}, key: s.key})
    expect(plain.status).toBe(415)
    expect(plain.json).toEqual({message: 'Unsupported Media Type (Content-Type "text/plain"): send the body as JSON with "Content-Type: application/json"', success: false})
    const none = await raw(s.base, [`POST /v1/prices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`])
    expect(none.text).toMatch(/^HTTP\/1\.1 415 /)
    expect(bodyOf(none.text)).toEqual({message: expect.stringContaining('a body without Content-Type'), success: false})
    const tooLarge = await call(s.base, 'POST', '/v1/prices', {body: `{"user_id":"${'x'.repeat(1024 * 1024)}"}`, key: s.key})
    expect([tooLarge.status, Object.keys(tooLarge.json).sort()]).toEqual([413, ['message', 'success']])
    // node:http's errors are logged like any request.
    s.app.pricectl.accessLog.flush()
    expect(s.logs.join('')).toMatch(/ 127\.0\.0\.1 "- -" 431 \d+ /)
  })

  it('requests node:http or the router refuse before a route runs get the error body, a status and an access-log line (#32.18)', async () => {
    const cases: {close: boolean; log: RegExp; message: RegExp; request: string; status: number}[] = [
      // HTTP/1.1 without Host.
      {close: true, log: /"GET \/healthz" 400 \d+ /, message: /Host header/, request: 'GET /healthz HTTP/1.1\r\n\r\n', status: 400},
      // An expectation the server does not meet.
      {close: true, log: /"GET \/healthz" 417 \d+ /, message: /Expect: foo/, request: 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n', status: 417},
      // A path segment over 4,096 bytes.
      {close: false, log: /"GET \/v1\/products\/a{5000}" 414 \d+ /, message: /over 4096/, request: `GET /v1/products/${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, status: 414},
      // CONNECT: this is not a proxy.
      {close: true, log: / 127\.0\.0\.1 "CONNECT example\.com:443" 405 \d+ /, message: /CONNECT/, request: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', status: 405},
      // A malformed percent-encoded path.
      {close: false, log: /"GET \/v1\/products\/%E0%A4%A" 400 \d+ /, message: /percent/, request: 'GET /v1/products/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', status: 400},
    ]
    for (const c of cases) {
      s.logs.length = 0
      const r = await raw(s.base, [c.request])
      expect(r.text, c.request.slice(0, 40)).toMatch(new RegExp(`^HTTP/1\\.1 ${c.status} `))
      const head = r.text.slice(0, r.text.indexOf('\r\n\r\n')).toLowerCase()
      expect(head).toContain('content-type: application/json')
      if (c.close) expect(head).toContain('connection: close')
      expect(bodyOf(r.text)).toEqual({message: expect.stringMatching(c.message), success: false})
      await new Promise((resolve) => setImmediate(resolve))
      s.app.pricectl.accessLog.flush()
      expect(s.logs.join(''), c.request.slice(0, 40)).toMatch(c.log)
    }
    // The server still answers.
    expect((await call(s.base, 'GET', '/healthz')).status).toBe(200)
  })

  it('a DELETE body is ignored, as documented: any type, any content, and the connection stays usable (#32.21)', async () => {
    const path = '/v1/subscriptions/del-body/gateway_a/sub_x'
    const bodies: [string | undefined, string][] = [
      ['application/json', '{"status": "canceled"}'],
      ['application/json', '{not json'],
      ['text/plain', 'please delete'],
      [undefined, 'no type at all'],
      ['application/json; charset=iso-8859-1', '{}'],
    ]
    for (const [type, payload] of bodies) {
      const r = await s.app.inject({headers: {authorization: `Bearer ${s.key}`, ...(type ? {'content-type': type} : {})}, method: 'DELETE', payload, url: path})
      expect(r.statusCode, `${type}: ${payload}`).toBe(202)
      expect(r.json()).toMatchObject({record: null, success: true})
    }
    // Over a real connection: the unread body is discarded, the next request on the connection is answered.
    const del = await call(s.base, 'DELETE', path, {body: 'x'.repeat(100_000), headers: {'content-type': 'text/plain'}, key: s.key})
    expect(del.status).toBe(202)
    expect((await call(s.base, 'GET', '/healthz')).status).toBe(200)
    // The key is still checked first.
    expect((await s.app.inject({method: 'DELETE', payload: '{}', url: path})).statusCode).toBe(401)
  })

  it('error messages are capped: 60,000 unknown keys get a short answer (#13.9)', async () => {
    const body: Record<string, unknown> = {products: ['pro_monthly'], user_id: 'many-keys'}
    for (let i = 0; i < 60_000; i++) body[`k${i}`] = 1
    const r = await call(s.base, 'POST', '/v1/prices', {body, key: s.key})
    expect(r.status).toBe(400)
    expect(r.json).toEqual({message: 'invalid price request: Unrecognized keys: "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9" and 59,990 more', success: false})
    // The same for the spec's product body (its own wording around the list).
    const product: Record<string, unknown> = {api_id: 'p', base_px: 1, interval: 'month', interval_count: 1, name: 'P'}
    for (let i = 0; i < 20; i++) product[`x${i}`] = 1
    const p = await call(s.base, 'POST', '/v1/products', {body: product, key: s.key})
    expect(p.status).toBe(400)
    expect(p.json.message).toContain('"x9" and 10 more')
    // Any other long message: cut at 1,000 characters, saying how long it was.
    const unknownUser = await call(s.base, 'GET', `/v1/users/${'u'.repeat(4000)}`, {key: s.key})
    expect(unknownUser.status).toBe(400)
    expect(unknownUser.text.length).toBeLessThan(2 * MAX_MESSAGE_CHARS + 200)
    expect(unknownUser.json.message).toMatch(/\.\.\. \(\d,\d{3} characters in all\)$/)
    const notFound = await call(s.base, 'GET', `/v1/${'n'.repeat(3000)}`)
    expect(notFound.status).toBe(404)
    expect(notFound.json.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS + 40)
    expect(capMessage('short')).toBe('short')
    expect(capMessage('x'.repeat(5000))).toBe(`${'x'.repeat(1000)}... (5,000 characters in all)`)
  })
})

describe('serve: the documented timeouts are the server\'s (#13.8)', () => {
  it('buildServer creates node:http with docs/serve.md\'s figures', async () => {
    const db = tempStore()
    const app = buildServer({db, log: () => {}})
    try {
      expect(DEFAULT_TIMEOUTS).toEqual({checkMs: 1000, headersMs: 10_000, keepAliveMs: 72_000, requestMs: 30_000})
      expect(app.server.requestTimeout).toBe(30_000)
      expect(app.server.headersTimeout).toBe(10_000)
      expect(app.server.keepAliveTimeout).toBe(72_000)
      // Checked every second, not node's 30 s.
      expect((app.server as unknown as {connectionsCheckingInterval: number}).connectionsCheckingInterval).toBe(1000)
    } finally {
      await app.close()
    }
  })

  it('a body still arriving after the request timeout is dropped with 408 and the error body; slow headers too', async () => {
    // Short timeouts checked often (the defaults' 1 s check is asserted above): the same path in a fraction of the time.
    const t = {checkMs: 100, headersMs: 300, requestMs: 600}
    const s = await start({timeouts: t})
    try {
      const body = JSON.stringify(price('slow'))
      const head = `POST /v1/prices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
      // Headers at once, then the body a byte every 50 ms (it would take seconds).
      const slowBody = await raw(s.base, [head, ...body.split('')], {gapMs: 50})
      expect(slowBody.text).toMatch(/^HTTP\/1\.1 408 /)
      expect(bodyOf(slowBody.text)).toEqual({message: expect.stringContaining('the whole request within 0.6 s'), success: false})
      expect(slowBody.closedAfterMs).toBeGreaterThanOrEqual(t.requestMs - 100)
      expect(slowBody.closedAfterMs).toBeLessThan(t.requestMs + t.checkMs + 800)
      // Headers one line every 50 ms, never finished.
      const slowHeaders = await raw(s.base, ['GET /healthz HTTP/1.1\r\n', 'Host: x\r\n'], {gapMs: 50, keepSending: 'X-Slow: 1\r\n'})
      expect(slowHeaders.text).toMatch(/^HTTP\/1\.1 408 /)
      expect(slowHeaders.closedAfterMs).toBeLessThan(t.headersMs + t.checkMs + 800)
      // A request sent at once is unaffected.
      expect((await call(s.base, 'POST', '/v1/prices', {body, key: s.key})).status).toBe(200)
      expect(dump(s.db).tables.locks).toHaveLength(1)
    } finally {
      await s.app.close()
    }
  })

  it('a request sent at once that the server had no turn to read (event loop busy) gets 503 + Retry-After "the server is busy", not 408 (#32.22)', async () => {
    const t = {checkMs: 100, headersMs: 300, requestMs: 600}
    const s = await start({timeouts: t})
    try {
      const accepted = new Promise<void>((resolve) => s.app.server.once('connection', () => resolve()))
      const socket = net.connect(Number(new URL(s.base).port), '127.0.0.1')
      let text = ''
      socket.on('data', (d) => (text += d))
      socket.on('error', () => {})
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
      await Promise.all([accepted, new Promise((resolve) => socket.once('connect', resolve))])
      // The whole request at once; then the event loop is held 1.5 s (as by thousands of other
      // requests under saturation), past the 0.3 s headers timeout, before the server reads it.
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
      const until = performance.now() + 1500
      while (performance.now() < until) {
        // busy
      }
      await closed
      expect(text).toMatch(/^HTTP\/1\.1 503 /)
      const head = text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase()
      expect(head).toContain('retry-after: 1')
      expect(head).toContain('connection: close')
      expect(bodyOf(text)).toEqual({message: expect.stringMatching(/^the server is busy .* did not read the request in time: send it again after Retry-After$/), success: false})
      await new Promise((resolve) => setImmediate(resolve))
      s.app.pricectl.accessLog.flush()
      expect(s.logs.join('')).toMatch(/ 127\.0\.0\.1 "- -" 503 \d+ /)
      // Once the loop is free again a client that pauses still gets 408.
      await new Promise((resolve) => setTimeout(resolve, 1200))
      const paused = await raw(s.base, ['GET /healthz HTTP/1.1\r\n'])
      expect(paused.text).toMatch(/^HTTP\/1\.1 408 /)
    } finally {
      await s.app.close()
    }
  })
})
