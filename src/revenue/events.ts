import {randomBytes} from 'node:crypto'

import {nowIso, nowSeconds} from '../clock.js'
import {EventInput} from '../schemas/revenue.js'
import {validate} from '../schemas/validate.js'
import type {DB} from '../store/db.js'

/**
 * Event ordering. Every write to a subscription or charge is an event (id, timestamp).
 * Events are totally ordered by (timestamp, id), ids compared as plain strings, so the
 * state after any delivery order equals the state after the sorted replay:
 * - newer than the record's latest event: applied;
 * - older (or the same timestamp with a smaller id): "stale event ignored", nothing changes;
 * - the same id again: applied once.
 */
export type EventRef = {id: string; timestamp: number}
export type Kind = 'charge' | 'subscription'
export type Action = 'create' | 'delete' | 'update'
export type Verdict = 'apply' | 'duplicate' | 'stale'

export function compareEvents(a: EventRef, b: EventRef): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1
}

/** What an event does to a record whose latest event is `latest` (undefined: no record). */
export function judge(event: EventRef, latest: EventRef | undefined): Verdict {
  if (!latest) return 'apply'
  const c = compareEvents(event, latest)
  return c > 0 ? 'apply' : c === 0 ? 'duplicate' : 'stale'
}

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

export function recordKey(userId: string, origin: string, originId: string): string {
  return JSON.stringify([userId, origin, originId])
}

/** The event id was applied before (by any write of this store). */
export function eventApplied(db: DB, id: string): boolean {
  return db.prepare('SELECT 1 FROM events WHERE event_id = ?').get(id) !== undefined
}

export function logEvent(db: DB, kind: Kind, action: Action, key: string, event: EventRef): void {
  db.prepare('INSERT INTO events (event_id, kind, action, record_key, timestamp, applied_at) VALUES (?, ?, ?, ?, ?, ?)').run(event.id, kind, action, key, event.timestamp, nowIso())
}

/** The latest delete of a record (a tombstone), so an older create cannot resurrect it. */
export function latestDelete(db: DB, kind: Kind, key: string): EventRef | undefined {
  const row = db
    .prepare("SELECT event_id AS id, timestamp FROM events WHERE kind = ? AND record_key = ? AND action = 'delete' ORDER BY timestamp DESC, event_id DESC LIMIT 1")
    .get(kind, key) as EventRef | undefined
  return row
}

/** Every tombstone of a kind, for bulk imports (deletes are rare, so this stays small). */
export function allDeletes(db: DB, kind: Kind): Map<string, EventRef> {
  const out = new Map<string, EventRef>()
  const rows = db.prepare("SELECT record_key, event_id AS id, timestamp FROM events WHERE kind = ? AND action = 'delete'").all(kind) as (EventRef & {record_key: string})[]
  for (const r of rows) {
    const prev = out.get(r.record_key)
    if (!prev || compareEvents(r, prev) > 0) out.set(r.record_key, {id: r.id, timestamp: r.timestamp})
  }
  return out
}

export function staleMessage(kind: Kind, event: EventRef, latest: EventRef, deleted = false): string {
  const what = deleted ? `the ${kind}'s delete` : `the ${kind}'s latest event`
  return `stale event ignored: event ${event.id} at ${event.timestamp} is older than ${what} ${latest.id} at ${latest.timestamp}; nothing changed`
}
