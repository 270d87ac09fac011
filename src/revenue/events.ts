import {randomBytes} from 'node:crypto'

import {nowSeconds} from '../clock.js'
import {EventInput} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'
import type {EventRef, Kind} from '../store/port/revenue.js'

/**
 * Event ordering. Every write to a subscription or charge is an event (id, timestamp).
 * Events are totally ordered by (timestamp, id), ids compared as plain strings, and the last
 * writer wins per field (order.ts), so the state after any delivery order equals the state
 * after the sorted replay:
 * - an event changes the fields whose last writer is older; one that changes none is
 *   "stale event ignored";
 * - an update or delete before its create is kept for it;
 * - the same id again: applied once.
 */
export {compareEvents, judge, recordKey} from '../store/port/revenue.js'
export type {Action, EventRef, Kind, Verdict} from '../store/port/revenue.js'

let counter = 0
/**
 * A generated event id that grows with the wall clock (12 hex digits of milliseconds, a
 * counter, random bits), so of two commands run in the same second the later one wins
 * the timestamp tie.
 */
export function newEventId(): string {
  counter = (counter + 1) % 0x10000
  return `evt_${Date.now().toString(16).padStart(12, '0')}${counter.toString(16).padStart(4, '0')}${randomBytes(4).toString('hex')}`
}

/** The event of a command: given flags or defaults (a generated id, now). */
export function eventFrom(input: {event_id?: string; event_timestamp?: unknown}): EventRef {
  const e = validate(EventInput, {event_id: input.event_id ?? newEventId(), event_timestamp: input.event_timestamp ?? nowSeconds()}, 'event')
  return {id: e.event_id, timestamp: e.event_timestamp}
}

export function staleMessage(kind: Kind, event: EventRef, latest: EventRef, deleted = false): string {
  const what = deleted ? `the ${kind}'s delete` : `the ${kind}'s latest event`
  return `stale event ignored: event ${event.id} at ${event.timestamp} is older than ${what} ${latest.id} at ${latest.timestamp}; nothing changed`
}
