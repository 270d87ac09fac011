import {createRequire} from 'node:module'
import {MessageChannel, type MessagePort, receiveMessageOnPort, Worker} from 'node:worker_threads'

import {UnavailableError} from '../../errors.js'
import {redactUrl} from '../url.js'

const require = createRequire(import.meta.url)

/**
 * A synchronous PostgreSQL client. The storage port is synchronous (../port.ts), and `pg`
 * is not: one worker thread holds the connection, and each call posts its request to the
 * worker and blocks this thread on Atomics.wait until the worker has the answer (then read
 * with receiveMessageOnPort). One round trip per call, no promise on the caller's side.
 *
 * The worker's code is a string evaluated by the worker (eval: true), not a file beside
 * this one: the same code runs from the built dist/ and from the TypeScript sources under
 * vitest, and no loader has to find a .js next to a .ts. It loads `pg` (and
 * `pg-copy-streams` for COPY) from the paths this module resolves.
 *
 * A connection that drops (server restart, pg_terminate_backend) is replaced by the next
 * call (docs/postgres.md#connections-and-reconnecting): outside a transaction a call is run
 * again once on a new connection when that is safe (the old one died before the statement
 * went out, or the statement only reads, or opens a transaction without committing it);
 * inside a transaction the call fails with an UnavailableError (exit 1, HTTP 503), as does
 * every later call of that transaction until its ROLLBACK. Session settings the caller made
 * (SET, set_config(..., false)) are made again on the new connection.
 */

/** An error PostgreSQL (or the connection) reported, with its SQLSTATE code when there is one. */
export class PgError extends Error {
  readonly code?: string
  readonly constraint?: string
  readonly detail?: string
  readonly table?: string
  constructor(info: PgErrorInfo) {
    super(info.message)
    this.name = 'PgError'
    this.code = info.code
    this.constraint = info.constraint
    this.detail = info.detail
    this.table = info.table
  }
}

type PgErrorInfo = {code?: string; constraint?: string; detail?: string; message: string; table?: string}

/** How a call failed because its connection was lost (see lostMessage). */
type Lost = 'commit' | 'reconnect' | 'statement' | 'transaction'

type Reply = {error?: PgErrorInfo; lost?: Lost; results?: {rowCount: null | number; rows: unknown[]}[]; rowCount?: null | number; rows?: unknown[]}

export type Row = Record<string, unknown>

/** The synchronous client the PostgreSQL adapter runs on. */
export interface PgSync {
  /** One statement with $1.. parameters; its rows (objects by column name). */
  query<R = Row>(sql: string, params?: readonly unknown[]): R[]
  /** One statement with $1.. parameters; its rows as arrays of values, in column order. */
  queryArrays<R extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): R[]
  /** One statement with parameters; how many rows it changed (or returned). */
  run(sql: string, params?: readonly unknown[]): number
  /** Statements without parameters (`;`-separated, the simple protocol); the rows of each. */
  exec(sql: string): Row[][]
  /** `COPY ... FROM STDIN` fed with `data` (text or CSV as the statement says); how many rows it copied. */
  copyFrom(sql: string, data: Buffer | string): number
  /** End the connection and the worker. Safe to call twice. */
  close(): void
  readonly closed: boolean
}

