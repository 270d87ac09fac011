import {Readable} from 'node:stream'
import {pipeline} from 'node:stream/promises'
import {type MessagePort, workerData} from 'node:worker_threads'
import type Pg from 'pg'

// pg asks, as it loads, whether it runs in a Cloudflare Worker (pg/lib/stream.js): on a Node.js
// without a global `navigator` (20; 21 and later have one) by making a fetch Response, which
// loads Node's fetch (undici) on this thread: about a fifth of the CPU a connection's thread
// costs before it connects. The navigator Node.js 21 has, set before pg loads, gives pg the
// same answer (not Cloudflare) without it; pg is imported after it, not hoisted above it.
if (!('navigator' in globalThis)) {
  Object.defineProperty(globalThis, 'navigator', {configurable: true, value: {userAgent: `Node.js/${process.versions.node.split('.')[0]}`}, writable: true})
}
const pg = (await import('pg')).default

/**
 * The PostgreSQL client's thread (client.ts): it holds the connection, runs each call it is
 * posted and posts the answer back, then bumps the shared flag the caller waits on with
 * Atomics.wait. A dropped connection is replaced as client.ts describes.
 */

/**
 * What WorkerClient hands this worker: the connect timeout, TCP keepalive's first probe after
 * this long idle, how long after a failed reconnect the next is tried (all ms), and the URL's
 * statement_timeout (PostgreSQL's text, e.g. "5000" or "5s"), if it sets one.
 */
export type ClientData = {
  connectTimeoutMs: number
  keepAliveMs: number
  port: MessagePort
  retryMs: number
  signal: SharedArrayBuffer
  statementTimeout?: string
  url: string
}

/** An error PostgreSQL (or the connection) reported, as it crosses to the caller. */
export type PgErrorInfo = {code?: string; constraint?: string; detail?: string; message: string; table?: string}

/** How a call failed because its connection was lost (client.ts lostMessage). */
export type Lost = 'commit' | 'reconnect' | 'statement' | 'transaction'

/**
 * What the worker needs to know of a statement to recover from a lost connection
 * (client.ts statementFacts); `remember`: [name, value], value null: RESET; name null: RESET ALL.
 */
export type StatementFacts = {commits: boolean; remember: [null | string, null | string][]; rollback: boolean; safe: boolean}

/** A call: one statement (query, exec, copy) or the end of the connection. */
export type ClientCall =
  | {arrays?: boolean; op: 'query'; params?: readonly unknown[]; sql: string}
  | {data: Uint8Array; op: 'copy'; sql: string}
  | {op: 'close'}
  | {op: 'exec'; sql: string}

/** A call as posted: with its id (its answer carries it back) and, for a statement, its facts. */
export type ClientRequest = ClientCall & Partial<StatementFacts> & {id: number}

type Result = {rowCount: null | number; rows: unknown[]}

export type Reply = {error?: PgErrorInfo; lost?: Lost; results?: Result[]; rowCount?: null | number; rows?: unknown[]}

/** A connection: `connected` once its ready promise resolved; `broken` with why it is not usable (any more). */
type Conn = {broken: unknown; readonly client: Pg.Client; connected: boolean; ready: Promise<void>}

const data = workerData as ClientData
const {port, url} = data
const flag = new Int32Array(data.signal)
// BIGINT (int8) and COUNT(*) come back as JS numbers: the store keeps minor units and epochs
// within Number.MAX_SAFE_INTEGER (docs/money.md), as SQLite hands them out.
const types: Pg.CustomTypesConfig = {
  getTypeParser(oid, format) {
    if (oid === 20) return (v: null | string) => (v === null ? null : Number(v))
    return pg.types.getTypeParser(oid, format)
  },
}

