import {setTimeout as sleep} from 'node:timers/promises'

import {isBusyCode} from '../store/busy.js'
import {HttpProblem} from './errors.js'

/** How long a write may wait for the store's write lock by default (`serve --write-timeout`). */
export const DEFAULT_WRITE_TIMEOUT_MS = 5000

/** Backoff between attempts at the write lock: short at first (a batch commit is a few ms), then at most this. */
const FIRST_RETRY_MS = 2
const MAX_RETRY_MS = 50

/**
 * Requests that share one attempt at the write lock (group commit): `run` gets every item
 * that joined, runs them in one transaction and answers one outcome per item, in order.
 * An error it throws is every item's; a busy store tries the whole group again. `parallel`:
 * groups that may run side by side, each in its own transaction (PostgreSQL's lock-writing
 * price groups, which take no store-wide lock), as many as the queue has slots.
 */
export type Group<I, R> = {parallel?: boolean; run: (items: readonly I[]) => Outcome<R>[] | Promise<Outcome<R>[]>}
export type Outcome<R> = {error: unknown} | {value: R}

/** A request in a group, with its own budget: it gets its 503 at its own deadline, whatever the group's. */
type Member = {deadline: number; item: unknown; reject: (error: unknown) => void; resolve: (value: unknown) => void}
/** A group of requests sharing one waiter; `open` while requests may still join it. */
type GroupState = {group: Group<never, unknown>; members: Member[]; open: boolean; waiter?: Waiter}

type Waiter = {
  attempt: () => unknown
  /** For a group: the latest deadline of its members (it keeps trying while one may wait). */
  deadline: number
  expiry?: NodeJS.Timeout
  group?: GroupState
  reject: (error: unknown) => void
  resolve: (value: unknown) => void
  running: boolean
}

export function isBusy(error: unknown): boolean {
  return isBusyCode((error as {code?: string} | undefined)?.code)
}

/**
 * The server's writes in arrival order, never blocking the event loop (docs/serve.md, "Writes
 * while another process writes"): better-sqlite3 is synchronous, so waiting for the lock
 * inside SQLite would stop every request. An attempt fails at once when busy (it wrote
 * nothing) and the oldest waiting write retries from a timer until its budget is spent;
 * the others queue behind it, first come, first served. PostgreSQL: 55P03 is busy.
 */
export class WriteQueue {
  private readonly waiting: Waiter[] = []
  private retry?: NodeJS.Timeout
  private pumping = false
  private backoff = FIRST_RETRY_MS
  private openGroup?: GroupState
  /** The waiter enqueued last: a group joined must be it (nothing joins a group behind another write). */
  private last?: Waiter
  /** Parallel groups running now, beside the queue. */
  private aside = 0
  /** Attempts that found the store locked (for tests and the curious). */
  busyAttempts = 0
  /** The most parallel groups that ran at once (for tests and the curious). */
  mostAside = 0

  constructor(
    readonly budgetMs: number = DEFAULT_WRITE_TIMEOUT_MS,
    /** How many parallel groups may run at once (the store's pool size; SQLite: 1, every write in turn). */
    readonly slots = 1,
  ) {}

  /** How many writes wait for the lock now. */
  get length(): number {
    return this.waiting.length
  }