const WORKER_SOURCE = String.raw`
const {workerData} = require('node:worker_threads')
const {pipeline} = require('node:stream/promises')
const {Readable} = require('node:stream')
const pg = require(workerData.pgPath)
const {port, url} = workerData
const flag = new Int32Array(workerData.signal)
// BIGINT (int8) and COUNT(*) come back as JS numbers: the store keeps minor units and epochs
// within Number.MAX_SAFE_INTEGER (docs/money.md), as SQLite hands them out.
const types = {
  getTypeParser(oid, format) {
    if (oid === 20) return (v) => (v === null ? null : Number(v))
    return pg.types.getTypeParser(oid, format)
  },
}
const info = (e) => ({code: e.code, constraint: e.constraint, detail: e.detail, message: e.message || String(e), table: e.table})

// The session settings the caller made (name -> value), made again on every new connection.
const settings = new Map()
// The connection: {client, ready, broken}; undefined until a call needs one (after a loss too).
let conn
let connectedOnce = false
// Why the connection died inside a transaction, when it did: every call fails until the caller's ROLLBACK.
let lostTransaction

function open() {
  const client = new pg.Client({application_name: 'pricectl', connectionString: url, connectionTimeoutMillis: workerData.connectTimeoutMs, types})
  const c = {broken: undefined, client}
  client.on('error', (e) => { c.broken = c.broken || e })
  client.on('end', () => { c.broken = c.broken || new Error('Connection terminated') })
  const started = Date.now()
  c.ready = client.connect().catch((e) => {
    // pg reports its connect timeout as "Connection terminated unexpectedly": say what it was.
    if (Date.now() - started < workerData.connectTimeoutMs - 100) throw e
    throw Object.assign(new Error('no answer within ' + workerData.connectTimeoutMs / 1000 + ' s'), {code: 'ETIMEDOUT'})
  }).then(async () => {
    if (settings.size === 0) return
    const names = [...settings.keys()]
    await client.query({text: 'SELECT ' + names.map((_, i) => 'set_config($' + (2 * i + 1) + ', $' + (2 * i + 2) + ', false)').join(', '), values: names.flatMap((n) => [n, settings.get(n)])})
  })
  c.ready.catch((e) => { c.broken = c.broken || e })
  return c
}

function discard(c) {
  if (conn === c) conn = undefined
  c.client.end().catch(() => {})
}

// Whether an error means the connection is gone (rather than the statement failed).
const GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'ENOTCONN', 'ECONNABORTED'])
function dead(e, c) {
  if (c.broken) return true
  const code = (e && e.code) || ''
  return /^(08|57P)/.test(code) || GONE.has(code) || (e && (e.severity === 'FATAL' || e.severity === 'PANIC')) || /Connection terminated|not queryable/.test((e && e.message) || '')
}

async function execute(client, m) {
  if (m.op === 'query') {
    const r = await client.query({rowMode: m.arrays ? 'array' : undefined, text: m.sql, values: m.params})
    return {rowCount: r.rowCount, rows: r.rows}
  }
  if (m.op === 'exec') {
    const r = await client.query(m.sql)
    return {results: (Array.isArray(r) ? r : [r]).map((x) => ({rowCount: x.rowCount, rows: x.rows}))}
  }
  if (m.op === 'copy') {
    const {from} = require(workerData.copyPath)
    const stream = client.query(from(m.sql))
    await pipeline(Readable.from([Buffer.from(m.data)]), stream)
    return {rowCount: stream.rowCount}
  }
  throw new Error('unknown operation ' + m.op)
}

function done(m, reply) {
  for (const [name, value] of m.remember || []) {
    if (name === null) settings.clear()
    else if (value === null) settings.delete(name)
    else settings.set(name, value)
  }
  return reply
}

// Run m on a new connection: the old one died before m went out, or m is safe to run twice.
async function again(m) {
  const c = (conn = open())
  try {
    await c.ready
  } catch (e) {
    discard(c)
    return {error: info(e), lost: 'reconnect'}
  }
  try {
    return done(m, await execute(c.client, m))
  } catch (e) {
    if (!dead(e, c)) throw e
    discard(c)
    return {error: info(e), lost: m.safe ? 'reconnect' : 'statement'}
  }
}

async function handle(m) {
  if (m.op === 'close') {
    if (conn) await conn.client.end().catch(() => {})
    conn = undefined
    return {}
  }
  if (lostTransaction) {
    if (!m.rollback) return {error: lostTransaction, lost: 'transaction'}
    lostTransaction = undefined
    return {results: [{rowCount: null, rows: []}], rowCount: null, rows: []}
  }
  const c = conn || (conn = open())
  try {
    await c.ready
  } catch (e) {
    discard(c)
    // The first connection's own failure (a wrong URL, password, database) is the caller's to report.
    if (!connectedOnce) throw e
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
    return done(m, await execute(c.client, m))
  } catch (e) {
    if (!dead(e, c)) throw e
    discard(c)
    if (status !== 'I') {
      if (m.rollback) return {results: [{rowCount: null, rows: []}], rowCount: null, rows: []}
      lostTransaction = info(e)
      return {error: lostTransaction, lost: m.commits ? 'commit' : 'transaction'}
    }
    if (m.safe) return again(m)
    return {error: info(e), lost: 'statement'}
  }
}

// The call being answered: its id (the caller's) while it waits, else undefined.
let waiting
const answer = (reply) => {
  port.postMessage({...reply, id: waiting})
  waiting = undefined
  // A count, not a 0/1 flag: every answer moves it, so a caller never takes an earlier answer's signal for its own.
  Atomics.add(flag, 0, 1)
  Atomics.notify(flag, 0)
}
// Whatever escapes (a driver bug) answers the waiting caller instead of leaving it blocked.
process.on('uncaughtException', (e) => { if (waiting !== undefined) answer({error: info(e)}) })
process.on('unhandledRejection', (e) => { if (waiting !== undefined) answer({error: info(e)}) })
port.on('message', async (m) => {
  waiting = m.id
  let reply
  try {
    reply = await handle(m)
  } catch (e) {
    reply = {error: info(e)}
  }
  if (waiting !== m.id) return // answered already (uncaughtException), or a later call waits now
  answer(reply)
  if (m.op === 'close') port.close()
})
`

