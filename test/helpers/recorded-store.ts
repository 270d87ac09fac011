import type {PricingContext} from '../../src/pricing/context.js'
import type {StorePort} from '../../src/store/port.js'

/** Where a repository call was made: while a chunk begins, while it is priced, at its flush, or outside any chunk. */
export type Phase = 'begin' | 'calculation' | 'flush' | 'outside'
export type Call = {method: string; phase: Phase}

const REPOSITORIES = new Set<PropertyKey>(['catalog', 'config', 'experiments', 'history', 'imports', 'keys', 'pricing', 'revenue', 'segments', 'tables'])

/**
 * A real store whose repositories record every method call with the phase of the pricing
 * chunk it was made in (`phases` marks them on a context opened over `store`), and throw on a
 * call made while a chunk is priced (recorded first: a batch reports the error as its line's).
 * Chunk begins and flushes are recorded too ('chunk.begin', 'chunk.flush'), so a flush made
 * in the middle of a chunk shows.
 */
export function recordedStore(real: StorePort): {calls: Call[]; phases: (ctx: PricingContext) => void; store: StorePort} {
  const calls: Call[] = []
  const state: {phase: Phase} = {phase: 'outside'}
  const wrapped = new Map<PropertyKey, unknown>()
  const wrap = (name: string, repo: object): unknown =>
    new Proxy(repo, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls.push({method: `${name}.${String(prop)}`, phase: state.phase})
          if (state.phase === 'calculation') throw new Error(`${name}.${String(prop)} called while a chunk is priced`)
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
  const store = new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown
      if (REPOSITORIES.has(prop) && value && typeof value === 'object') {
        if (!wrapped.has(prop)) wrapped.set(prop, wrap(String(prop), value))
        return wrapped.get(prop)
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  const phases = (ctx: PricingContext): void => {
    const chunk = ctx.chunk
    const begin = chunk.begin.bind(chunk)
    const flush = chunk.flush.bind(chunk)
    const close = chunk.close.bind(chunk)
    chunk.begin = async (...args: Parameters<typeof begin>) => {
      calls.push({method: 'chunk.begin', phase: state.phase})
      state.phase = 'begin'
      await begin(...args)
      state.phase = 'calculation'
    }
    chunk.flush = async () => {
      calls.push({method: 'chunk.flush', phase: state.phase})
      const before = state.phase
      state.phase = 'flush'
      try {
        await flush()
      } finally {
        state.phase = before
      }
    }
    chunk.close = () => {
      close()
      state.phase = 'outside'
    }
  }
  return {calls, phases, store}
}

/** The calls made while a chunk was priced, and the chunk events that are not one flush per begin. */
export function readsWhilePricing(calls: Call[]): {duringCalculation: string[]; flushesPerBegin: number[]} {
  const duringCalculation = calls.filter((c) => c.phase === 'calculation' && c.method !== 'chunk.flush').map((c) => c.method)
  const flushesPerBegin: number[] = []
  for (const c of calls) {
    if (c.method === 'chunk.begin') flushesPerBegin.push(0)
    else if (c.method === 'chunk.flush') flushesPerBegin[flushesPerBegin.length - 1]++
  }
  return {duringCalculation, flushesPerBegin}
}
