import Fastify, {type FastifyInstance, type FastifyReply, type FastifyRequest} from 'fastify'
import {type IncomingMessage, maxHeaderSize, type ServerResponse, STATUS_CODES} from 'node:http'
import {isIP, type Socket} from 'node:net'

import {InvalidInputError, UnavailableError} from '../errors.js'
import {firstInvalidUtf8, parseJsonObject} from '../input.js'
import {openStore, type Store} from '../store/db.js'
import {AccessLog} from './access-log.js'
import {PricingContexts} from './contexts.js'
import {capMessage, HttpProblem, httpError} from './errors.js'
import {type Caller, KeyChecker, presentedKey} from './keys.js'
import {LoadWatch} from './load.js'
import {StoreOutage} from './outage.js'
import {registerRoutes} from './routes.js'
import {DEFAULT_WRITE_TIMEOUT_MS, WriteQueue} from './write-queue.js'

/**
 * Lock rows the server keeps between requests (SQLite; docs/performance.md "serve"):
 * a locked user's price is then answered without reading the lock again.
 * About 0.5 KB each (a quote of two products): ~5 MB at most.
 */
export const REMEMBERED_LOCKS = 10_000

/** Default largest request body: a price or product body is a few KB; 1 MiB leaves room. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/**
 * Connection timeouts (docs/serve.md "Timeouts"), given to node:http when the server is
 * created: Node checks them on a timer set up at creation, so values assigned afterwards
 * left its defaults (60 s for headers, checked every 30 s) in force.
 */
export const DEFAULT_TIMEOUTS = {
  /** The request line and headers must have arrived within this. */
  headersMs: 10_000,
  /** An idle kept-alive connection is closed after this. */
  keepAliveMs: 72_000,
  /** The whole request, body included, must have arrived within this. */
  requestMs: 30_000,
  /** How often node:http looks for connections past those timeouts (a timeout is noticed up to this late). */
  checkMs: 1000,
}

/**
 * PostgreSQL: the server's statement_timeout (ms) unless the URL sets one (docs/postgres.md
 * "Timeouts"). Its statements take milliseconds; the event loop waits for each, so a connection
 * that stops answering (half-open) is dropped this long and a second after, not minutes.
 */
export const SERVE_STATEMENT_TIMEOUT_MS = 5000

/**
 * PostgreSQL: how many transactions `serve` keeps open at once by default (`--pool-size`):
 * price groups side by side, each on its own connections (docs/postgres.md, "The connection").
 */
export const DEFAULT_POOL_SIZE = 4

/** How often the key use times are written (KeyChecker.flush), ms. */
export const KEY_FLUSH_MS = 5000

export type ServerOptions = {
  /** One line per request (default true). */
  accessLog?: boolean
  /** Where access lines and notes are written (default: stderr). */
  log?: (text: string) => void
  /** Largest request body in bytes (413 above it). */
  bodyLimit?: number
  /** Store path (as --db: default $PRICECTL_DB, else the data directory). Opened, migrated, closed on close(). */
  db?: string
  geoipDb?: string
  /** Connection timeouts in ms (defaults: DEFAULT_TIMEOUTS). */
  timeouts?: Partial<typeof DEFAULT_TIMEOUTS>
  /** Take the client address from X-Forwarded-For (only behind a proxy you run). */
  trustProxy?: boolean
  /** How long a write may wait for another process's write lock before it gets 503 (ms). */
  writeTimeoutMs?: number
  /** PostgreSQL's statement_timeout in ms (default SERVE_STATEMENT_TIMEOUT_MS; the URL's `statement_timeout` wins). */
  statementTimeoutMs?: number
  /** PostgreSQL: how many transactions may be open at once (default DEFAULT_POOL_SIZE). SQLite: one connection, every write in turn. */
  poolSize?: number
}

export type Server = FastifyInstance & {
  pricectl: {accessLog: AccessLog; contexts: PricingContexts; keys: KeyChecker; outage: StoreOutage; requests: () => number; store: Store; writes: WriteQueue}
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null
    /** The store's catalogVersion() read when the request arrived (on the routes with a key check): the key check and the pricing context share it. */
    dataVersion: number | undefined
  }
  interface FastifyContextConfig {
    /** Routes under /v1 need an API key; /healthz does not. */
    auth?: boolean
  }
}

/** The client address: the socket's, or X-Forwarded-For's first hop under --trust-proxy (fastify's request.ip). */
export function clientIp(request: FastifyRequest): string {
  const ip = request.ip ?? ''
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; the lock key is a.b.c.d.
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip
}

/**
 * The HTTP server of `pricectl serve`: the spec's endpoints under /v1 on the same engine
 * and store as the commands. Returns the fastify instance (not yet listening) so tests can
 * `inject()` or `listen({port: 0})`; `close()` finishes in-flight requests, then closes the store.
 */