/** How long the caller sleeps before it looks at the port again when a signal came without a readable answer. */
const RECEIVE_RETRY_MS = 5

/**
 * Block until the answer to call `id` arrives on `port`. The worker posts each answer (with
 * the id of the call it answers), then bumps `flag[0]`; `signal` is the value the flag had
 * before the call was posted. An answer to an earlier call (one the worker answered early,
 * see uncaughtException) is dropped, and a signal whose message is not readable yet is
 * waited out in short sleeps rather than taken for no answer: under load, three serve
 * instances saw a wake-up with an empty port (docs/postgres.md).
 */
export function receiveAnswer(port: MessagePort, flag: Int32Array, id: number, signal: number): unknown {
  for (;;) {
    const received = receiveMessageOnPort(port)
    if (received) {
      if ((received.message as {id?: number}).id === id) return received.message
      continue
    }
    Atomics.wait(flag, 0, signal, RECEIVE_RETRY_MS)
    signal = Atomics.load(flag, 0)
  }
}

class WorkerClient implements PgSync {
  private readonly flag = new Int32Array(new SharedArrayBuffer(4))
  private readonly port: MessagePort
  private readonly worker: Worker
  /** The URL for messages (password left out). */
  private readonly shown: string
  /** The id of the last call: its answer carries it. */
  private calls = 0
  closed = false

  constructor(url: string) {
    this.shown = redactUrl(url)
    const {port1, port2} = new MessageChannel()
    this.port = port1
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // The worker's code is CommonJS: flags of this process such as --input-type=module or a
      // loader must not apply to it (it would fail to start, and this thread would wait forever).
      execArgv: [],
      transferList: [port2],
      workerData: {connectTimeoutMs: connectTimeoutMs(url), copyPath: require.resolve('pg-copy-streams'), pgPath: require.resolve('pg'), port: port2, signal: this.flag.buffer, url},
    })
    // Neither keeps the process alive: a command that forgets to close still exits.
    this.worker.unref()
    this.port.unref()
  }

  private call(message: Record<string, unknown>): Reply {
    if (this.closed) throw new PgError({message: 'the PostgreSQL connection is closed'})
    const id = ++this.calls
    const signal = Atomics.load(this.flag, 0)
    this.port.postMessage({...message, ...(typeof message.sql === 'string' ? statementFacts(message.sql, message.params as readonly unknown[] | undefined) : {}), id})
    const reply = receiveAnswer(this.port, this.flag, id, signal) as Reply
    if (reply.lost) throw new UnavailableError(lostMessage(reply.lost, this.shown, reply.error?.message))
    if (reply.error) throw new PgError(reply.error)
    return reply
  }

  query<R = Row>(sql: string, params?: readonly unknown[]): R[] {
    return this.call({op: 'query', params, sql}).rows as R[]
  }

  queryArrays<R extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): R[] {
    return this.call({arrays: true, op: 'query', params, sql}).rows as R[]
  }

  run(sql: string, params?: readonly unknown[]): number {
    return this.call({op: 'query', params, sql}).rowCount ?? 0
  }

  exec(sql: string): Row[][] {
    return this.call({op: 'exec', sql}).results!.map((r) => r.rows as Row[])
  }

  copyFrom(sql: string, data: Buffer | string): number {
    return this.call({data: typeof data === 'string' ? Buffer.from(data) : data, op: 'copy', sql}).rowCount ?? 0
  }

  close(): void {
    if (this.closed) return
    try {
      this.call({op: 'close'})
    } catch {}
    this.closed = true
    this.port.close()
    void this.worker.terminate()
  }
}

/**
 * What the worker needs to know of a statement to recover from a lost connection: whether it
 * may run twice (`safe`: it only reads, or opens a transaction it does not commit: a dropped
 * connection rolls that back), whether it commits, whether it is a plain ROLLBACK, and the
 * session settings it makes (`remember`: [name, value]; value null: RESET; name null: RESET ALL).
 */
