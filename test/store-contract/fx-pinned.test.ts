import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {FxRate} from '../../src/fx/rates.js'
import type {StorePort} from '../../src/store/port.js'
import {ADAPTERS} from '../helpers/adapters.js'

/**
 * `fx prune --source LABEL` on every adapter, by example: `*` is the only wildcard, and the
 * pattern characters of the adapters' SQL (GLOB's ? [ ], LIKE's _ %) are literal around it.
 * test/store-contract/fx.test.ts proves the rule on random labels; these cases pin the
 * characters it may not draw.
 */

const LABELS = ['desk [a] 1', 'desk a 1', 'desk? 2', 'deskx 2', 'desk] 3', 'desk_4', 'deskz4', 'desk%5', 'desk 55']

describe.each(ADAPTERS)('fx removal by label: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeAll(async () => {
    ;({cleanup, store} = await adapter.open())
    const rows: FxRate[] = LABELS.map((source, i) => ({currency: 'EUR', date: `2026-01-${String(i + 1).padStart(2, '0')}`, rate: 1, source}))
    await store.transaction(
      async () => {
        await store.config.deleteFxRates({})
        await store.config.saveFxRates(rows)
      },
      {write: true},
    )
  })
  afterAll(() => cleanup())

  // Sorted here: the adapters' ORDER BY source may collate differently.
  const taken = async (label: string) => (await store.config.fxMatching({source: {label}})).sources.map((s) => s.source).sort()

  it.each([
    ['desk [a] 1', ['desk [a] 1']],
    ['desk? 2', ['desk? 2']],
    ['desk [a]*', ['desk [a] 1']],
    ['desk?*', ['desk? 2']],
    ['*]*', ['desk [a] 1', 'desk] 3']],
    ['desk_*', ['desk_4']],
    ['desk%*', ['desk%5']],
    ['desk*', LABELS],
  ])('%s takes %j', async (label, expected) => {
    expect(await taken(label)).toEqual([...expected].sort())
    for (const source of LABELS) expect(await store.config.fxFilterTakes({source: {label}}, {currency: 'EUR', date: '2026-01-01', rate: 1, source})).toBe(expected.includes(source))
  })
})
