import {MessageChannel, type MessagePort, receiveMessageOnPort, Worker} from 'node:worker_threads'

import {UnavailableError} from '../../errors.js'
import {workerUrl} from '../../workers.js'
import {redactUrl} from '../url.js'
import type {ClientCall, ClientData, ClientRequest, Lost, PgErrorInfo, Reply, StatementFacts} from './client-worker.js'

/**
 * A synchronous PostgreSQL client, because the storage port is synchronous and `pg` is not:
 * a worker thread (client-worker.ts) holds the connection and each call blocks on
 * Atomics.wait until its answer is there. A dropped connection is replaced by the next call,
 * rerunning it only when that cannot apply anything twice; while no new connection can be
 * made, calls fail at once (UnavailableError) and one is tried in the background; a statement
 * unanswered past the statement timeout drops its connection
 * (docs/postgres.md#connections-and-reconnecting).
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
    this.worker = new Worker(workerUrl('store/postgres/client-worker'), {
      // A plain .js module: none of this process's flags (a loader such as tsx's) is of use to
      // it, and one that failed it would leave this thread waiting forever for its answers.
      execArgv: [],
      transferList: [port2],
      workerData: {
        connectTimeoutMs: connectTimeoutMs(url),
        keepAliveMs: KEEPALIVE_MS,
        port: port2,
        retryMs: RECONNECT_RETRY_MS,
        signal: this.flag.buffer,
        statementTimeout: urlStatementTimeout(url),
        url,
      } satisfies ClientData,
    })
    // Neither keeps the process alive: a command that forgets to close still exits.
    this.worker.unref()
    this.port.unref()
  }

  private call(message: ClientCall): Reply {
    if (this.closed) throw new PgError({message: 'the PostgreSQL connection is closed'})
    const id = ++this.calls
    const signal = Atomics.load(this.flag, 0)
    const request: ClientRequest = {...message, ...('sql' in message ? statementFacts(message.sql, 'params' in message ? message.params : undefined) : {}), id}
    this.port.postMessage(request)
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
export function statementFacts(sql: string, params?: readonly unknown[]): StatementFacts {
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

/** TCP keepalive: the first probe after this long idle (ms); the probes' interval and count are the system's. */
export const KEEPALIVE_MS = 10_000

/** While the server is down, a new connection is tried in the background this often (ms); calls meanwhile fail at once. */
export const RECONNECT_RETRY_MS = 250

/** The URL's `statement_timeout` parameter (pg sends it when it connects), if it has one. */
export function urlStatementTimeout(url: string): string | undefined {
  try {
    return new URL(url).searchParams.get('statement_timeout') ?? undefined
  } catch {
    return undefined
  }
}

// In ../url.ts (a --db value is told apart without loading this adapter); exported here too for the adapter's modules.
export {isPostgresUrl} from '../url.js'
export {redactUrl}