export function statementFacts(sql: string, params?: readonly unknown[]): {commits: boolean; remember: [null | string, null | string][]; rollback: boolean; safe: boolean} {
  const commits = /\bCOMMIT\b/i.test(sql)
  const rollback = /^\s*(ROLLBACK|ABORT)\s*;?\s*$/i.test(sql)
  const begins = /^\s*(BEGIN|START\s+TRANSACTION)\b/i.test(sql)
  const reads = /^\s*(SELECT|WITH|SHOW|VALUES|TABLE|SET)\b/i.test(sql) && !WRITES.test(sql)
  return {commits, remember: sessionSettings(sql, params), rollback, safe: !commits && (begins || reads)}
}

/** Words of a statement that writes, takes a lock or calls something that might. */
const WRITES =
  /\b(INSERT|UPDATE|DELETE|MERGE|COPY|CREATE|DROP|ALTER|TRUNCATE|GRANT|REVOKE|LOCK|CALL|DO|COMMIT|nextval|setval|pg_advisory\w*|pg_try_advisory\w*|pricectl_\w+\s*\(|FOR\s+(NO\s+KEY\s+UPDATE|UPDATE|SHARE|KEY\s+SHARE))\b/i

const SET = /^\s*SET\s+(?:SESSION\s+)?([a-z_][\w.]*)\s*(?:=|\bTO\b)\s*(.+?)\s*;?\s*$/i
const RESET = /^\s*RESET\s+([a-z_][\w.]*)\s*;?\s*$/i
const SET_CONFIG = /set_config\(\s*(?:\$(\d+)|'((?:[^']|'')*)')\s*,\s*(?:\$(\d+)|'((?:[^']|'')*)')\s*,\s*false\s*\)/gi

/** The session-level settings a statement makes: SET (not LOCAL), RESET, set_config(name, value, false). */
function sessionSettings(sql: string, params?: readonly unknown[]): [null | string, null | string][] {
  const set = SET.exec(sql)
  if (set && !/^(LOCAL|CONSTRAINTS|TRANSACTION|ROLE|SESSION)$/i.test(set[1])) {
    const raw = set[2]
    return [[set[1].toLowerCase(), /^'.*'$/s.test(raw) ? raw.slice(1, -1).replaceAll("''", "'") : /^default$/i.test(raw) ? null : raw]]
  }
  const reset = RESET.exec(sql)
  if (reset) return [[/^all$/i.test(reset[1]) ? null : reset[1].toLowerCase(), null]]
  const found: [null | string, null | string][] = []
  const value = (n: string | undefined, literal: string | undefined): string => (n === undefined ? (literal ?? '').replaceAll("''", "'") : String(params?.[Number(n) - 1] ?? ''))
  for (const m of sql.matchAll(SET_CONFIG)) found.push([value(m[1], m[2]).toLowerCase(), value(m[3], m[4])])
  return found
}

/** The message of a call that failed because its connection was lost: what happened and what to do. */
function lostMessage(lost: Lost, shown: string, why = 'connection lost'): string {
  const what = `the connection to the PostgreSQL store ${shown} was lost (${why.replace(/\.$/, '')}: a server restart, or its session was ended)`
  switch (lost) {
    case 'commit': {
      return `${what} while its transaction committed: the transaction may or may not have been written; check, then retry (the next call opens a new connection)`
    }
    case 'reconnect': {
      return `${what} and no new connection could be made: check that the server runs and accepts connections, then retry`
    }
    case 'statement': {
      return `${what} while a statement ran: it may or may not have been applied; check, then retry (the next call opens a new connection)`
    }
    case 'transaction': {
      return `${what} inside a transaction: the transaction was rolled back, nothing of it was written; retry (the next call opens a new connection)`
    }
  }
}

/** Connect to the database of a postgres:// URL (the connection is made by the first call). */
export function connectPg(url: string): PgSync {
  return new WorkerClient(url)
}

/** How long a new connection may take (libpq's connect_timeout: the URL's, else PGCONNECT_TIMEOUT, else 10 s), in ms. */
export function connectTimeoutMs(url: string): number {
  let given: null | string | undefined
  try {
    given = new URL(url).searchParams.get('connect_timeout')
  } catch {}
  const seconds = Number(given ?? process.env.PGCONNECT_TIMEOUT ?? DEFAULT_CONNECT_TIMEOUT_S)
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : DEFAULT_CONNECT_TIMEOUT_S * 1000
}

const DEFAULT_CONNECT_TIMEOUT_S = 10

// In ../url.ts (a --db value is told apart without loading this adapter); exported here too for the adapter's modules.
export {isPostgresUrl} from '../url.js'
export {redactUrl}
