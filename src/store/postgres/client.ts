import {once} from 'node:events'
import type {Socket} from 'node:net'
import {Readable, type Writable} from 'node:stream'
import {finished, pipeline} from 'node:stream/promises'

import type Pg from 'pg'

import {UnavailableError} from '../../errors.js'
import {redactUrl} from '../url.js'

// pg asks, as it loads, whether it runs in a Cloudflare Worker (pg/lib/stream.js): on a Node.js
// without a global `navigator` (20; 21 and later have one) by making a fetch Response, which
// loads Node's fetch (undici): a cost paid for nothing. The navigator Node.js 21 has gives pg
// the same answer (not Cloudflare) without it; pg is imported after it, not hoisted above it.
if (!('navigator' in globalThis)) {
  Object.defineProperty(globalThis, 'navigator', {configurable: true, value: {userAgent: `Node.js/${process.versions.node.split('.')[0]}`}, writable: true})
}
const pg = (await import('pg')).default

/**
 * The PostgreSQL client: one connection, made by the first statement and replaced by the
 * next one after it is lost. A statement is never run twice: one whose connection died
 * before it went out runs on a new connection; one lost on its way fails (UnavailableError,
 * saying whether it may have been applied), and so does every statement of a transaction
 * the loss rolled back, until its ROLLBACK. The session settings made through set() are
 * made again on every new connection (docs/postgres.md#connections-and-reconnecting).
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

export type PgErrorInfo = {code?: string; constraint?: string; detail?: string; message: string; table?: string}

export type Row = Record<string, unknown>

/** A statement of a batch (PgClient.batch): with `values`, or `rowMode: 'array'`, it goes by the extended protocol. */
export type Statement = {rowMode?: 'array'; text: string; values?: readonly unknown[]}

/** What the PostgreSQL adapter runs statements on. */
export interface PgConn {
  /** One statement with $1.. parameters; its rows (objects by column name). */
  query<R = Row>(sql: string, params?: readonly unknown[]): Promise<R[]>
  /** One statement with $1.. parameters; its rows as arrays of values, in column order. */
  queryArrays<R extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): Promise<R[]>
  /** One statement with parameters; how many rows it changed (or returned). */
  run(sql: string, params?: readonly unknown[]): Promise<number>
  /** Statements without parameters (`;`-separated, the simple protocol); the rows of each. */
  exec(sql: string, kind?: StatementKind): Promise<Row[][]>
  /** `COPY ... FROM STDIN` fed with `data` (text or CSV as the statement says); how many rows it copied. */
  copyFrom(sql: string, data: Buffer | string): Promise<number>
  /** `COPY ... FROM STDIN` left open for data written piece by piece (CopyIn). */
  copyIn(sql: string): Promise<CopyIn>
}

/**
 * An open `COPY ... FROM STDIN`. write() resolves once the connection took the data (the
 * server reads it while the caller prepares the next piece), end() finishes the statement and
 * answers the rows copied; the COPY's error, if any, is thrown by whichever comes next. No
 * other statement of the connection runs before end().
 */
export type CopyIn = {end(): Promise<number>; write(data: Buffer | string): Promise<void>}

/**
 * What a statement does to its transaction, told by its caller (never read from its text):
 * what losing its connection means. A lost `rollback` has nothing left to do; a lost `commit`
 * may or may not have been written; a lost `begin` wrote nothing.
 */
export type StatementKind = 'begin' | 'commit' | 'rollback'

/** How a statement failed because its connection was lost. */
type Lost = 'commit' | 'reconnect' | 'statement' | 'transaction'

/** A connection: `connected` once its ready promise resolved; `broken` with why it is not usable (any more). */
type Conn = {broken: unknown; readonly client: Pg.Client; connected: boolean; ready: Promise<void>; used: number}

// BIGINT (int8) and COUNT(*) come back as JS numbers: the store keeps minor units and epochs
// within Number.MAX_SAFE_INTEGER (docs/money.md), as SQLite hands them out.
const types: Pg.CustomTypesConfig = {
  getTypeParser(oid, format) {
    if (oid === 20) return (v: null | string) => (v === null ? null : Number(v))
    return pg.types.getTypeParser(oid, format)
  },
}

export type PgClientOptions = {
  /** How long a new connection may take (ms). */
  connectTimeoutMs?: number
  /** Send statements without waiting for the previous one's answer (pg's pipeline mode). */
  pipeline?: boolean
}

