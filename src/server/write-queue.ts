import {isBusyCode} from '../store/busy.js'
import {HttpProblem} from './errors.js'

/** How long a write may wait for the store's write lock by default (`serve --write-timeout`). */
export const DEFAULT_WRITE_TIMEOUT_MS = 5000

/** Backoff between attempts at the write lock: short at first (a batch commit is a few ms), then at most this. */
const FIRST_RETRY_MS = 2
const MAX_RETRY_MS = 50

type Waiter = {
  attempt: () => unknown
  deadline: number
  expiry?: NodeJS.Timeout
  reject: (error: unknown) => void
  resolve: (value: unknown) => void
  running: boolean
}

export function isBusy(error: unknown): boolean {
  return isBusyCode((error as {code?: string} | undefined)?.code)
}

/**
 * The server's writes, in arrival order, without ever blocking the event loop.
 *
 * better-sqlite3 is synchronous: with a busy timeout, a write that finds the store locked
 * by another process (an import, a `pricectl` command) would spin inside SQLite and stop
 * every other request (health, reads, 401s) for as long as it waits. The server's
 * connection therefore has no busy timeout: an attempt (a function that starts with
 * BEGIN IMMEDIATE) fails at once with SQLITE_BUSY, and is tried again from a timer with a
 * growing, jittered backoff until the lock is free or its time budget is spent (503 with
 * Retry-After). Only the oldest waiting write retries; the others wait behind it, so
 * writes are served first come, first served and cannot starve each other. An attempt
 * that fails with SQLITE_BUSY wrote nothing (its transaction never began). PostgreSQL: the
 * same, with the store's write lock (an advisory lock) tried at BEGIN and 55P03 for busy.
 */
export class WriteQueue {
  private readonly waiting: Waiter[] = []
  private retry?: NodeJS.Timeout
  private pumping = false
  private backoff = FIRST_RETRY_MS
  /** Attempts that found the store locked (for tests and the curious). */
  busyAttempts = 0

  constructor(readonly budgetMs: number = DEFAULT_WRITE_TIMEOUT_MS) {}

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
      const w: Waiter = {attempt, deadline: Date.now() + this.budgetMs, reject, resolve: resolve as (v: unknown) => void, running: false}
      this.waiting.push(w)
      if (this.waiting.length === 1 && !this.retry && !this.pumping) void this.pump()
      else w.expiry = this.expireLater(w)
    })
  }

  private expireLater(w: Waiter): NodeJS.Timeout {
    // A write waiting behind others gets its 503 at its own deadline, not when its turn comes.
    return setTimeout(() => {
      if (w.running) return
      const i = this.waiting.indexOf(w)
      if (i === -1) return
      this.waiting.splice(i, 1)
      w.reject(timedOut(this.budgetMs))
    }, Math.max(0, w.deadline - Date.now()))
  }

  private async pump(): Promise<void> {
    this.retry = undefined
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.waiting.length > 0) {
        const w = this.waiting[0]
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

function timedOut(budgetMs: number): HttpProblem {
  return new HttpProblem(
    503,
    `the store is locked by another writer (an import or another pricectl) and stayed locked for the ${budgetMs / 1000} s write budget (serve --write-timeout): retry the request`,
    {'retry-after': '1'},
  )
}
