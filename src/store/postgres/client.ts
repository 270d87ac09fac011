import {createRequire} from 'node:module'
import {MessageChannel, type MessagePort, receiveMessageOnPort, Worker} from 'node:worker_threads'

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

type Reply = {error?: PgErrorInfo; results?: {rowCount: null | number; rows: unknown[]}[]; rowCount?: null | number; rows?: unknown[]}

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
const client = new pg.Client({application_name: 'pricectl', connectionString: url, types})
let broken
client.on('error', (e) => { broken = e })
const ready = client.connect()
ready.catch((e) => { broken = e })
const info = (e) => ({code: e.code, constraint: e.constraint, detail: e.detail, message: e.message || String(e), table: e.table})
let waiting = false
let current = 0
const answer = (reply) => {
  waiting = false
  port.postMessage(reply)
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
}
// Whatever escapes (a driver bug) answers the waiting caller instead of leaving it blocked.
process.on('uncaughtException', (e) => { if (waiting) answer({error: info(e)}) })
process.on('unhandledRejection', (e) => { if (waiting) answer({error: info(e)}) })
port.on('message', async (m) => {
  const id = ++current
  waiting = true
  let reply
  try {
    await ready
    if (broken) throw broken
    if (m.op === 'query') {
      const r = await client.query({rowMode: m.arrays ? 'array' : undefined, text: m.sql, values: m.params})
      reply = {rowCount: r.rowCount, rows: r.rows}
    } else if (m.op === 'exec') {
      const r = await client.query(m.sql)
      reply = {results: (Array.isArray(r) ? r : [r]).map((x) => ({rowCount: x.rowCount, rows: x.rows}))}
    } else if (m.op === 'copy') {
      const {from} = require(workerData.copyPath)
      const stream = client.query(from(m.sql))
      await pipeline(Readable.from([Buffer.from(m.data)]), stream)
      reply = {rowCount: stream.rowCount}
    } else if (m.op === 'close') {
      await client.end().catch(() => {})
      reply = {}
    }
  } catch (e) {
    reply = {error: info(e)}
  }
  if (!waiting || id !== current) return // answered already (uncaughtException)
  answer(reply)
  if (m.op === 'close') port.close()
})
`

class WorkerClient implements PgSync {
  private readonly flag = new Int32Array(new SharedArrayBuffer(4))
  private readonly port: MessagePort
  private readonly worker: Worker
  closed = false

  constructor(url: string) {
    const {port1, port2} = new MessageChannel()
    this.port = port1
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // The worker's code is CommonJS: flags of this process such as --input-type=module or a
      // loader must not apply to it (it would fail to start, and this thread would wait forever).
      execArgv: [],
      transferList: [port2],
      workerData: {copyPath: require.resolve('pg-copy-streams'), pgPath: require.resolve('pg'), port: port2, signal: this.flag.buffer, url},
    })
    // Neither keeps the process alive: a command that forgets to close still exits.
    this.worker.unref()
    this.port.unref()
  }

  private call(message: Record<string, unknown>): Reply {
    if (this.closed) throw new PgError({message: 'the PostgreSQL connection is closed'})
    Atomics.store(this.flag, 0, 0)
    this.port.postMessage(message)
    Atomics.wait(this.flag, 0, 0)
    const received = receiveMessageOnPort(this.port)
    if (!received) throw new PgError({message: 'the PostgreSQL worker did not answer'})
    const reply = received.message as Reply
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

/** Connect to the database of a postgres:// URL (the connection is made by the first call). */
export function connectPg(url: string): PgSync {
  return new WorkerClient(url)
}

/** A URL fit for messages: the password is left out. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@')
  }
}

/** Whether a --db value names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}
