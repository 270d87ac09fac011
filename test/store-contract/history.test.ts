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
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  const write = async <T>(fn: () => T) => await store.transaction(fn, {write: true})
  const context = {actor: 'alice', at: '2026-03-15T12:00:00.000Z', command: 'pricectl rounding set EUR'}

  it('records a write with its context, lazily, and restores the before image', async () => {
    expect(await store.history.active()).toBe(false)
    await store.history.begin(context)
    expect(await store.history.active()).toBe(true)
    expect(await store.history.currentChange()).toBeUndefined()
    await write(async () => await store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z'))
    const first = (await store.history.currentChange())!
    expect(await store.history.list({limit: 10})).toEqual([
      {...context, id: first, reverted_by: null, reverts: null, rows: [{action: 'inserted', count: 1, table: 'rounding_rules'}], summary: null},
    ])

    await store.history.begin({...context, actor: 'bob'})
    await write(async () => await store.config.saveRoundingRule('EUR', 'down 0.10', '2026-01-02T00:00:00.000Z'))
    const second = (await store.history.currentChange())!
    const [row] = await store.history.rows(second)
    expect(row).toMatchObject({action: 'updated', after: {rule: 'down 0.10'}, before: {currency: 'EUR', rule: 'nearest 0.05'}, key: ['EUR'], table: 'rounding_rules'})
    expect(await store.history.laterWritesOfRows(first)).toEqual([{change_id: second, key: ['EUR'], table: 'rounding_rules'}])
    expect(await store.history.currentImage('rounding_rules', ['EUR'])).toEqual(row.after)
    expect((await store.history.list({actor: 'bob', limit: 10})).map((c) => c.id)).toEqual([second])
    expect(await store.history.list({limit: 10, table: 'fx_rates'})).toEqual([])

    await store.history.begin({...context, command: 'pricectl revert'})
    await store.history.note({reverts: second, summary: `revert of change ${second}`})
    await write(async () => await store.history.restore([{before: row.before, key: row.key, table: row.table}]))
    expect(await store.config.roundingRule('EUR')).toBe('nearest 0.05')
    expect((await store.history.get(second))?.reverted_by).toBe(await store.history.currentChange())
    await write(async () => await store.history.restore([{before: null, key: ['EUR'], table: 'rounding_rules'}]))
    expect(await store.config.roundingRule('EUR')).toBeUndefined()
  })

  it('a rolled-back write leaves no history; after end() writes are not recorded', async () => {
    await store.history.begin(context)
    await expect(async () =>
      await write(async () => {
        await store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z')
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await store.history.currentChange()).toBeUndefined()
    expect(await store.history.list({limit: 10})).toEqual([])
    await store.history.end()
    await write(async () => await store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z'))
    expect(await store.history.list({limit: 10})).toEqual([])
  })
})
