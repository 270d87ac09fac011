import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'
import {isIP} from 'node:net'

import {couponResponse, listCoupons} from '../catalog/coupons.js'
import {createdResponse, createProduct, listEntry, loadProducts, productResponse, requireProduct, updateProduct} from '../catalog/products.js'
import {requireUser} from '../catalog/users.js'
import {requireMoment} from '../dates.js'
import {InvalidInputError, NotFoundError} from '../errors.js'
import {requestContext} from '../history/context.js'
import {priceRequest, priceRequests, NEEDS_WRITE, type PriceOptions} from '../pricing/price.js'
import {createCharge, getCharge, updateCharge} from '../revenue/charges.js'
import {eventFrom, type EventRef} from '../revenue/events.js'
import type {RecordKey} from '../revenue/store.js'
import {createSubscription, deleteSubscription, getSubscription, updateSubscription, type WriteResult} from '../revenue/subscriptions.js'
import {COUPON_STATUSES} from '../schemas/catalog.js'
import type {PriceResult} from '../schemas/price.js'
import type {StorePort} from '../store/port.js'
import type {PricingContexts} from './contexts.js'
import {httpError} from './errors.js'
import {type Group, isBusy, type Outcome, type WriteQueue} from './write-queue.js'

type Deps = {clientIp: (request: FastifyRequest) => string; contexts: PricingContexts; store: StorePort; writes: WriteQueue}
type KeyParams = {origin: string; origin_id: string; user_id: string}

const auth = {config: {auth: true}}

/**
 * A DELETE's body is ignored (docs/serve.md), whatever its type or content: the request goes
 * on as one without a body, never parsed (no 400 for malformed JSON, no 415 for its type).
 * node:http reads and discards the unread bytes when the response is sent, so the connection
 * stays usable; the request timeout still bounds how long they may take.
 */
function ignoreBody(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const headers = request.headers
  if (headers['content-type'] !== undefined || headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0') {
    delete headers['content-type']
    delete headers['transfer-encoding']
    headers['content-length'] = '0'
  }
  done()
}

/**
 * The spec's endpoints. Each calls the engine function its command calls, with the
 * request body where the command has `--body` plus flags, and answers what the command's
 * `--json` prints. Nothing here re-validates: the engine validates before it writes.
 *
 * Every write goes through the write queue (write-queue.ts): the engine's write functions
 * start with BEGIN IMMEDIATE, which fails at once while another process holds the store's
 * write lock, and the queue tries again later without blocking other requests. Reads never
 * take the write lock (WAL readers do not wait for writers).
 */