export function buildServer(options: ServerOptions = {}): Server {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const timeouts = {...DEFAULT_TIMEOUTS, ...options.timeouts}
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE
  const store = openStore(options.db, {poolSize, statementTimeoutMs: options.statementTimeoutMs ?? SERVE_STATEMENT_TIMEOUT_MS})
  // Never wait inside the store (SQLite's busy wait, PostgreSQL's lock wait): a busy wait would hold the event loop and every request with
  // it. Writes wait for another process's lock in the write queue instead (write-queue.ts).
  store.setBusyTimeout(0)
  const log = new AccessLog(options.log)
  const writes = new WriteQueue(options.writeTimeoutMs ?? DEFAULT_WRITE_TIMEOUT_MS, store.poolSize)
  const keys = new KeyChecker(store, {warn: (message) => log.note(message)})
  const contexts = new PricingContexts(store, {geoipDb: options.geoipDb})
  // PostgreSQL down: every request that needs the store gets 503 with Retry-After (errors.ts), the log one note each way.
  const outage = new StoreOutage(store.path, (message) => log.note(message))
  let served = 0
  // A request timeout under saturation is the server's fault, not the client's (503, not 408).
  const load = new LoadWatch()
  const accessLog = options.accessLog ?? true

  const app = Fastify({
    bodyLimit,
    // Slow clients cannot pin the server: the timeouts are node:http options at creation.
    http: {
      connectionsCheckingInterval: timeouts.checkMs,
      headersTimeout: timeouts.headersMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      requestTimeout: timeouts.requestMs,
      // An HTTP/1.1 request without Host gets the error body and a log line from the hook below, not node's empty 400.
      requireHostHeader: false,
    },
    // fastify assigns these again after creating the server: they must agree.
    keepAliveTimeout: timeouts.keepAliveMs,
    requestTimeout: timeouts.requestMs,
    // Errors node:http finds before fastify sees a request (a malformed request line,
    // headers over the size limit, a timeout) get the spec's error body too.
    clientErrorHandler: (error, socket) => clientError(error, socket, {load, log: accessLog ? log : undefined, timeouts}),
    // Errors found before routing (a malformed or over-long path) get the spec's error body
    // and an access-log line too (fastify runs no hooks for them).
    frameworkErrors: (error, request, reply) => {
      const r = reply as unknown as FastifyReply
      const {message, status} = frameworkError(error as Error & {code?: string; statusCode?: number}, request.url)
      const body = JSON.stringify({message, success: false})
      r.code(status).header('content-type', 'application/json; charset=utf-8').send(body)
      if (accessLog) log.line({bytes: Buffer.byteLength(body), durationMs: r.elapsedTime, ip: clientIp(request), method: request.method, status, url: request.url})
    },
    // Shutdown answers with the spec's error body (below), not fastify's own.
    return503OnClosing: false,
    // Ids may be 255 characters, percent-encoded in paths up to 12 bytes each.
    routerOptions: {maxParamLength: 4096},
    trustProxy: options.trustProxy ?? false,
  }) as unknown as Server
  app.decorateRequest('caller', null)
  app.decorateRequest('dataVersion', undefined)

  // JSON is the only body: without fastify's text/plain parser any other type is 415.
  // Bodies go through the commands' own reader: UTF-8, an object, the nesting limit.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', {parseAs: 'buffer'}, (request, raw, done) => {
    try {
      done(null, jsonBody(raw as Buffer, request.headers['content-type']))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  // Offered where it moves on every other connection's commit (SQLite's data_version).
  const commitVersion = store.pricing.commitVersion?.bind(store.pricing)
  // Valid while the catalog version stays (read once per request, below): another
  // connection's commit drops them all; the server's own lock writes drop their keys.
  store.pricing.rememberLocks?.(REMEMBERED_LOCKS)
  store.pricing.followVersion?.()
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })

  // The hooks take a callback instead of returning a promise: fastify then runs the next
  // step in the same turn, without a promise and a microtask per hook and request.
  app.addHook('onRequest', (request, reply, done) => {
    // HTTP/1.1 requires Host (RFC 9112 3.2); node:http's own refusal would be an empty 400 without a log line.
    if (request.raw.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1) {
      reply.header('connection', 'close')
      return done(new HttpProblem(400, 'HTTP/1.1 request without a Host header: send "Host: HOST:PORT" (every HTTP/1.1 client does)'))
    }
    if (!closing) return done()
    // A request that arrives on a kept-alive connection while the server drains.
    reply.header('connection', 'close')
    done(new HttpProblem(503, 'the server is shutting down: retry the request', {'retry-after': '1'}))
  })

  // The key check runs on the routes marked `config: {auth: true}` (every /v1 route), as their
  // own onRequest hook after the one above: no per-request look at the route's options.
  const accept = (request: FastifyRequest, presented: string | undefined, caller: Caller | undefined): Error | undefined => {
    if (caller) {
      request.caller = caller
      return undefined
    }
    const why = presented === undefined ? 'missing API key' : 'invalid or revoked API key'
    return new HttpProblem(401, `${why}: send "Authorization: Bearer KEY" or "X-Api-Key: KEY" (create a key with: pricectl keys create --name NAME)`, {
      'www-authenticate': 'Bearer realm="pricectl"',
    })
  }
  // A callback hook: a key seen before at this data version is accepted without a promise.
  const authenticate = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const presented = presentedKey(request.headers as {authorization?: string; 'x-api-key'?: string})
    // One read of the store's version per request: it tells the key check whether another
    // process committed (a revoked key) and the pricing context whether the catalog moved.
    if (commitVersion === undefined) {
      // PostgreSQL: the catalog version comes from the store's notifications (a read while it has none).
      store.pricing.catalogVersion().then((version) => known(request, presented, version, done), done)
      return
    }
    known(request, presented, commitVersion(), done)
  }
  const known = (request: FastifyRequest, presented: string | undefined, version: number, done: (error?: Error) => void): void => {
    request.dataVersion = version
    const caller = keys.seen(presented, version)
    if (caller) {
      request.caller = caller
      done()
      return
    }
    keys.check(presented, version).then((c) => done(accept(request, presented, c)), done)
  }
  app.addHook('onRoute', (route) => {
    if (!route.config?.auth) return
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    // A HEAD route made from a GET one comes here with the GET route's hooks.
    if (!own.includes(authenticate)) route.onRequest = [authenticate, ...own]
  })

  // While draining, tell clients not to reuse the connection.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })

  app.addHook('onResponse', (request, reply, done) => {
    served++
    // A request that got past the key check and did not fail read the store: it answers.
    if (outage.down && request.caller && reply.statusCode < 500) outage.answered()
    if (accessLog) log.line({
      bytes: reply.getHeader('content-length') as number | string | undefined,
      durationMs: reply.elapsedTime,
      ip: clientIp(request),
      key: request.caller?.prefix,
      method: request.method,
      status: reply.statusCode,
      url: request.url,
    })
    done()
  })

  app.setErrorHandler((error, request, reply) => {
    outage.failed(error)
    const {body, headers, status} = httpError(error, {bodyLimit, contentType: request.headers['content-type']})
    if (status === 500) log.note(`error in ${request.method} ${request.url}: ${(error as Error)?.stack ?? String(error)}`)
    reply.code(status)
    if (headers) reply.headers(headers)
    return reply.send(body)
  })

  app.setNotFoundHandler((request, reply: FastifyReply) => {
    reply.code(404).send({message: capMessage(`no endpoint ${request.method} ${request.url.split('?')[0]} (the endpoints are listed in docs/serve.md)`), success: false})
  })

  // Answers at once during an outage too (the client does not wait for a connection while the server is down): 503, Retry-After.
  app.get('/healthz', async () => {
    let schemaVersion: number
    try {
      schemaVersion = (await store.health()).schemaVersion
    } catch (error) {
      if (!(error instanceof UnavailableError)) throw error
      outage.failed(error)
      throw new HttpProblem(503, `the store ${store.path} is unavailable: ${error.message}`, {'retry-after': '1'})
    }
    outage.answered()
    return {message: 'ok', schema_version: schemaVersion, success: true}
  })

  registerRoutes(app, {clientIp, contexts, store, writes})

  // What node:http answers itself without these (an empty 417; CONNECT: the socket dropped
  // without an answer) gets the error body and an access-log line like any request.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const expect = String(request.headers.expect).slice(0, 100)
    const body = JSON.stringify({message: `Expect: ${expect} is not supported (only "Expect: 100-continue"): send the request without it`, success: false})
    response.writeHead(417, {connection: 'close', 'content-length': Buffer.byteLength(body), 'content-type': 'application/json; charset=utf-8'})
    response.end(body)
    if (accessLog) log.line({bytes: Buffer.byteLength(body), durationMs: 0, ip: socketIp(request.socket), method: request.method ?? '-', status: 417, url: request.url ?? '-'})
  })
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const body = JSON.stringify({message: 'CONNECT is not supported: pricectl serve is not a proxy (the endpoints are listed in docs/serve.md)', success: false})
    if (accessLog) log.line({bytes: Buffer.byteLength(body), durationMs: 0, ip: socketIp(socket), method: 'CONNECT', status: 405, url: request.url ?? '-'})
    answerRaw(socket, 405, body, 'Allow: GET, HEAD, POST, DELETE\r\n')
  })

  // flush() never throws: a store that is down keeps the times for a later flush (one warning).
  const flushTimer = setInterval(() => void keys.flush(), KEY_FLUSH_MS)
  flushTimer.unref()
  app.addHook('onClose', async () => {
    clearInterval(flushTimer)
    load.stop()
    // A store that is down: the times are dropped, with a warning; the shutdown goes on (exit 0).
    await keys.flush({final: true})
    try {
      await store.close()
    } catch (error) {
      log.note(`closing the store: ${(error as Error)?.message ?? String(error)}`)
    }
    log.flush()
  })

  app.pricectl = {accessLog: log, contexts, keys, outage, requests: () => served, store, writes}
  return app
}

