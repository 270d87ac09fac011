import {describe, expect, it} from 'vitest'

import {revenueCohorts} from '../../src/revenue/cohorts.js'
import {eventFrom, newEventId, staleMessage} from '../../src/revenue/events.js'
import {FxTable} from '../../src/revenue/money.js'
import {openStore} from '../../src/store/db.js'
import type {FxHistory} from '../../src/store/port/revenue.js'
import {addProduct, subscription} from '../helpers/contract-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Edges of the revenue engine a user meets directly: the shape of generated event ids, the
 * words of a stale event and of a bad one, the cohorts' default window, and how often an
 * import reads a currency's FX history.
 */

const t = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000

describe('event ids and messages', () => {
  it('a generated id is evt_ and 24 hex digits (milliseconds, a counter, random bits), so ids of one millisecond still sort in order', () => {
    const ids = Array.from({length: 50}, () => newEventId())
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{24}$/)
    // The same millisecond: the counter decides.
    const sameMs = ids.filter((id) => id.slice(4, 16) === ids[0]!.slice(4, 16))
    for (let i = 1; i < sameMs.length; i++) expect(sameMs[i - 1]!.slice(0, 20) < sameMs[i]!.slice(0, 20), `${sameMs[i - 1]} < ${sameMs[i]}`).toBe(true)
  })

  it('a bad event names what is wrong with it', () => {
    expect(() => eventFrom({event_id: 'e1', event_timestamp: 'soon'})).toThrow('invalid event: event_timestamp: expected a UNIX timestamp in seconds, got "soon"')
    expect(eventFrom({event_id: 'e1', event_timestamp: 1_767_225_600})).toEqual({id: 'e1', timestamp: 1_767_225_600})
  })

  it('a stale event is told what it is older than: the latest event unless a delete is named', () => {
    const e = {id: 'old', timestamp: 1_767_225_500}
    const latest = {id: 'new', timestamp: 1_767_225_600}
    expect(staleMessage('charge', e, latest)).toBe("stale event ignored: event old at 1767225500 is older than the charge's latest event new at 1767225600; nothing changed")
    expect(staleMessage('subscription', e, latest, true)).toBe("stale event ignored: event old at 1767225500 is older than the subscription's delete new at 1767225600; nothing changed")
  })
})

describe('revenue cohorts', () => {
  it('without --since: the twelve signup months up to until', async () => {
    const store = openStore(tempStore())
    try {
      const product = await addProduct(store, 'pro_monthly')
      await store.revenue.save('subscriptions', [subscription({amount_usd_monthly_minor: 1000, created: t('2025-03-10'), product_id: product})])
      await store.revenue.save('subscriptions', [subscription({amount_usd_monthly_minor: 500, created: t('2025-02-10'), origin_id: 'sub_2', product_id: product, user_id: 'u2'})])
      const r = await revenueCohorts(store, {until: t('2026-03-01')})
      expect(r).toMatchObject({message: 'cohorts by signup month 2025-03-01 to 2026-02-28: 1 cohort of 1 customer', since: '2025-03-01', until: '2026-02-28'})
      expect(r.cohorts.map((c) => c.cohort)).toEqual(['2025-03'])
    } finally {
      await store.close()
    }
  })
})

describe('the FX table of an import', () => {
  it('reads a currency\'s history once, when loaded; a rate reads nothing', async () => {
    const reads: string[] = []
    const history: Record<string, FxHistory> = {EUR: [{date: '2020-01-01', rate: 0.8, snapshot: false}], GBP: [{date: '2020-01-01', rate: 0.5, snapshot: true}]}
    const table = new FxTable({fxHistory: async (c: string) => (reads.push(c), history[c] ?? [])}, '2026-01-01')
    expect([table.missing('EUR'), table.missing('GBP'), table.missing('USD')]).toEqual([true, true, false])
    expect(() => table.rate('EUR', t('2025-01-01'))).toThrow('FxTable: the rates of EUR are not loaded')
    await table.load('EUR')
    expect(table.rate('EUR', t('2025-01-01'))).toBe(0.8)
    expect(table.rate('EUR', t('2025-06-01'))).toBe(0.8)
    await table.load('GBP', 'EUR', 'USD')
    expect(table.missing('GBP')).toBe(false)
    expect(table.rate('GBP', t('2025-06-01'))).toBe(0.5)
    expect(table.rate('GBP', t('2025-07-01'))).toBe(0.5)
    expect(table.rate('USD', t('2025-07-01'))).toBe(1)
    expect(reads).toEqual(['EUR', 'GBP'])
  })
})