export function registerRoutes(app: FastifyInstance, {clientIp, contexts, store, writes}: Deps): void {
  /**
   * A write through the server, in the write queue; the pricing context must not keep the
   * old catalog. What it records in the history is attributed to the request's API key.
   */
  const write = <T>(request: FastifyRequest, attempt: () => Promise<T> | T): Promise<T> =>
    writes.run(async () => {
      await store.history.begin(requestContext(request.caller?.name, request.method, request.url))
      try {
        const result = await attempt()
        contexts.invalidate()
        return result
      } finally {
        await store.history.end()
      }
    })

  // ---------------------------------------------------------------- prices
  /**
   * New locks (or changes to one), group-committed: the price requests that arrive together
   * are priced in one write transaction (BEGIN IMMEDIATE, as the command takes it, so two
   * processes pricing the same new user cannot both make a quote), as one chunk per client
   * address (priceRequests: one read of their locks, one write of what they made); when one
   * of a chunk throws, each in its own savepoint, so one request's error leaves the others'
   * locks. A request is answered after the commit. A user priced twice in one group gets the
   * lock the first request wrote.
   */
  const priceWrites: Group<{body: unknown; options: PriceOptions}, PriceResult> = {
    // PostgreSQL: groups side by side, one per connection of the pool (their claims need no store-wide lock).
    parallel: true,
    async run(items) {
      // Another process may have changed the store while these requests waited: a fresh context.
      const current = await contexts.current()
      for (const it of items) if (current.needsReady(it.body)) await current.ready(it.body)
      // PostgreSQL (locksOnly): lock writers do not wait for each other, a new lock is claimed
      // by its key; what needs more runs again with the write lock (docs/postgres.md).
      return await current.store.transaction(async (tx) => {
        const outcomes: Outcome<PriceResult>[] = []
        // A chunk reads for one client address (get_ip_from_request): consecutive items that share it.
        for (let from = 0; from < items.length; ) {
          const options = items[from].options
          let to = from + 1
          while (to < items.length && items[to].options.requestIp === options.requestIp) to++
          const part = items.slice(from, to)
          const results = await priceRequests(current, part.map((it) => it.body), options)
          if (results) for (const value of results) outcomes.push({value})
          else {
            // One of them threw: each on its own, in a savepoint, so its error is its own.
            for (const it of part) {
              try {
                outcomes.push({value: await tx.transaction(async () => await priceRequest(current, it.body, it.options))})
              } catch (error) {
                // A busy store is the whole group's (tried again); anything else is this request's.
                // (A lock-writing attempt that needs the write lock counts as busy: the group runs again.)
                if (isBusy(error)) throw error
                outcomes.push({error})
              }
            }
          }
          from = to
        }
        return outcomes
      }, {locksOnly: true, write: true})
    },
  }

  app.post('/v1/prices', auth, async (request) => {
    const body = request.body ?? {}
    const ip = clientIp(request)
    // Under --trust-proxy the address comes from a header: refuse one that is not an address.
    if ((body as {get_ip_from_request?: unknown}).get_ip_from_request === true && isIP(ip) === 0) {
      throw new InvalidInputError(`get_ip_from_request: the client address ${JSON.stringify(ip)} (from X-Forwarded-For) is not an IPv4 or IPv6 address; pass ip in the body`)
    }
    const options: PriceOptions = {requestIp: ip}
    // A locked user asking for what the lock holds writes nothing and reads one row (the
    // lock; everything else comes from the context's caches): answered without a
    // transaction (docs/performance.md "serve"), so it never waits while another process
    // holds the write lock.
    const ctx = contexts.known(request.dataVersion) ?? (await contexts.current(request.dataVersion))
    if (ctx.needsReady(body)) await ctx.ready(body)
    try {
      return await priceRequest(ctx, body, {...options, readOnly: true})
    } catch (error) {
      if (error !== NEEDS_WRITE) throw error
    }
    return writes.join(priceWrites, {body, options})
  })

  // ---------------------------------------------------------------- products
  app.post('/v1/products', auth, async (request) => {
    const p = await write(request, async () => await createProduct(store, request.body ?? {}))
    return createdResponse(p, `created product ${p.api_id}`)
  })

  app.post<{Params: {product_api_id: string}}>('/v1/products/:product_api_id', auth, async (request) => {
    const apiId = request.params.product_api_id
    const {changed, product} = await write(request, async () => await updateProduct(store, apiId, request.body ?? {}))
    const message = changed ? `updated product ${apiId}` : `product ${apiId} unchanged (the update matches what is stored)`
    return productResponse(product, message)
  })

  app.get<{Params: {product_api_id: string}}>('/v1/products/:product_api_id', auth, async (request) => {
    const p = await requireProduct(store, request.params.product_api_id)
    return productResponse(p, `product ${p.api_id}`)
  })

  app.get('/v1/products', auth, async () => {
    const products = await loadProducts(store)
    return {message: `${products.length} product${products.length === 1 ? '' : 's'}`, products: products.map((p) => listEntry(p)), success: true as const}
  })

  // ---------------------------------------------------------------- coupons
  app.get<{Querystring: Record<string, string | string[]>}>('/v1/coupons', auth, async (request) => {
    const query = request.query ?? {}
    const unknown = Object.keys(query).filter((k) => k !== 'name' && k !== 'status')
    if (unknown.length > 0) throw new InvalidInputError(`unknown query parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')} (accepted: name, status)`)
    const name = single(query, 'name')
    const status = single(query, 'status')
    if (status !== undefined && !(COUPON_STATUSES as readonly string[]).includes(status)) {
      throw new InvalidInputError(`status: unknown coupon status ${JSON.stringify(status)} (expected one of ${COUPON_STATUSES.join(', ')})`)
    }
    const coupons = await listCoupons(store, {name, status})
    const filtered = name !== undefined || status !== undefined
    return {
      coupons: await Promise.all(coupons.map(async (c) => await couponResponse(store, c))),
      message: `${coupons.length} coupon${coupons.length === 1 ? '' : 's'}${filtered ? ' matching' : ''}`,
      success: true as const,
    }
  })

  // ---------------------------------------------------------------- users
  app.get<{Params: {user_id: string}}>('/v1/users/:user_id', auth, async (request, reply) => {
    try {
      const u = await requireUser(store, request.params.user_id)
      return {user: {country: u.country}}
    } catch (error) {
      // The spec: an unknown user is a 400 with success false and error_message.
      if (!(error instanceof NotFoundError)) throw error
      return reply.code(400).send(httpError(error, {bodyLimit: 0}).body)
    }
  })

  // ---------------------------------------------------------------- subscriptions
  app.post('/v1/subscriptions', auth, async (request) => {
    const event = eventOfRequest(request)
    const r = await write(request, async () => await createSubscription(store, request.body ?? {}, event))
    return {message: r.message, record: r.record, success: true}
  })

  app.post<{Params: KeyParams}>('/v1/subscriptions/:user_id/:origin/:origin_id', auth, async (request, reply) => {
    const event = eventOfRequest(request)
    const r = await write(request, async () => await updateSubscription(store, keyOf(request.params), request.body ?? {}, event))
    return written(reply, r)
  })

  app.get<{Params: KeyParams}>('/v1/subscriptions/:user_id/:origin/:origin_id', auth, async (request) => ({
    subscription: await getSubscription(store, keyOf(request.params)),
    success: true as const,
  }))

  app.delete<{Params: KeyParams}>('/v1/subscriptions/:user_id/:origin/:origin_id', {...auth, onRequest: ignoreBody}, async (request, reply) => {
    const event = eventOfRequest(request)
    const r = await write(request, async () => await deleteSubscription(store, keyOf(request.params), event))
    return written(reply, r)
  })

  // ---------------------------------------------------------------- charges
  app.post('/v1/charges', auth, async (request) => {
    const event = eventOfRequest(request)
    const r = await write(request, async () => await createCharge(store, request.body ?? {}, event))
    return {message: r.message, record: r.record, success: true}
  })

  app.post<{Params: KeyParams}>('/v1/charges/:user_id/:origin/:origin_id', auth, async (request, reply) => {
    const event = eventOfRequest(request)
    const r = await write(request, async () => await updateCharge(store, keyOf(request.params), request.body ?? {}, event))
    return written(reply, r)
  })

  // Not in the spec (its charge record is "not shown"); `pricectl charges get` has it.
  app.get<{Params: KeyParams}>('/v1/charges/:user_id/:origin/:origin_id', auth, async (request) => ({
    charge: await getCharge(store, keyOf(request.params)),
    success: true as const,
  }))
}

