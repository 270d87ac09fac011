import {AsyncLocalStorage} from 'node:async_hooks'

/**
 * A store's transactions, at most `size` at a time, one per slot (a connection of the pool):
 * a transaction begun while every slot's body awaits waits for one (first come, first
 * served), and a transaction begun from inside a body (that body's own async context) is
 * nested, a savepoint of that slot's transaction. A transaction open outside any body (the
 * import writer's batch, left open across calls) is joined too. SQLite has one slot.
 */
/**
 * The gates (and slots) whose transaction bodies the current async context runs inside,
 * innermost first. One AsyncLocalStorage for every gate: each live instance costs every
 * promise made from then on (Node propagates each instance's store), and a process opens many stores.
 */
type Inside = {gate: TxGate; outer: Inside | undefined; slot: number}
const scope = new AsyncLocalStorage<Inside>()

export class TxGate {
  private readonly held: boolean[]
  private readonly waiting: ((slot: number) => void)[] = []

  constructor(readonly size = 1) {
    this.held = Array.from({length: size}, () => false)
  }

  /** Whether a transaction begun now is nested in the open one of slot 0 (`open`: its connection has one). */
  nested(open: boolean): boolean {
    return open && (!this.held[0] || this.inside())
  }

  /** Whether a transaction holds slot 0 (`slot`: that one). */
  busy(slot = 0): boolean {
    return this.held[slot]
  }

  /** Whether a transaction body runs here (this async context is inside the gate's run). */
  inside(): boolean {
    return this.slot() !== undefined
  }

  /** The slot whose transaction body this async context runs inside, if any. */
  slot(): number | undefined {
    for (let i = scope.getStore(); i !== undefined; i = i.outer) if (i.gate === this) return i.slot
    return undefined
  }

  /** Run `body` holding a free slot, in a context that marks transactions begun inside it as nested. */
  async run<T>(body: () => Promise<T>): Promise<T> {
    let slot = this.held.indexOf(false)
    if (slot < 0) slot = await new Promise<number>((resolve) => this.waiting.push(resolve))
    this.held[slot] = true
    try {
      return await scope.run({gate: this, outer: scope.getStore(), slot}, body)
    } finally {
      // Handed to the next waiter as it stands (held), so no one takes it in between.
      const next = this.waiting.shift()
      if (next) next(slot)
      else this.held[slot] = false
    }
  }
}