  /**
   * Run `attempt` as soon as the write lock can be had and every earlier write is done.
   * Without contention it runs at once, in the caller's turn of the event loop.
   */
  run<T>(attempt: () => Promise<T> | T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue(attempt, resolve as (v: unknown) => void, reject)
    })
  }

  /**
   * Group commit: `item` joins the group waiting at the tail of the queue when that group is
   * `group` and has not started; otherwise it opens a new one there. A group starts as any
   * write does (at once on an idle queue), first lets the rest of this turn of the event loop
   * and the next poll phase arrive (collect()), then runs all its items in one attempt. Each
   * item's promise settles with its own outcome, after the group's commit. Arrival order is
   * kept: nothing joins a group behind another write.
   */
  join<I, R>(group: Group<I, R>, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const member: Member = {deadline: Date.now() + this.budgetMs, item, reject, resolve: resolve as (v: unknown) => void}
      const tail = this.openGroup
      if (tail?.open && tail.group === group && tail.waiter && this.last === tail.waiter) {
        tail.members.push(member)
        tail.waiter.deadline = member.deadline
        return
      }
      const g: GroupState = {group: group as Group<never, unknown>, members: [member], open: true}
      this.openGroup = g
      const close = () => {
        g.open = false
        if (this.openGroup === g) this.openGroup = undefined
      }
      g.waiter = this.enqueue(
        async () => {
          if (g.open) {
            await collect()
            close()
          }
          // The members still waiting (an expired one has had its 503), answered in this order.
          const members = [...g.members]
          return {members, outcomes: members.length === 0 ? [] : await group.run(members.map((m) => m.item as I))}
        },
        (value) => {
          const {members, outcomes} = value as {members: Member[]; outcomes: Outcome<R>[]}
          for (let i = 0; i < members.length; i++) {
            const o = outcomes[i]
            if ('error' in o) members[i].reject(o.error)
            else members[i].resolve(o.value)
          }
        },
        (error) => {
          close()
          for (const m of g.members) m.reject(error)
        },
        g,
      )
    })
  }

  private enqueue(attempt: () => unknown, resolve: (value: unknown) => void, reject: (error: unknown) => void, group?: GroupState): Waiter {
    const w: Waiter = {attempt, deadline: Date.now() + this.budgetMs, group, reject, resolve, running: false}
    this.waiting.push(w)
    this.last = w
    if (this.waiting.length === 1 && !this.retry && !this.pumping) void this.pump()
    else w.expiry = this.expireLater(w)
    return w
  }

  private expireLater(w: Waiter): NodeJS.Timeout {
    const g = w.group
    if (g) {
      // Each member of a group gets its 503 at its own deadline; the group waits on for the others.
      const first = Math.min(...g.members.map((m) => m.deadline))
      return setTimeout(() => {
        w.expiry = undefined
        if (w.running) return
        const now = Date.now()
        const expired = g.members.filter((m) => m.deadline <= now)
        g.members = g.members.filter((m) => m.deadline > now)
        for (const m of expired) m.reject(timedOut(this.budgetMs))
        if (g.members.length > 0) {
          w.expiry = this.expireLater(w)
          return
        }
        if (this.openGroup === g) this.openGroup = undefined
        g.open = false
        const i = this.waiting.indexOf(w)
        if (i !== -1) this.waiting.splice(i, 1)
      }, Math.max(0, first - Date.now()))
    }
    // A write waiting behind others gets its 503 at its own deadline, not when its turn comes.
    return setTimeout(() => {
      if (w.running) return
      const i = this.waiting.indexOf(w)
      if (i === -1) return
      this.waiting.splice(i, 1)
      w.reject(timedOut(this.budgetMs))
    }, Math.max(0, w.deadline - Date.now()))
  }

  /** The head waits for a parallel group to end (runAside starts the pump again), with its own deadline meanwhile. */
  private waitingForSlot(w: Waiter): void {
    w.expiry ??= this.expireLater(w)
  }

  /** Run a parallel group in a slot of its own; the queue goes on meanwhile (pump). */
  private async runAside(w: Waiter): Promise<void> {
    this.aside++
    this.mostAside = Math.max(this.mostAside, this.aside)
    let outcome: {error: unknown} | {value: unknown}
    for (let backoff = FIRST_RETRY_MS; ; backoff = Math.min(backoff * 2, MAX_RETRY_MS)) {
      w.running = true
      try {
        outcome = {value: await w.attempt()}
      } catch (error) {
        outcome = {error}
      }
      w.running = false
      if (!('error' in outcome && isBusy(outcome.error))) break
      this.busyAttempts++
      if (Date.now() >= w.deadline) {
        outcome = {error: timedOut(this.budgetMs)}
        break
      }
      w.expiry ??= this.expireLater(w)
      await sleep(Math.min(backoff * (0.5 + Math.random()), Math.max(1, w.deadline - Date.now())))
    }
    if (w.expiry) clearTimeout(w.expiry)
    this.aside--
    if ('error' in outcome) w.reject(outcome.error)
    else w.resolve(outcome.value)
    if (this.waiting.length > 0 && !this.pumping && !this.retry) void this.pump()
  }

  private async pump(): Promise<void> {
    this.retry = undefined
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.waiting.length > 0) {
        const w = this.waiting[0]
        if (this.slots > 1 && w.group?.group.parallel === true) {
          // A parallel group starts beside those running while a slot is free; else it waits for one.
          // At once: held back until the running ones had run a while, groups answered fewer
          // requests (docs/postgres.md, "The pool").
          if (this.aside >= this.slots) return this.waitingForSlot(w)
          this.waiting.shift()
          void this.runAside(w)
          continue
        }
        // Any other write runs alone: after the parallel groups started before it.
        if (this.aside > 0) return this.waitingForSlot(w)
        w.running = true
        let outcome: {error: unknown} | {value: unknown}
        try {
          outcome = {value: await w.attempt()}
        } catch (error) {
          outcome = {error}
        }
        w.running = false
        if ('error' in outcome && isBusy(outcome.error)) {
          this.busyAttempts++
          if (Date.now() < w.deadline) {
            w.expiry ??= this.expireLater(w)
            const delay = this.backoff * (0.5 + Math.random())
            this.backoff = Math.min(this.backoff * 2, MAX_RETRY_MS)
            this.retry = setTimeout(() => void this.pump(), Math.min(delay, Math.max(1, w.deadline - Date.now())))
            return
          }
          outcome = {error: timedOut(this.budgetMs)}
        }
        // A waiter may have expired while its attempt awaited (only async attempts can).
        if (this.waiting[0] === w) this.waiting.shift()
        if (w.expiry) clearTimeout(w.expiry)
        this.backoff = FIRST_RETRY_MS
        if ('error' in outcome) w.reject(outcome.error)
        else w.resolve(outcome.value)
        // Let reads and health checks in between queued writes.
        if (this.waiting.length > 0) await new Promise((resolve) => setImmediate(resolve))
      }
    } finally {
      this.pumping = false
    }
  }
}

/**
 * Until the next poll phase has run: every connection with a request ready then is read, and
 * its request joins. One turn (setImmediate) is not enough for a group started from a
 * database answer (the group before it ended), which is read in a poll phase: that turn's
 * check phase comes before the requests its answers brought back are polled. On PostgreSQL
 * with 5 connections per server, groups then split 1 and 4 for good instead of 5 together,
 * every statement serving fewer requests (docs/postgres.md, "The pool").
 */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setImmediate(resolve))
}

function timedOut(budgetMs: number): HttpProblem {
  return new HttpProblem(
    503,
    `the store is locked by another writer (an import or another pricectl) and stayed locked for the ${budgetMs / 1000} s write budget (serve --write-timeout): retry the request`,
    {'retry-after': '1'},
  )
}
