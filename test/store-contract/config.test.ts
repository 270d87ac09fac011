import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {StorePort} from '../../src/store/port.js'
import {defaultFxSnapshot} from '../../src/fx/snapshot.js'
import {ADAPTERS} from '../helpers/adapters.js'

describe.each(ADAPTERS)('config repository contract: $name', (adapter) => {
  let store: StorePort
  let cleanup: () => void
  beforeEach(async () => {
    ;({cleanup, store} = await adapter.open())
  })
  afterEach(() => cleanup())

  const write = async (fn: () => Promise<void>) => await store.transaction(fn, {write: true})

  it('a new store holds the bundled FX snapshot: one rate per currency, sorted, the same as one by one', async () => {
    const snap = defaultFxSnapshot()
    const today = '2030-01-01'
    const all = await store.config.ratesOn(today, today)
    expect(all.map((r) => r.currency)).toEqual(Object.keys(snap.rates).sort())
    expect(all.find((r) => r.currency === 'EUR')).toEqual({currency: 'EUR', date: snap.date, rate: snap.rates.EUR, source: snap.source})
    for (const r of all.slice(0, 20)) expect(await store.config.rateOn(r.currency, today, today)).toEqual(r)
    expect(await store.config.rateOn('XXX', today, today)).toBeUndefined()
    expect((await store.config.latestSnapshotRate('EUR'))?.source).toBe(snap.source)
    expect(await store.config.nextOperatorRate('EUR', '2000-01-01')).toBeUndefined()
  })

  it('rounding rules: saved, read one and all (sorted), deleted', async () => {
    expect(await store.config.roundingRule('EUR')).toBeUndefined()
    await write(async () => {
      await store.config.saveRoundingRule('JPY', 'up 10', '2026-01-01T00:00:00.000Z')
      await store.config.saveRoundingRule('EUR', 'nearest 0.05', '2026-01-01T00:00:00.000Z')
      await store.config.saveRoundingRule('EUR', 'down 0.10', '2026-01-02T00:00:00.000Z')
    })
    expect(await store.config.roundingRule('EUR')).toBe('down 0.10')
    expect(await store.config.roundingRules()).toEqual([
      {currency: 'EUR', rule: 'down 0.10'},
      {currency: 'JPY', rule: 'up 10'},
    ])
    let dropped = false
    await write(async () => {
      dropped = await store.config.deleteRoundingRule('EUR')
    })
    expect(dropped).toBe(true)
    expect(await store.config.deleteRoundingRule('EUR')).toBe(false)
    expect(await store.config.roundingRules()).toEqual([{currency: 'JPY', rule: 'up 10'}])
  })

  it('gateway settings and currency-rule overrides: saved (replacing), listed, deleted', async () => {
    expect(await store.config.gatewaySettings()).toEqual([])
    const b = {accepted_currencies: '["EUR","USD"]', amount_format: 'minor' as const, fallback_currency: 'USD', gateway: 'gateway_b'}
    await write(async () => {
      await store.config.saveGatewaySettings({...b, fallback_currency: 'EUR'})
      await store.config.saveGatewaySettings(b)
      await store.config.saveGatewayRuleOverride({currency: 'ISK', divisible_by: 1, exponent: 0, gateway: 'gateway_a', max_amount: 999_999, min_amount: null}, '2026-01-01T00:00:00.000Z')
    })
    expect(await store.config.gatewaySettings()).toEqual([b])
    expect(await store.config.gatewayRuleOverrides()).toEqual([{currency: 'ISK', divisible_by: 1, exponent: 0, gateway: 'gateway_a', max_amount: 999_999, min_amount: null}])
    await write(async () => {
      expect(await store.config.deleteGatewaySettings('gateway_b')).toBe(true)
      expect(await store.config.deleteGatewayRuleOverride('gateway_a', 'ISK')).toBe(true)
      expect(await store.config.deleteGatewayRuleOverride('gateway_a', 'ISK')).toBe(false)
    })
    expect(await store.config.gatewaySettings()).toEqual([])
    expect(await store.config.gatewayRuleOverrides()).toEqual([])
  })

  it('settings and factors: unset is undefined; a new store has its default country', async () => {
    expect(await store.config.setting('no such setting')).toBeUndefined()
    expect(await store.config.setting('default_country')).toBe('US')
    expect(await store.config.localizationFactor('IN')).toBeUndefined()
  })

  it('rolls back a failed transaction whole', async () => {
    await expect(async () =>
      await write(async () => {
        await store.config.saveRoundingRule('EUR', 'up 1', '2026-01-01T00:00:00.000Z')
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await store.config.roundingRule('EUR')).toBeUndefined()
  })
})