/**
 * A request body as JSON: UTF-8 (a byte that is not is a 400, never a U+FFFD in the store;
 * a charset other than UTF-8 is 415), then the commands' reader. An empty body is none.
 */
export function jsonBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> | undefined {
  // A plain `application/json` (no parameters) has no charset to read.
  const charset = contentType?.includes(';') ? /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase() : undefined
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpProblem(415, `Content-Type charset ${JSON.stringify(charset)}: send the body as UTF-8 JSON with "Content-Type: application/json"`)
  }
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    const at = firstInvalidUtf8(raw)
    throw new InvalidInputError(`body: not UTF-8 (byte 0x${raw[at].toString(16).padStart(2, '0')} at offset ${at}); send the JSON body encoded as UTF-8`)
  }
  if (text.trim() === '') return undefined
  return parseJsonObject(text, 'body')
}

const utf8 = new TextDecoder('utf-8', {fatal: true})

/** The status and message of an error fastify finds before routing (frameworkErrors). */
function frameworkError(error: Error & {code?: string; statusCode?: number}, url: string): {message: string; status: number} {
  const path = JSON.stringify(url.length > 100 ? `${url.slice(0, 100)}...` : url)
  if (error.code === 'FST_ERR_BAD_URL') {
    return {message: `path ${path} is not a valid url component: malformed percent-encoding (write each reserved byte as %XX, two hex digits, of UTF-8)`, status: 400}
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return {message: `a path segment of ${path} is over 4096 bytes (ids are at most 255 characters): send the id itself`, status: 414}
  }
  const message = error.message.length > 200 ? `${error.message.slice(0, 200)}...` : error.message
  return {message, status: error.statusCode ?? 400}
}

