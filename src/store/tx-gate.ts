import {AsyncLocalStorage} from 'node:async_hooks'

/**
 * One connection's transactions, one at a time: a transaction begun while another one's
 * body awaits waits for it (the server runs requests side by side), and a transaction begun
 * from inside a body (that body's own async context) is nested, a savepoint. A transaction
 * open outside any body (the import writer's batch, left open across calls) is joined too.
 */
/**
 * The gates whose transaction bodies the current async context runs inside, innermost first.
 * One AsyncLocalStorage for every gate: each live instance costs every promise made from
 * then on (Node propagates each instance's store), and a process opens many stores.
 */
type Inside = {gate: TxGate; outer: Inside | undefined}
const scope = new AsyncLocalStorage<Inside>()

export class TxGate {
  private held = false
  private readonly waiting: (() => void)[] = []

  /** Whether a transaction begun now is nested in the open one (`open`: the connection has one). */
  nested(open: boolean): boolean {
    return open && (!this.held || this.inside())
  }

  /** Whether a transaction holds the gate. */
  get busy(): boolean {
    return this.held
  }

  /** Whether a transaction body runs here (this async context is inside the gate's run). */
  inside(): boolean {
    for (let i = scope.getStore(); i !== undefined; i = i.outer) if (i.gate === this) return true
    return false
  }

  /** Run `body` holding the gate, in a context that marks transactions begun inside it as nested. */
  async run<T>(body: () => Promise<T>): Promise<T> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.held = true
    try {
      return await scope.run({gate: this, outer: scope.getStore()}, body)
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.held = false
    }
  }
}
