import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import type {Cell} from '../../src/store/port/tables.js'
import {ADAPTERS} from '../helpers/adapters.js'

const KEY = (id: bigint, name: string): Cell[] => [id, name, `pk_${id}`, `hash_${id}`, '2026-01-01T00:00:00Z', null, null]
const KEY_COLUMNS = ['id', 'name', 'prefix', 'hash', 'created_at', 'revoked_at', 'last_used_at']

describe.each(ADAPTERS)('tables contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  it('lists every data table, parents before the tables that reference them, with portable column types', async () => {
    const shapes = await store.tables.list()
    const names = shapes.map((t) => t.name)
    for (const t of ['settings', 'products', 'country_prices', 'coupons', 'users', 'locks', 'subscriptions', 'charges', 'events', 'api_keys', 'changes', 'change_rows', 'fx_rates', 'currency_exponents']) {
      expect(names, t).toContain(t)
    }
    expect(names.indexOf('products')).toBeLessThan(names.indexOf('country_prices'))
    expect(names.indexOf('changes')).toBeLessThan(names.indexOf('change_rows'))
    expect(names.indexOf('experiments')).toBeLessThan(names.indexOf('arms'))
    const charges = shapes.find((t) => t.name === 'charges')!
    expect(charges.columns.find((c) => c.name === 'amount_minor')?.type).toBe('integer')
    expect(charges.columns.find((c) => c.name === 'user_id')?.type).toBe('text')
    expect(shapes.find((t) => t.name === 'fx_rates')!.columns.find((c) => c.name === 'rate')?.type).toBe('real')
  })

  it('replace empties every table (the seed too), writes rows as given, and reads them back in key order, a chunk at a time', async () => {
    expect((await store.tables.counts()).settings).toBeGreaterThan(0)
    const big = 9_007_199_254_740_993n
    await store.tables.replace(async (write) => {
      await write('api_keys', KEY_COLUMNS, [KEY(3n, 'c'), KEY(1n, 'a')])
      await write('api_keys', KEY_COLUMNS, [KEY(2n, 'b'), KEY(big, 'big')])
    })
    const counts = await store.tables.counts()
    expect(counts.api_keys).toBe(4)
    expect(counts.settings).toBe(0)
    expect(counts.fx_rates).toBe(0)
    const chunks = await store.tables.snapshot(async () => {
      const read = []
      for await (const chunk of store.tables.read('api_keys', ['id', 'name'], 3)) read.push(chunk)
      return read
    })
    expect(chunks.map((c) => c.length)).toEqual([3, 1])
    expect(chunks.flat().map((r) => r[1])).toEqual(['a', 'b', 'c', 'big'])
    expect(chunks.flat()[3][0]).toBe(big)
    // The port's own reads see them.
    expect((await store.keys.list()).map((k) => k.name)).toEqual(['a', 'b', 'c', 'big'])
  })

  it('replace leaves the store as it was when anything throws, and checks foreign keys at the end', async () => {
    const before = await store.tables.counts()
    await expect(async () =>
      await store.tables.replace(async (write) => {
        await write('api_keys', KEY_COLUMNS, [KEY(1n, 'a')])
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await store.tables.counts()).toEqual(before)
    await expect(async () =>
      await store.tables.replace(async (write) => {
        await write('country_prices', ['product_id', 'country', 'currency', 'amount_minor', 'position'], [[42n, 'DE', 'EUR', 999n, 0n]])
      }),
    ).rejects.toThrow()
    expect(await store.tables.counts()).toEqual(before)
  })

  it('takes child rows before their parents within one replace (foreign keys checked at the end)', async () => {
    await store.tables.replace(async (write) => {
      await write('country_prices', ['product_id', 'country', 'currency', 'amount_minor', 'position'], [[7n, 'DE', 'EUR', 999n, 0n]])
      await write('products', ['id', 'api_id', 'name', 'base_px_minor', 'interval', 'interval_count', 'baseline_id', 'created_at', 'updated_at'], [[7n, 'p7', 'P7', 1000n, 'month', 1n, 8n, 'x', 'x'], [8n, 'p8', 'P8', 500n, 'month', 1n, null, 'x', 'x']])
    })
    expect(await store.tables.counts()).toMatchObject({country_prices: 1, products: 2})
  })
})