/** The client address of a connection (IPv4 on a dual-stack socket as a.b.c.d). */
function socketIp(socket: Socket): string {
  const ip = socket.remoteAddress ?? ''
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip
}

/** Answer on the bare socket with the spec's error body and close the connection. */
function answerRaw(socket: Socket, status: number, body: string, extraHeaders = ''): void {
  // As node:http does: answer only when no response has begun on this connection.
  if (socket.writable && !(socket as Socket & {_httpMessage?: {headersSent?: boolean}})._httpMessage?.headersSent) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}Connection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}

/** node:http's clientError: answer with the spec's error body and close the connection. */
function clientError(error: Error & {code?: string; reason?: string}, socket: Socket, o: {load: LoadWatch; log: AccessLog | undefined; timeouts: typeof DEFAULT_TIMEOUTS}): void {
  const {log, timeouts} = o
  // A reset connection has no one to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  let status = 400
  let message: string
  let extraHeaders = ''
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && o.load.busy()) {
    // node:http counts from the accept or the first byte parsed: a loop this busy had no turn
    // to read what the client sent at once, so the client did not pause (docs/serve.md "Timeouts").
    status = 503
    extraHeaders = 'Retry-After: 1\r\n'
    message = `the server is busy (its event loop ran ${Math.round(o.load.utilization() * 100)}% of the last second) and did not read the request in time: send it again after Retry-After`
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408
    message = `the request did not arrive in time (headers within ${timeouts.headersMs / 1000} s, the whole request within ${timeouts.requestMs / 1000} s): send it again without pauses`
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431
    message = `the request line and headers are over ${maxHeaderSize} bytes (node's --max-http-header-size): send fewer or shorter headers`
  } else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    status = 413
    message = 'chunk extensions of the request body are too large: send the body without chunk extensions'
  } else {
    message = `malformed HTTP request (${error.code ?? 'error'}: ${error.reason ?? error.message}): send an HTTP/1.1 request`
  }
  const body = JSON.stringify({success: false, message: capMessage(message)})
  // The address before the socket is destroyed (it has none after).
  const ip = socketIp(socket)
  answerRaw(socket, status, body, extraHeaders)
  log?.line({bytes: Buffer.byteLength(body), durationMs: 0, ip, method: '-', status, url: '-'})
}