/** The fields of a thrown value that say what it was (none for a value that is not an object). */
function fields(e: unknown): {code?: unknown; constraint?: unknown; detail?: unknown; message?: unknown; severity?: unknown; table?: unknown} {
  return typeof e === 'object' && e !== null ? e : {}
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

function info(e: unknown): PgErrorInfo {
  const f = fields(e)
  return {code: text(f.code), constraint: text(f.constraint), detail: text(f.detail), message: text(f.message) || String(e), table: text(f.table)}
}

// The session settings the caller made (name -> value), made again on every new connection.
const settings = new Map<string, string>()
// The connection; undefined until a call needs one (after a loss too).
let conn: Conn | undefined
let connectedOnce = false
// Why the connection died inside a transaction, when it did: every call fails until the caller's ROLLBACK.
let lostTransaction: PgErrorInfo | undefined
/**
 * Why no new connection could be made, while none can (the server is down): every call fails
 * at once with it instead of waiting for a connection attempt, and a new connection is tried
 * in the background `retryMs` after each failed one; the first call that finds it made uses it.
 */
let down: PgErrorInfo | undefined
let retry: NodeJS.Timeout | undefined

function open(): Conn {
  const client = new pg.Client({
    application_name: 'pricectl',
    connectionString: url,
    connectionTimeoutMillis: data.connectTimeoutMs,
    // A connection whose peer is gone while it is idle (a half-open one) fails by itself; one in use, by the query timeout.
    keepAlive: true,
    keepAliveInitialDelayMillis: data.keepAliveMs,
    types,
  })
  const c: {broken: unknown; readonly client: Pg.Client; connected: boolean} = {broken: undefined, client, connected: false}
  client.on('error', (e) => {
    c.broken = c.broken || e
  })
  client.on('end', () => {
    c.broken = c.broken || new Error('Connection terminated')
  })
  const started = Date.now()
  const ready = client
    .connect()
    .catch((e: unknown) => {
      // pg reports its connect timeout as "Connection terminated unexpectedly": say what it was.
      if (Date.now() - started < data.connectTimeoutMs - 100) throw e
      throw Object.assign(new Error('no answer within ' + data.connectTimeoutMs / 1000 + ' s'), {code: 'ETIMEDOUT'})
    })
    .then(async () => {
      if (settings.size === 0) return
      const names = [...settings.keys()]
      await client.query({text: 'SELECT ' + names.map((_, i) => 'set_config($' + (2 * i + 1) + ', $' + (2 * i + 2) + ', false)').join(', '), values: names.flatMap((n) => [n, settings.get(n)])})
    })
  ready.then(
    () => {
      c.connected = true
    },
    (e: unknown) => {
      c.broken = c.broken || e
    },
  )
  return Object.assign(c, {ready})
}

function discard(c: Conn): void {
  if (conn === c) conn = undefined
  // end() waits for the server's goodbye, which a half-open connection never sends: the socket goes too.
  c.client.end().catch(() => {})
  setTimeout(() => socketOf(c.client)?.destroy(), CLOSE_WAIT_MS).unref()
}

/** How long a connection's end may wait for the server before its socket is destroyed (ms). */
const CLOSE_WAIT_MS = 1000

function socketOf(client: Pg.Client): undefined | {destroy(): void} {
  return (client as unknown as {connection?: {stream?: {destroy(): void}}}).connection?.stream
}

/** The server is down: calls fail at once with `why` until a connection tried in the background is made. */
function goDown(why: PgErrorInfo): void {
  down = why
  tryLater()
}

function tryLater(): void {
  if (retry || conn) return
  retry = setTimeout(() => {
    retry = undefined
    if (!down || conn) return
    const c = (conn = open())
    c.ready.catch((e: unknown) => {
      discard(c)
      if (down) down = info(e)
      tryLater()
    })
  }, data.retryMs)
}

/**
 * The statement timeout in force (the caller's last SET of it, else the URL's) in ms, PostgreSQL's
 * units read ("5000", "5s", "1min"); 0 when there is none (or it is not understood).
 */
function statementTimeoutMs(value: string | undefined): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?\s*$/i.exec(value ?? '')
  if (!m) return 0
  const unit = {d: 86_400_000, h: 3_600_000, min: 60_000, ms: 1, s: 1000, us: 0.001}[(m[2] ?? 'ms').toLowerCase() as 'ms']
  return Math.ceil(Number(m[1]) * unit)
}

const QUERY_GRACE_MS = 1000

/**
 * How long a statement may go unanswered before its connection counts as dead (a half-open
 * connection, a server that stopped answering): the statement timeout and QUERY_GRACE_MS, by
 * which PostgreSQL has answered with its own cancel (57014) if it is there; none without one.
 */
function queryTimeoutMs(): number | undefined {
  const ms = statementTimeoutMs(settings.get('statement_timeout') ?? data.statementTimeout)
  return ms > 0 ? ms + QUERY_GRACE_MS : undefined
}

// Whether an error means the connection is gone (rather than the statement failed).
const GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'ENOTCONN', 'ECONNABORTED'])
function dead(e: unknown, c: Conn): boolean {
  if (c.broken) return true
  const f = fields(e)
  const code = text(f.code) || ''
  return /^(08|57P)/.test(code) || GONE.has(code) || f.severity === 'FATAL' || f.severity === 'PANIC' || /Connection terminated|not queryable/.test(text(f.message) || '') || silent(e)
}

/** Whether a statement got no answer within the query timeout: its connection is dropped, and the statement is not run again. */
function silent(e: unknown): boolean {
  return text(fields(e).message) === 'Query read timeout'
}

/** What a lost call says: pg's "Query read timeout" in words. */
function lostInfo(e: unknown): PgErrorInfo {
  if (!silent(e)) return info(e)
  return {code: 'ETIMEDOUT', message: `no answer within ${(queryTimeoutMs() ?? 0) / 1000} s, the statement timeout and a second`}
}

