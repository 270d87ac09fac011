import Fastify, {type FastifyInstance, type FastifyReply, type FastifyRequest} from 'fastify'
import {isIP} from 'node:net'

import {parseJsonObject} from '../cli/input.js'
import {openStore, schemaVersion, type Store} from '../store/db.js'
import {AccessLog} from './access-log.js'
import {PricingContexts} from './contexts.js'
import {HttpProblem, httpError} from './errors.js'
import {type Caller, KeyChecker, presentedKey} from './keys.js'
import {registerRoutes} from './routes.js'

/** Default largest request body: a price or product body is a few KB; 1 MiB leaves room. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

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
  /** Take the client address from X-Forwarded-For (only behind a proxy you run). */
  trustProxy?: boolean
}

export type Server = FastifyInstance & {pricectl: {accessLog: AccessLog; contexts: PricingContexts; keys: KeyChecker; requests: () => number; store: Store}}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null
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
  const store = openStore(options.db)
  const {db} = store
  const keys = new KeyChecker(db)
  const contexts = new PricingContexts(db, {geoipDb: options.geoipDb})
  const log = new AccessLog(options.log)
  let served = 0

  const app = Fastify({
    bodyLimit,
    // A request that has not finished arriving in 30 s is dropped (slow clients cannot pin the server).
    requestTimeout: 30_000,
    // Errors found before routing (a malformed or over-long path) get the spec's error body too.
    frameworkErrors: (error, _request, reply) => {
      const message = error.message.length > 200 ? `${error.message.slice(0, 200)}...` : error.message
      const r = reply as unknown as FastifyReply
      r.code(error.statusCode ?? 400).send({message, success: false})
    },
    // Shutdown answers with the spec's error body (below), not fastify's own.
    return503OnClosing: false,
    // Ids may be 255 characters, percent-encoded in paths up to 12 bytes each.
    routerOptions: {maxParamLength: 4096},
    trustProxy: options.trustProxy ?? false,
  }) as unknown as Server
  app.decorateRequest('caller', null)

  // JSON bodies through the commands' own reader: an object or a 400 naming the problem.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', {parseAs: 'string'}, (_request, text, done) => {
    const body = text as string
    if (body.trim() === '') return done(null, undefined)
    try {
      done(null, parseJsonObject(body, 'body'))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })

  app.addHook('onRequest', async (request, reply) => {
    if (closing) {
      // A request that arrives on a kept-alive connection while the server drains.
      reply.header('connection', 'close')
      throw new HttpProblem(503, 'the server is shutting down: retry the request', {'retry-after': '1'})
    }
    if (!request.routeOptions.config?.auth) return
    const presented = presentedKey(request.headers as {authorization?: string; 'x-api-key'?: string})
    const caller = keys.check(presented)
    if (!caller) {
      const why = presented === undefined ? 'missing API key' : 'invalid or revoked API key'
      throw new HttpProblem(401, `${why}: send "Authorization: Bearer KEY" or "X-Api-Key: KEY" (create a key with: pricectl keys create --name NAME)`, {
        'www-authenticate': 'Bearer realm="pricectl"',
      })
    }
    request.caller = caller
  })

  // While draining, tell clients not to reuse the connection.
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close')
  })

  const accessLog = options.accessLog ?? true
  app.addHook('onResponse', async (request, reply) => {
    served++
    if (accessLog) log.line({
      bytes: reply.getHeader('content-length') as number | string | undefined,
      durationMs: reply.elapsedTime,
      ip: clientIp(request),
      key: request.caller?.prefix,
      method: request.method,
      status: reply.statusCode,
      url: request.url,
    })
  })

  app.setErrorHandler((error, request, reply) => {
    const {body, headers, status} = httpError(error, {bodyLimit})
    if (status === 500) log.note(`error in ${request.method} ${request.url}: ${(error as Error)?.stack ?? String(error)}`)
    reply.code(status)
    if (headers) reply.headers(headers)
    return reply.send(body)
  })

  app.setNotFoundHandler((request, reply: FastifyReply) => {
    reply.code(404).send({message: `no endpoint ${request.method} ${request.url.split('?')[0]} (the endpoints are listed in docs/serve.md)`, success: false})
  })

  app.get('/healthz', async () => {
    db.prepare('SELECT 1').get()
    return {message: 'ok', schema_version: schemaVersion(db), success: true}
  })

  registerRoutes(app, {clientIp, contexts, db})

  const flushTimer = setInterval(() => keys.flush(), 5000)
  flushTimer.unref()
  app.addHook('onClose', async () => {
    clearInterval(flushTimer)
    keys.flush()
    store.close()
    log.flush()
  })

  app.pricectl = {accessLog: log, contexts, keys, requests: () => served, store}
  return app
}
