import fc from 'fast-check'

import {createCharge, deleteCharge, updateCharge} from '../../src/revenue/charges.js'
import {compareEvents, type EventRef} from '../../src/revenue/events.js'
import {createSubscription, deleteSubscription, updateSubscription} from '../../src/revenue/subscriptions.js'
import type {StorePort} from '../../src/store/port.js'

/**
 * Streams of revenue events for the "any order" property (issue 16, point 1): creates
 * (full records), partial updates, deletes and redeliveries of two records of user u1.
 * Every event is valid in every order (docs/revenue.md, "Events in any order": an event the
 * record it meets could refuse is out of the property): amounts with two decimals in USD or
 * EUR, every cancel date after every created date, cancel and trial dates only with their
 * status, refunds and taxes below every amount.
 */

export const T0 = 1_767_225_600 // 2026-01-01

export type Ev = {action: 'create' | 'delete' | 'update'; body: Record<string, unknown>; event: EventRef; key: string}
export type Stream = Ev[]
/** A way of delivering a stream (engine, CLI, HTTP, imports) and reading the records it left. */
export type Channel = {run(stream: Stream): Promise<unknown>}

const amount = fc.constantFrom(10, 12.5, 20)
/** The tax part of an amount (docs/revenue.md, "Tax"): below every amount, so valid in every order. */
const tax = fc.constantFrom(0, 1.5, 2)
const currency = fc.constantFrom('USD', 'EUR')
const created = fc.constantFrom(T0 - 86_400, T0 - 2 * 86_400, T0 - 3 * 86_400)

const subscriptionStatus = fc.oneof(
  fc.constantFrom({status: 'active'}, {status: 'pending'}),
  fc.record({cancel_at: fc.constantFrom(T0 + 86_400, T0 + 2 * 86_400), canceled_at: fc.constantFrom(T0 + 3600, T0 + 7200), status: fc.constant('canceled')}),
  fc.record({status: fc.constant('canceled')}),
  fc.record({status: fc.constant('trialing'), trial_end: fc.constant(T0 + 14 * 86_400), trial_start: fc.constantFrom(T0, T0 + 100)}),
)

function full(kind: 'charges' | 'subscriptions', key: string, opts: {metadata: boolean}): fc.Arbitrary<Record<string, unknown>> {
  const common = {amount, country: fc.constantFrom('US', 'DE'), created, currency, tax}
  if (kind === 'subscriptions') {
    return fc.tuple(fc.record(common), subscriptionStatus).map(([c, s]) => ({...c, ...s, origin: 'gateway_a', origin_id: key, product: 'pro_monthly', user_id: 'u1'}))
  }
  return fc
    .record({...common, amount_refunded: fc.constantFrom(0, 5), metadata: opts.metadata ? fc.option(fc.constantFrom({k: 'a'}, {k: 'b', n: 1})) : fc.constant(null), status: fc.constantFrom('pending', 'succeeded', 'failed')})
    .map((c) => {
      const {metadata, ...rest} = c
      return {...rest, ...(metadata ? {metadata} : {}), origin: 'gateway_a', origin_id: key, product: 'lifetime', user_id: 'u1'}
    })
}

function partial(kind: 'charges' | 'subscriptions'): fc.Arbitrary<Record<string, unknown>> {
  if (kind === 'subscriptions') {
    return fc
      .tuple(fc.record({amount, created, currency, tax}, {requiredKeys: []}), fc.option(subscriptionStatus))
      .map(([fields, status]) => ({...fields, ...(status ?? {})}))
  }
  return fc.record({amount, created, currency, metadata: fc.constantFrom({k: 'u'}, {k: 'v', n: 2}), status: fc.constantFrom('pending', 'succeeded', 'failed'), tax}, {requiredKeys: []})
}

export type StreamOptions = {
  /** Leave deletes out (HTTP has no charge delete). */
  deletes?: boolean
  /** Full events as import rows: ids `import:<timestamp>`, one timestamp per event (the row's event). */
  imports?: boolean
  /** Creates carry metadata (imports read none from the test layout). */
  metadata?: boolean
  maxLength?: number
}

/** A stream: 1..maxLength distinct events over two records, then some of them delivered twice. */
export function streamOf(kind: 'charges' | 'subscriptions', o: StreamOptions = {}): fc.Arbitrary<Stream> {
  const actions = o.deletes === false ? fc.constantFrom('create', 'update', 'update') : fc.constantFrom('create', 'create', 'update', 'update', 'update', 'delete')
  const item = fc.record({action: actions, key: fc.constantFrom('k1', 'k2'), tick: fc.integer({max: 12, min: 0})}).chain((i) =>
    (i.action === 'create' ? full(kind, i.key, {metadata: o.metadata ?? true}) : i.action === 'update' ? partial(kind) : fc.constant({})).map((body) => ({...i, body})),
  )
  return fc
    .tuple(fc.array(item, {maxLength: o.maxLength ?? 10, minLength: 1}), fc.array(fc.nat(), {maxLength: 3}))
    .map(([items, dups]) => {
      const events: Stream = items.map((it, n) => {
        // Imports: a row's id is import:<its timestamp>, so every event gets its own second.
        const timestamp = o.imports ? T0 + it.tick * 100 + n : T0 + it.tick
        const id = o.imports && it.action === 'create' ? `import:${timestamp}` : `e${String(n).padStart(2, '0')}`
        return {action: it.action as Ev['action'], body: it.body, event: {id, timestamp}, key: it.key}
      })
      for (const d of dups) events.push(events[d % events.length]!)
      return events
    })
}

/** The stream in event order (what "the ordered stream" means), redeliveries right after their event. */
export function ordered(stream: Stream): Stream {
  return [...stream].sort((a, b) => compareEvents(a.event, b.event))
}

/** The stream in a seeded random order. */
export function orderStream(stream: Stream, seed: number): Stream {
  const out = [...stream]
  let s = seed >>> 0 || 1
  const next = () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** One event of a stream through the engine's write function for it (user u1, gateway_a). */
export async function applyEvent(kind: 'charges' | 'subscriptions', store: StorePort, e: Ev): Promise<void> {
  const k = {origin: 'gateway_a', origin_id: e.key, user_id: 'u1'}
  if (kind === 'subscriptions') {
    if (e.action === 'create') await createSubscription(store, e.body, e.event)
    else if (e.action === 'update') await updateSubscription(store, k, e.body, e.event)
    else await deleteSubscription(store, k, e.event)
  } else if (e.action === 'create') await createCharge(store, e.body, e.event)
  else if (e.action === 'update') await updateCharge(store, k, e.body, e.event)
  else await deleteCharge(store, k, e.event)
}
