import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'

/**
 * The history part of the port (docs/history.md): writes made through any repository
 * while a context is set are recorded in their own transaction, and restore() puts rows
 * back. Written through the config repository, so any adapter can run it.
 */
describe.each(ADAPTERS)('history repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(() => {
    ;({cleanup, store} = adapter.open())
  })
  afterEach(() => cleanup())

  const write = <T>(fn: () => T) => store.transaction(fn, {write: true})
  const context = {actor: 'alice', at: '2026-03-15T12:00:00.000Z', command: 'pricectl rounding set EUR'}

  it('records a write with its context, lazily, and restores the before image', () => {
    expect(store.history.active()).toBe(false)
    store.history.begin(context)
    expect(store.history.active()).toBe(true)
    expect(store.history.currentChange()).toBeUndefined()
    write(() => store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z'))
    const first = store.history.currentChange()!
    expect(store.history.list({limit: 10})).toEqual([
      {...context, id: first, reverted_by: null, reverts: null, rows: [{action: 'inserted', count: 1, table: 'rounding_rules'}], summary: null},
    ])

    store.history.begin({...context, actor: 'bob'})
    write(() => store.config.saveRoundingRule('EUR', 'down 0.10', '2026-01-02T00:00:00.000Z'))
    const second = store.history.currentChange()!
    const [row] = store.history.rows(second)
    expect(row).toMatchObject({action: 'updated', after: {rule: 'down 0.10'}, before: {currency: 'EUR', rule: 'nearest 0.05'}, key: ['EUR'], table: 'rounding_rules'})
    expect(store.history.laterWritesOfRows(first)).toEqual([{change_id: second, key: ['EUR'], table: 'rounding_rules'}])
    expect(store.history.currentImage('rounding_rules', ['EUR'])).toEqual(row.after)
    expect(store.history.list({actor: 'bob', limit: 10}).map((c) => c.id)).toEqual([second])
    expect(store.history.list({limit: 10, table: 'fx_rates'})).toEqual([])

    store.history.begin({...context, command: 'pricectl revert'})
    store.history.note({reverts: second, summary: `revert of change ${second}`})
    write(() => store.history.restore([{before: row.before, key: row.key, table: row.table}]))
    expect(store.config.roundingRule('EUR')).toBe('nearest 0.05')
    expect(store.history.get(second)?.reverted_by).toBe(store.history.currentChange())
    write(() => store.history.restore([{before: null, key: ['EUR'], table: 'rounding_rules'}]))
    expect(store.config.roundingRule('EUR')).toBeUndefined()
  })

  it('a rolled-back write leaves no history; after end() writes are not recorded', () => {
    store.history.begin(context)
    expect(() =>
      write(() => {
        store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z')
        throw new Error('boom')
      }),
    ).toThrow('boom')
    expect(store.history.currentChange()).toBeUndefined()
    expect(store.history.list({limit: 10})).toEqual([])
    store.history.end()
    write(() => store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z'))
    expect(store.history.list({limit: 10})).toEqual([])
  })
})
