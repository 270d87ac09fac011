import {type EventLoopUtilization, performance} from 'node:perf_hooks'

/**
 * Whether the server's event loop has been busy: told apart from a client that paused when a
 * request timeout fires (docs/serve.md "Timeouts"). node:http counts a request's time from when
 * its connection was accepted or its first byte parsed; bytes the client sent at once but the
 * server had no turn to read (saturation: thousands of connections) time out like a client that
 * paused. The event-loop utilization over the last second (share of time spent running code,
 * not waiting for I/O) says which: a loop this busy did not read what was waiting for it.
 */
export class LoadWatch {
  /** ELU readings, oldest first, one every SAMPLE_MS, covering a little over WINDOW_MS. */
  private readonly samples: {at: number; elu: EventLoopUtilization}[] = []
  private readonly timer: NodeJS.Timeout

  static readonly SAMPLE_MS = 100
  static readonly WINDOW_MS = 1000
  /** Busy: running code this share of the window or more. */
  static readonly BUSY = 0.75

  constructor() {
    this.sample()
    this.timer = setInterval(() => this.sample(), LoadWatch.SAMPLE_MS)
    this.timer.unref()
  }

  private sample(): void {
    const now = performance.now()
    this.samples.push({at: now, elu: performance.eventLoopUtilization()})
    // Keep the newest reading at least WINDOW_MS old, and the ones after it.
    while (this.samples.length > 1 && now - this.samples[1].at >= LoadWatch.WINDOW_MS) this.samples.shift()
  }

  /** The share of the last second (at least; since the reading before a long stall) the loop spent running code, 0 to 1. */
  utilization(): number {
    const now = performance.now()
    // The newest reading at least WINDOW_MS old (a stall that kept the sampler from running is inside the span).
    let from = this.samples[0]
    for (const s of this.samples) if (now - s.at >= LoadWatch.WINDOW_MS) from = s
    return performance.eventLoopUtilization(performance.eventLoopUtilization(), from.elu).utilization
  }

  busy(): boolean {
    return this.utilization() >= LoadWatch.BUSY
  }

  stop(): void {
    clearInterval(this.timer)
  }
}