export class PgClient implements PgConn {
  private conn?: Conn
  private connectedOnce = false
  /** Why the connection died inside a transaction, when it did: every statement fails until the ROLLBACK. */
  private lostTransaction?: unknown
  /** Session settings (name -> value), made again on every new connection. */
  private readonly settings = new Map<string, string>()
  /** The URL for messages (password left out). */
  private readonly shown: string
  private readonly connectTimeoutMs: number
  private readonly pipeline: boolean
  private opening?: Promise<void>
  private readonly names = new Map<string, string>()
  /** Why no new connection could be made, while none can (the server is down): statements fail at once meanwhile. */
  private down?: unknown
  private retry?: NodeJS.Timeout
  /** A CopyIn is open: a statement sent now would wait behind it for good, so it is refused. */
  private copyOpen = false
  /** Settled when the statement in flight on a connection that is not pipelined is answered (call()). */
  private turn: Promise<void> = Promise.resolve()
  closed = false

  constructor(
    private readonly url: string,
    options: PgClientOptions = {},
  ) {
    this.shown = redactUrl(url)
    this.connectTimeoutMs = options.connectTimeoutMs ?? connectTimeoutMs(url)
    this.pipeline = options.pipeline ?? false
    const timeout = urlStatementTimeout(url)
    if (timeout !== undefined) this.settings.set('statement_timeout', timeout)
  }

  async query<R = Row>(sql: string, params?: readonly unknown[], direct = false): Promise<R[]> {
    return (await this.call(direct, sql, (c) => c.query({name: this.named(sql), text: sql, values: params as unknown[] | undefined, ...this.timeout()}))).rows as R[]
  }