async function execute(client: Pg.Client, m: ClientRequest): Promise<Reply> {
  // pg's per-query read timeout (its types leave it out).
  const timeout = {query_timeout: queryTimeoutMs()}
  if (m.op === 'query') {
    const values = m.params as unknown[] | undefined
    const r = m.arrays ? await client.query(Object.assign({rowMode: 'array' as const, text: m.sql, values}, timeout)) : await client.query(Object.assign({text: m.sql, values}, timeout))
    return {rowCount: r.rowCount, rows: r.rows}
  }
  if (m.op === 'exec') {
    // Several statements (the simple protocol: no values) answer with one result each.
    const r: Pg.QueryResult | Pg.QueryResult[] = await client.query(Object.assign({text: m.sql}, timeout))
    return {results: (Array.isArray(r) ? r : [r]).map((x) => ({rowCount: x.rowCount, rows: x.rows}))}
  }
  if (m.op === 'copy') {
    const {from} = await import('pg-copy-streams')
    const stream = client.query(from(m.sql))
    await pipeline(Readable.from([Buffer.from(m.data)]), stream)
    return {rowCount: stream.rowCount}
  }
  throw new Error('unknown operation ' + m.op)
}

function done(m: ClientRequest, reply: Reply): Reply {
  for (const [name, value] of m.remember || []) {
    if (name === null) settings.clear()
    else if (value === null) settings.delete(name)
    else settings.set(name, value)
  }
  return reply
}

// Run m on a new connection: the old one died before m went out, or m is safe to run twice.
async function again(m: ClientRequest): Promise<Reply> {
  const c = (conn = open())
  try {
    await c.ready
  } catch (e) {
    discard(c)
    goDown(info(e))
    return {error: info(e), lost: 'reconnect'}
  }
  try {
    return await done(m, await execute(c.client, m))
  } catch (e) {
    if (!dead(e, c)) throw e
    discard(c)
    return {error: lostInfo(e), lost: m.safe && !silent(e) ? 'reconnect' : 'statement'}
  }
}

async function handle(m: ClientRequest): Promise<Reply> {
  if (m.op === 'close') {
    clearTimeout(retry)
    down = undefined
    const c = conn
    conn = undefined
    // A server that is gone (or a half-open connection) never answers end(): its socket is destroyed after a wait.
    if (c) await Promise.race([c.client.end().catch(() => {}), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS))])
    if (c) socketOf(c.client)?.destroy()
    return {}
  }
  if (lostTransaction) {
    if (!m.rollback) return {error: lostTransaction, lost: 'transaction'}
    lostTransaction = undefined
    return {results: [{rowCount: null, rows: []}], rowCount: null, rows: []}
  }
  if (down) {
    // The server is down: answer at once until the connection tried in the background is made
    // (one made and lost again before any call used it is tried anew).
    if (conn?.broken) discard(conn)
    if (!conn?.connected) {
      tryLater()
      if (m.rollback) return {results: [{rowCount: null, rows: []}], rowCount: null, rows: []}
      return {error: down, lost: 'reconnect'}
    }
    down = undefined
  }
  const c = conn || (conn = open())
  try {
    await c.ready
  } catch (e) {
    discard(c)
    // The first connection's own failure (a wrong URL, password, database) is the caller's to report.
    if (!connectedOnce) throw e
    goDown(info(e))
    return {error: info(e), lost: 'reconnect'}
  }
  connectedOnce = true
  const status = c.client.getTransactionStatus() // I: idle, T: in a transaction, E: in a failed one
  if (c.broken) {
    // Died before m went out (killed while idle): nothing of m ran.
    discard(c)
    if (status !== 'I') {
      if (m.rollback) return {results: [{rowCount: null, rows: []}], rowCount: null, rows: []}
      lostTransaction = info(c.broken)
      return {error: lostTransaction, lost: 'transaction'}
    }
    return again(m)
  }
  try {
    return await done(m, await execute(c.client, m))
  } catch (e) {
    if (!dead(e, c)) throw e
    discard(c)
    if (status !== 'I') {
      if (m.rollback) return {results: [{rowCount: null, rows: []}], rowCount: null, rows: []}
      lostTransaction = lostInfo(e)
      return {error: lostTransaction, lost: m.commits ? 'commit' : 'transaction'}
    }
    if (m.safe && !silent(e)) return again(m)
    return {error: lostInfo(e), lost: 'statement'}
  }
}

// The call being answered: its id (the caller's) while it waits, else undefined.
let waiting: number | undefined
const answer = (reply: Reply) => {
  port.postMessage({...reply, id: waiting})
  waiting = undefined
  // A count, not a 0/1 flag: every answer moves it, so a caller never takes an earlier answer's signal for its own.
  Atomics.add(flag, 0, 1)
  Atomics.notify(flag, 0)
}
// Whatever escapes (a driver bug) answers the waiting caller instead of leaving it blocked.
process.on('uncaughtException', (e) => {
  if (waiting !== undefined) answer({error: info(e)})
})
process.on('unhandledRejection', (e) => {
  if (waiting !== undefined) answer({error: info(e)})
})
// The worker answers each message itself (answer()); nothing waits for the handler.
port.on('message', (m: ClientRequest) => void onMessage(m))
async function onMessage(m: ClientRequest): Promise<void> {
  waiting = m.id
  let reply: Reply
  try {
    reply = await handle(m)
  } catch (e) {
    reply = {error: info(e)}
  }
  if (waiting !== m.id) return // answered already (uncaughtException), or a later call waits now
  answer(reply)
  if (m.op === 'close') port.close()
}
