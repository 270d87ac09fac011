import type {HistoryEvent, Period, Span} from '../store/port/revenue.js'
import {netMonthly} from './tax.js'

/**
 * A subscription's state over time (docs/revenue.md, "Subscription history"): its events
 * sorted by (timestamp, id), the first describing it from its beginning and each later one
 * from its own moment on, so the result is the same whatever order rows, files and writes
 * arrived in. A status change takes effect from its event's moment: earlier months keep
 * their MRR.
 */

/** A live stretch of one subscription (`sub`: its record key), with the MRR it adds (0: free or one-time). */
export type Stretch = Span & {sub: string}

const LIVE_STATUSES: ReadonlySet<string> = new Set(['active', 'canceled'])

/** The stretch (lo, hi] of an event's window in which it shows the subscription live, or undefined. */
function liveIn(e: HistoryEvent, lo: number, hi: number): undefined | {end: number; start: number} {
  if (!LIVE_STATUSES.has(e.status) || e.created === null) return undefined
  let from = e.created
  if (e.trial_end !== null && e.trial_end > from) from = e.trial_end
  let to = Number.POSITIVE_INFINITY
  if (e.status === 'canceled') {
    const end = e.cancel_at ?? e.canceled_at
    if (end === null) return undefined
    to = end
  }
  const start = Math.max(from, lo)
  const end = Math.min(to, hi)
  return start < end ? {end, start} : undefined
}

/** The events of one subscription in event order (the record, read as an event when its latest is not stored, is the latest). */
function ordered(events: HistoryEvent[]): HistoryEvent[] {
  if (events.length === 1) return events
  const out = events.filter((e) => !e.record)
  if (out.length === events.length) return out.sort(byEvent)
  // A record read as an event and a stored event with its id: the stored one (it keeps the trial dates the event showed).
  for (const r of events) if (r.record && !out.some((e) => e.event_id === r.event_id)) out.push(r)
  return out.sort(byEvent)
}

/** Event order (compareEvents of the storage port): timestamp, then id as a plain string. */
function byEvent(a: HistoryEvent, b: HistoryEvent): number {
  if (a.event_timestamp !== b.event_timestamp) return a.event_timestamp < b.event_timestamp ? -1 : 1
  return a.event_id === b.event_id ? 0 : a.event_id < b.event_id ? -1 : 1
}

/** The live stretches of every subscription of a history (RevenueRepository.history). */
export function stretches(history: readonly HistoryEvent[]): Stretch[] {
  const subs = new Map<string, HistoryEvent[]>()
  for (const e of history) {
    const sub = `${e.user_id}\u0000${e.origin}\u0000${e.origin_id}`
    const list = subs.get(sub)
    if (list) list.push(e)
    else subs.set(sub, [e])
  }
  const out: Stretch[] = []
  for (const [sub, events] of subs) {
    const list = ordered(events)
    let last: Stretch | undefined
    for (const [i, e] of list.entries()) {
      const lo = i === 0 ? Number.NEGATIVE_INFINITY : list[i].event_timestamp
      const hi = i === list.length - 1 ? Number.POSITIVE_INFINITY : list[i + 1].event_timestamp
      const live = liveIn(e, lo, hi)
      if (!live) continue
      // Net of tax (docs/revenue.md, "Tax"): what the event's amount holds beyond its tax.
      const mrr = netMonthly(e.amount_usd_monthly_minor, e.tax_minor, e.amount_minor) ?? 0
      const end = live.end === Number.POSITIVE_INFINITY ? null : live.end
      // One stretch while nothing the report sees changes.
      if (last && last.end === live.start && last.mrr === mrr && last.key === e.key) {
        last.end = end
        continue
      }
      last = {end, key: e.key, mrr, start: live.start, sub, user_id: e.user_id}
      out.push(last)
    }
  }
  return out
}

/** What `revenue report` counts of subscriptions in one group of one period (USD cents). */
export type SubscriptionFigures = {
  /** Live at the period's end. */
  active: number
  /** Stopped being live in the period (a cancel, an unpaid status). */
  churned: number
  /** Live at the end and adding no MRR (a free plan, a one-time product). */
  free: number
  mrr: number
  /** Began being live in the period. */
  new: number
  /** Distinct users with MRR above 0 at the end. */
  paying_users: number
}

export function noFigures(): SubscriptionFigures {
  return {active: 0, churned: 0, free: 0, mrr: 0, new: 0, paying_users: 0}
}

/** The first index of sorted `xs` with xs[i] >= t (`strict`: > t). */
function lowerBound(xs: readonly number[], t: number, strict = false): number {
  let lo = 0
  let hi = xs.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (strict ? xs[mid] <= t : xs[mid] < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The figures of each group, one map per period (periods sorted by start, each [start, end);
 * they may overlap, e.g. the buckets and then the whole window). A subscription's stretches
 * that touch (one ends where the next begins, in the same group) are one run: it begins
 * (new) and ends (churned) once.
 */
export function figures(all: readonly Stretch[], periods: readonly Period[]): Map<string, SubscriptionFigures>[] {
  const out = periods.map(() => new Map<string, SubscriptionFigures>())
  const users = periods.map(() => new Map<string, Set<string>>())
  const get = (i: number, key: string) => {
    let f = out[i].get(key)
    if (!f) out[i].set(key, (f = noFigures()))
    return f
  }
  // Run boundaries: the starts and ends where no stretch of the same subscription and group continues.
  const ends = new Set<string>()
  const starts = new Set<string>()
  for (const s of all) {
    starts.add(`${s.sub}\u0001${s.key}\u0001${s.start}`)
    if (s.end !== null) ends.add(`${s.sub}\u0001${s.key}\u0001${s.end}`)
  }
  const order = periods.map((p, i) => ({i, p})).sort((a, b) => a.p.end - b.p.end)
  const byEnd = order.map((o) => o.p.end)
  const counted = periods.map(() => ({churned: new Set<string>(), new: new Set<string>()}))
  for (const s of all) {
    // Live at a period's end e: start < e <= end.
    const from = lowerBound(byEnd, s.start, true)
    const to = s.end === null ? byEnd.length : lowerBound(byEnd, s.end, true)
    for (let j = from; j < to; j++) {
      const i = order[j].i
      const f = get(i, s.key)
      f.active++
      f.mrr += s.mrr
      if (s.mrr > 0) {
        let u = users[i].get(s.key)
        if (!u) users[i].set(s.key, (u = new Set()))
        u.add(s.user_id)
      } else f.free++
    }
    const begins = !ends.has(`${s.sub}\u0001${s.key}\u0001${s.start}`)
    const stops = s.end !== null && !starts.has(`${s.sub}\u0001${s.key}\u0001${s.end}`)
    if (!begins && !stops) continue
    for (const [i, p] of periods.entries()) {
      if (begins && s.start >= p.start && s.start < p.end && !counted[i].new.has(`${s.sub}\u0001${s.key}`)) {
        counted[i].new.add(`${s.sub}\u0001${s.key}`)
        get(i, s.key).new++
      }
      if (stops && s.end! >= p.start && s.end! < p.end && !counted[i].churned.has(`${s.sub}\u0001${s.key}`)) {
        counted[i].churned.add(`${s.sub}\u0001${s.key}`)
        get(i, s.key).churned++
      }
    }
  }
  for (const [i, groups] of users.entries()) for (const [key, u] of groups) get(i, key).paying_users = u.size
  return out
}

/** The stretches that add MRR (what movements and cohorts are computed from). */
export function paying(all: readonly Stretch[]): Stretch[] {
  return all.filter((s) => s.mrr > 0)
}