  async queryArrays<R extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[], direct = false): Promise<R[]> {
    return (await this.call(direct, sql, (c) => c.query({name: this.named(sql), rowMode: 'array', text: sql, values: params as unknown[] | undefined, ...this.timeout()}))).rows as R[]
  }

  async run(sql: string, params?: readonly unknown[], direct = false): Promise<number> {
    return (await this.call(direct, sql, (c) => c.query({name: this.named(sql), text: sql, values: params as unknown[] | undefined, ...this.timeout()}))).rowCount ?? 0
  }

  async exec(sql: string, kind?: StatementKind, direct = false): Promise<Row[][]> {
    // Several statements (the simple protocol: no values) answer with one result each.
    const r = (await this.call(direct, sql, (c) => c.query({text: sql, ...this.timeout()}), kind)) as Pg.QueryResult | Pg.QueryResult[]
    return (Array.isArray(r) ? r : [r]).map((x) => x.rows as Row[])
  }

  /**
   * Statements in order, the rows of each (a text of several statements gives one entry per
   * statement). Pipelined, they leave together and take one round trip; the first that fails
   * is thrown (in a transaction, the ones after it fail too). Otherwise they must be texts
   * without values, sent as one (the simple protocol's several statements).
   */
  async batch(parts: readonly Statement[], kind?: StatementKind): Promise<unknown[][]> {
    if (!this.pipeline) {
      if (parts.some((p) => p.values !== undefined || p.rowMode !== undefined)) throw new Error('PgClient.batch: statements with values need a pipelined client')
      return await this.exec(parts.map((p) => p.text).join(';\n'), kind)
    }
    return await this.call(false, parts.at(-1)?.text ?? '', async (c) => {
      // pg writes each statement on its own (a system call each, and a wake-up of the server):
      // corked, the batch leaves in one write.
      const socket = socketOf(c)
      socket?.cork()
      let sent: Promise<Pg.QueryResult | Pg.QueryResult[]>[]
      try {
        sent = parts.map((p) =>
          p.values === undefined && p.rowMode === undefined
            ? c.query({text: p.text, ...this.timeout()})
            : p.rowMode === 'array'
              ? c.query({name: this.named(p.text), rowMode: 'array', text: p.text, values: p.values as unknown[] | undefined, ...this.timeout()})
              : c.query({name: this.named(p.text), text: p.text, values: p.values as unknown[] | undefined, ...this.timeout()}),
        )
      } finally {
        socket?.uncork()
      }
      const settled = await Promise.allSettled(sent)
      for (const s of settled) if (s.status === 'rejected') throw s.reason
      return settled.flatMap((s) => {
        const r = (s as PromiseFulfilledResult<Pg.QueryResult | Pg.QueryResult[]>).value
        return (Array.isArray(r) ? r : [r]).map((x) => x.rows as unknown[])
      })
    }, kind)
  }

  async copyFrom(sql: string, data: Buffer | string, direct = false): Promise<number> {
    const {from} = await import('pg-copy-streams')
    return await this.call(direct, sql, async (c) => {
      const stream = c.query(from(sql))
      await pipeline(Readable.from([typeof data === 'string' ? Buffer.from(data) : data]), stream)
      return stream.rowCount ?? 0
    })
  }

  async copyIn(sql: string, direct = false): Promise<CopyIn> {
    const {from} = await import('pg-copy-streams')
    let opened!: (stream: Writable) => void
    const stream = new Promise<Writable>((resolve) => (opened = resolve))
    const done = this.call(direct, sql, async (c) => {
      const s = c.query(from(sql))
      this.copyOpen = true
      opened(s)
      try {
        await finished(s)
      } finally {
        this.copyOpen = false
      }
      return s.rowCount ?? 0
    })
    // Thrown by the next write() or end(), never unhandled.
    done.catch(() => {})
    const ended = done.then(() => {
      throw new Error(`COPY ended before its data: ${sql.slice(0, 60)}`)
    })
    ended.catch(() => {})
    const ready = async () => await Promise.race([stream, ended])
    return {
      end: async () => {
        ;(await ready()).end()
        return await done
      },
      write: async (data) => {
        const s = await ready()
        if (!s.write(data)) await Promise.race([once(s, 'drain'), ended])
      },
    }
  }

  /**
   * A session setting (set_config(name, value, false)), made now and again on every new
   * connection; null resets it. The adapter's settings go through here, never through SQL text.
   */
  async set(name: string, value: null | string, direct = false): Promise<void> {
    // Remembered when it is made, after the store's opening (whose settings come first).
    if (this.opening && !direct) await this.opening
    if (value === null) this.settings.delete(name)
    else this.settings.set(name, value)
    // Without a connection there is nothing to set now: the next one is made with it.
    if (this.conn === undefined) return
    await this.query('SELECT set_config($1, $2, false)', [name, value ?? ''], true)
  }

  /**
   * The store's opening (its checks, migrations and settings, ./open.ts), made by the first
   * statement: every statement waits for it, and fails with its error when it failed.
   */
  whenOpen(opening: Promise<void>): void {
    this.opening = opening
    // Once the store opened (on another client of it), the URL is proven: this client's first
    // connection that fails is an outage (UnavailableError), not a wrong URL.
    opening.then(
      () => {
        this.connectedOnce = true
      },
      () => {},
    )
  }

  /** This client for the opening's own statements, which do not wait for it. */
  get direct(): PgConn & {set(name: string, value: null | string): Promise<void>} {
    return {
      copyFrom: async (sql, data) => await this.copyFrom(sql, data, true),
      copyIn: async (sql) => await this.copyIn(sql, true),
      exec: async (sql, kind) => await this.exec(sql, kind, true),
      query: async (sql, params) => await this.query(sql, params, true),
      queryArrays: async (sql, params) => await this.queryArrays(sql, params, true),
      run: async (sql, params) => await this.run(sql, params, true),
      set: async (name, value) => await this.set(name, value, true),
    }
  }

  /** A session setting for the connections this client makes (none is made now). */
  remember(name: string, value: string): void {
    this.settings.set(name, value)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.retry)
    const c = this.conn
    this.conn = undefined
    // A server that is gone (or a half-open connection) never answers end(): its socket is destroyed after a wait.
    if (c) await Promise.race([c.client.end().catch(() => {}), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())])
    if (c) socketOf(c.client)?.destroy()
  }

  /**
   * The name a statement is prepared under on each connection (pg prepares it there once):
   * a named statement skips the server's parse and plan, which for a lookup by key is most
   * of its cost (docs/postgres.md, "Choosing the driver": 27,805 against 15,029 lookups/s).
   * Statements whose text is built per call could name without end: past MAX_NAMED texts,
   * new ones run unnamed.
   */
  private named(text: string): string | undefined {
    let name = this.names.get(text)
    if (name === undefined && this.names.size < MAX_NAMED) this.names.set(text, (name = `pricectl_${this.names.size + 1}`))
    return name
  }

  /** pg's per-query read timeout: the statement timeout and a grace second (a half-open connection fails by it). */
  private timeout(): {query_timeout?: number} {
    const ms = statementTimeoutMs(this.settings.get('statement_timeout'))
    return ms > 0 ? {query_timeout: ms + QUERY_GRACE_MS} : {}
  }

  private open(): Conn {
    const client = new pg.Client({
      application_name: 'pricectl',
      connectionString: this.url,
      connectionTimeoutMillis: this.connectTimeoutMs,
      // A connection whose peer is gone while it is idle (a half-open one) fails by itself; one in use, by the query timeout.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_MS,
      pipeline: this.pipeline,
      types,
    })
    const c: {broken: unknown; readonly client: Pg.Client; connected: boolean; used: number} = {broken: undefined, client, connected: false, used: performance.now()}
    client.on('error', (e) => {
      c.broken = c.broken || e
    })
    client.on('end', () => {
      c.broken = c.broken || new Error('Connection terminated')
    })
    const started = Date.now()
    const settings = [...this.settings]
    const ready = client
      .connect()
      .catch((e: unknown) => {
        // pg reports its connect timeout as "Connection terminated unexpectedly": say what it was.
        if (Date.now() - started < this.connectTimeoutMs - 100) throw e
        throw Object.assign(new Error(`no answer within ${this.connectTimeoutMs / 1000} s`), {code: 'ETIMEDOUT'})
      })
      .then(async () => {
        if (settings.length === 0) return
        await client.query({text: 'SELECT ' + settings.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, false)`).join(', '), values: settings.flat()})
      })
    // Handled here too: a connection that fails before anyone awaits it is no unhandled rejection.
    ready.then(
      () => {
        c.connected = true
      },
      () => {},
    )
    return Object.assign(c, {ready})
  }

  private discard(c: Conn): void {
    if (this.conn === c) this.conn = undefined
    // end() waits for the server's goodbye, which a half-open connection never sends: the socket goes too.
    c.client.end().catch(() => {})
    setTimeout(() => socketOf(c.client)?.destroy(), CLOSE_WAIT_MS).unref()
  }

  /** A connection that is up: the current one, else a new one. */
  private async connection(): Promise<Conn> {
    for (;;) {
      if (this.down !== undefined) {
        // The server is down: fail at once until the connection tried in the background is made.
        if (this.conn?.broken) this.discard(this.conn)
        if (!this.conn?.connected) {
          this.tryLater()
          throw new UnavailableError(lostMessage('reconnect', this.shown, message(this.down)))
        }
        this.down = undefined
      }
      const c = this.conn ?? (this.conn = this.open())
      try {
        await c.ready
      } catch (error) {
        this.discard(c)
        // The first connection's own failure (a wrong URL, password, database) is the caller's to report.
        if (!this.connectedOnce) throw pgError(error)
        this.down = error
        this.tryLater()
        throw new UnavailableError(lostMessage('reconnect', this.shown, message(error)))
      }
      this.connectedOnce = true
      // An idle connection may have been ended (a server restart) with its notice unread: two
      // turns of the event loop let the socket be read first (the poll phase comes between).
      if (!c.broken && performance.now() - c.used > IDLE_CHECK_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        await new Promise((resolve) => setImmediate(resolve))
      }
      if (!c.broken) return c
      // Died while idle (a server restart): nothing was sent on it. A transaction open on it is gone.
      this.discard(c)
      if (c.client.getTransactionStatus() !== 'I') this.lostTransaction = c.broken
    }
  }

  /** While the server is down: a new connection, tried in the background every RECONNECT_RETRY_MS. */
  private tryLater(): void {
    if (this.retry || this.conn || this.closed) return
    this.retry = setTimeout(() => {
      this.retry = undefined
      if (this.down === undefined || this.conn || this.closed) return
      const c = (this.conn = this.open())
      c.ready.catch((error: unknown) => {
        this.discard(c)
        if (this.down !== undefined) this.down = error
        this.tryLater()
      })
    }, RECONNECT_RETRY_MS)
    this.retry.unref()
  }

  private async call<T>(direct: boolean, sql: string, statement: (client: Pg.Client) => Promise<T>, kind?: StatementKind): Promise<T> {
    if (this.closed) throw new PgError({message: 'the PostgreSQL connection is closed'})
    if (this.copyOpen) throw new Error(`a statement while a COPY FROM STDIN is open on its connection (end() it first): ${sql.slice(0, 60)}`)
    if (this.opening && !direct) await this.opening
    if (this.pipeline) return await this.sent(sql, statement, kind)
    // One statement at a time on a connection that is not pipelined: pg would queue the others
    // itself, but that is deprecated (a warning on stderr, an error in pg 9), and its query
    // timeout would count the wait in its queue.
    const turn = this.turn
    let done!: () => void
    this.turn = new Promise<void>((resolve) => (done = resolve))
    await turn
    try {
      if (this.closed) throw new PgError({message: 'the PostgreSQL connection is closed'})
      return await this.sent(sql, statement, kind)
    } finally {
      done()
    }
  }

  private async sent<T>(sql: string, statement: (client: Pg.Client) => Promise<T>, kind?: StatementKind): Promise<T> {
    const rollback = kind === 'rollback'
    // A transaction lost with its connection (before this call, or found dead while idle by
    // connection()): its ROLLBACK has nothing to do, anything else of it fails.
    const lost = (): boolean => {
      if (this.lostTransaction === undefined) return false
      if (!rollback) throw new UnavailableError(lostMessage('transaction', this.shown, message(this.lostTransaction)))
      this.lostTransaction = undefined
      return true
    }
    if (lost()) return EMPTY as T
    const c = await this.connection()
    if (lost()) return EMPTY as T
    const status = c.client.getTransactionStatus() // I: idle, T: in a transaction, E: in a failed one
    c.used = performance.now()
    try {
      const result = await statement(c.client)
      c.used = performance.now()
      return result
    } catch (error) {
      c.used = performance.now()
      if (!dead(error, c)) throw pgError(error)
      this.discard(c)
      const why = lostWhy(error, this.timeout().query_timeout)
      if (status === 'I') throw new UnavailableError(lostMessage(kind === 'begin' ? 'reconnect' : 'statement', this.shown, why))
      if (rollback) return EMPTY as T
      this.lostTransaction = error
      throw new UnavailableError(lostMessage(kind === 'commit' ? 'commit' : 'transaction', this.shown, why))
    }
  }
}

/** What a ROLLBACK of a transaction already lost answers: no rows. */
const EMPTY = {rowCount: null, rows: []}

/** How long a connection's end may wait for the server before its socket is destroyed (ms). */
const CLOSE_WAIT_MS = 1000

const QUERY_GRACE_MS = 1000

/** A connection unused this long (ms) is given two event-loop turns before a statement, to read a notice that it ended. */
const IDLE_CHECK_MS = 50

/** How many statement texts a client prepares by name (each connection holds them on the server). */
const MAX_NAMED = 500

function socketOf(client: Pg.Client): undefined | Pick<Socket, 'cork' | 'destroy' | 'uncork'> {
  return (client as unknown as {connection?: {stream?: Socket}}).connection?.stream
}

/** The fields of a thrown value that say what it was (none for a value that is not an object). */
function fields(e: unknown): {code?: unknown; constraint?: unknown; detail?: unknown; message?: unknown; severity?: unknown; table?: unknown} {
  return typeof e === 'object' && e !== null ? e : {}
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

const message = (e: unknown): string => text(fields(e).message) || String(e)

function pgError(e: unknown): PgError {
  if (e instanceof PgError) return e
  const f = fields(e)
  return new PgError({code: text(f.code), constraint: text(f.constraint), detail: text(f.detail), message: message(e), table: text(f.table)})
}

// Whether an error means the connection is gone (rather than the statement failed).
const GONE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'ENOTCONN', 'ECONNABORTED'])
function dead(e: unknown, c: Conn): boolean {
  if (c.broken) return true
  const f = fields(e)
  const code = text(f.code) || ''
  return /^(08|57P)/.test(code) || GONE.has(code) || f.severity === 'FATAL' || f.severity === 'PANIC' || /Connection terminated|not queryable/.test(message(e)) || silent(e)
}

/** Whether a statement got no answer within the query timeout: its connection is dropped. */
function silent(e: unknown): boolean {
  return message(e) === 'Query read timeout'
}

/** Why a connection was lost, in words (pg's "Query read timeout" says little). */
function lostWhy(e: unknown, queryTimeoutMs: number | undefined): string {
  return silent(e) ? `no answer within ${(queryTimeoutMs ?? 0) / 1000} s, the statement timeout and a second` : message(e)
}

/**
 * The statement timeout (PostgreSQL's units read: "5000", "5s", "1min") in ms; 0 when there
 * is none (or it is not understood).
 */
function statementTimeoutMs(value: string | undefined): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)?\s*$/i.exec(value ?? '')
  if (!m) return 0
  const unit = {d: 86_400_000, h: 3_600_000, min: 60_000, ms: 1, s: 1000, us: 0.001}[(m[2] ?? 'ms').toLowerCase() as 'ms']
  return Math.ceil(Number(m[1]) * unit)
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

/** Connect to the database of a postgres:// URL (the connection is made by the first statement). */
export function connectPg(url: string, options: PgClientOptions = {}): PgClient {
  return new PgClient(url, options)
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

/** While the server is down, a new connection is tried in the background this often (ms); statements meanwhile fail at once. */
export const RECONNECT_RETRY_MS = 250

/** TCP keepalive: the first probe after this long idle (ms); the probes' interval and count are the system's. */
export const KEEPALIVE_MS = 10_000

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
