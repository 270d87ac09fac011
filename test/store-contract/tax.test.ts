import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {rateFor, taxSettingsOf} from '../../src/tax/tax.js'
import {ADAPTERS} from '../helpers/adapters.js'

/**
 * Tax in prices in the config part of the storage port (schema version 7; docs/tax.md):
 * operator tax rates dated like FX rates, one per country, category and day, and the tax
 * behaviour settings of the store, countries and products; both recorded in the history and
 * restored by a revert. The same on every adapter.
 */

const AT = '2026-06-01T00:00:00.000Z'

describe.each(ADAPTERS)('tax contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  const write = async <T>(fn: () => T): Promise<T> => await store.transaction(fn, {write: true})

  it('keeps dated operator rates per country and category; the same day replaces; deletes by day or whole', async () => {
    expect(await store.config.taxRates()).toEqual([])
    await write(async () => {
      await store.config.saveTaxRate({bp: 2000, category: '', country: 'DE', from: '2026-01-01', source: 'manual'}, AT)
      await store.config.saveTaxRate({bp: 2100, category: '', country: 'DE', from: '2027-01-01', source: 'manual'}, AT)
      await store.config.saveTaxRate({bp: 500, category: 'ebook', country: 'DE', from: '2026-01-01', source: 'manual'}, AT)
      await store.config.saveTaxRate({bp: 1925, category: '', country: 'CM', from: '2026-01-01', source: 'manual'}, AT)
      await store.config.saveTaxRate({bp: 1950, category: '', country: 'CM', from: '2026-01-01', source: 'law 2026'}, AT)
    })
    const rows = await store.config.taxRates()
    expect(rows).toEqual([
      {bp: 1950, category: '', country: 'CM', from: '2026-01-01', source: 'law 2026'},
      {bp: 2000, category: '', country: 'DE', from: '2026-01-01', source: 'manual'},
      {bp: 2100, category: '', country: 'DE', from: '2027-01-01', source: 'manual'},
      {bp: 500, category: 'ebook', country: 'DE', from: '2026-01-01', source: 'manual'},
    ])
    // Dated: the 2027 rate is scheduled, not used before its day.
    expect(rateFor(rows, 'DE', 'standard', '2026-06-01').bp).toBe(2000)
    expect(rateFor(rows, 'DE', 'standard', '2027-01-01').bp).toBe(2100)
    expect(await write(async () => await store.config.deleteTaxRates('DE', '', '2027-01-01'))).toBe(1)
    expect((await store.config.taxRates()).filter((r) => r.country === 'DE')).toHaveLength(2)
    expect(await write(async () => await store.config.deleteTaxRates('DE', 'ebook'))).toBe(1)
    expect((await store.config.taxRates()).map((r) => `${r.country}${r.category}`)).toEqual(['CM', 'DE'])
  })

  it('keeps behaviour settings of the store, countries and products, and a product category', async () => {
    await write(async () => {
      await store.config.saveTaxSetting({behavior: 'inclusive', category: null, scope: 'store', subject: ''}, AT)
      await store.config.saveTaxSetting({behavior: 'exclusive', category: null, scope: 'country', subject: 'FR'}, AT)
      await store.config.saveTaxSetting({behavior: null, category: 'ebook', scope: 'product', subject: 'book'}, AT)
      await store.config.saveTaxSetting({behavior: 'exclusive', category: 'ebook', scope: 'product', subject: 'book'}, AT)
    })
    const rows = await store.config.taxSettings()
    expect(rows).toEqual([
      {behavior: 'exclusive', category: null, scope: 'country', subject: 'FR'},
      {behavior: 'exclusive', category: 'ebook', scope: 'product', subject: 'book'},
      {behavior: 'inclusive', category: null, scope: 'store', subject: ''},
    ])
    const s = taxSettingsOf(rows)
    expect(s.store).toBe('inclusive')
    expect(s.countries.get('FR')).toBe('exclusive')
    expect(await write(async () => await store.config.deleteTaxSetting('country', 'FR'))).toBe(true)
    expect(await store.config.deleteTaxSetting('country', 'FR')).toBe(false)
  })

  it('records tax writes in the history and restores them', async () => {
    await store.history.begin({actor: 'alice', at: AT, command: 'pricectl tax set DE 20'})
    await write(async () => await store.config.saveTaxRate({bp: 2000, category: '', country: 'DE', from: '2026-01-01', source: 'manual'}, AT))
    await write(async () => await store.config.saveTaxSetting({behavior: 'inclusive', category: null, scope: 'store', subject: ''}, AT))
    const change = (await store.history.currentChange())!
    await store.history.end()
    const rows = await store.history.rows(change)
    expect(rows.map((r) => [r.table, r.action, r.key])).toEqual([
      ['tax_rates', 'inserted', ['DE', '', '2026-01-01']],
      ['tax_settings', 'inserted', ['store', '']],
    ])
    await store.history.begin({actor: 'alice', at: AT, command: 'pricectl revert'})
    await write(async () => await store.history.restore(rows.map((r) => ({before: r.before, key: r.key, table: r.table})).reverse()))
    await store.history.end()
    expect(await store.config.taxRates()).toEqual([])
    expect(await store.config.taxSettings()).toEqual([])
  })
})
