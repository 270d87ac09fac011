import {AsyncLocalStorage} from 'node:async_hooks'

/**
 * One connection's transactions, one at a time: a transaction begun while another one's
 * body awaits waits for it (the server runs requests side by side), and a transaction begun
 * from inside a body (that body's own async context) is nested, a savepoint. A transaction
 * open outside any body (the import writer's batch, left open across calls) is joined too.
 */
export class TxGate {
  private held = false
  private readonly waiting: (() => void)[] = []
  private readonly scope = new AsyncLocalStorage<TxGate>()

  /** Whether a transaction begun now is nested in the open one (`open`: the connection has one). */
  nested(open: boolean): boolean {
    return open && (!this.held || this.scope.getStore() === this)
  }

  /** Whether a transaction holds the gate. */
  get busy(): boolean {
    return this.held
  }

  /** Whether a transaction body runs here (this async context is inside the gate's run). */
  inside(): boolean {
    return this.scope.getStore() === this
  }

  /** Run `body` holding the gate, in a context that marks transactions begun inside it as nested. */
  async run<T>(body: () => Promise<T>): Promise<T> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.held = true
    try {
      return await this.scope.run(this, body)
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.held = false
    }
  }
}