/**
 * The spec's write response. An update or delete of a record that does not exist yet is kept
 * (pending) and answered 202 Accepted with the same body, record null (docs/revenue.md).
 */
function written<R>(reply: FastifyReply, r: WriteResult<R>): {message: string; record: null | R; success: true} {
  if (r.outcome === 'pending') reply.code(202)
  return {message: r.message, record: r.record, success: true}
}

function keyOf(params: KeyParams): RecordKey {
  return {origin: params.origin, origin_id: params.origin_id, user_id: params.user_id}
}

function single(query: Record<string, string | string[]>, name: string): string | undefined {
  const v = query[name]
  if (Array.isArray(v)) throw new InvalidInputError(`${name}: give the query parameter once, got ${v.length} values`)
  return v
}

/**
 * The event a revenue write is: `X-Event-Id` and `X-Event-Timestamp` (UNIX seconds or an
 * ISO date or date-time, read by src/dates.ts as the commands read --event-timestamp), as
 * the commands' --event-id and --event-timestamp; absent: a new id and now. HTTP has no
 * --tz: a date-time without an offset is UTC, whatever the server's zone.
 */
function eventOfRequest(request: FastifyRequest): EventRef {
  const header = (name: string) => {
    const v = request.headers[name]
    return Array.isArray(v) ? v[0] : v
  }
  const ts = header('x-event-timestamp')
  const seconds = ts === undefined ? undefined : requireMoment(ts, 'header X-Event-Timestamp', {zoneFlag: null}).seconds
  try {
    return eventFrom({event_id: header('x-event-id'), event_timestamp: seconds})
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(`headers X-Event-Id / X-Event-Timestamp: ${error.message}`)
    throw error
  }
}
