import {describe, expect, it} from 'vitest'

import {fxKind} from '../../src/fx/sources.js'
import {FxSetInput} from '../../src/schemas/fx.js'
import {PricingContexts} from '../../src/server/contexts.js'
import {defaultFxSnapshot} from '../../src/fx/snapshot.js'
import {fxStores} from '../helpers/fx-stores.js'

/**
 * FX labels, and a long-lived pricing context across a change of day. The rule that picks
 * a rate (docs/fx-localization-geoip.md, "Which rate is used") is implemented in SQL by each
 * store adapter: test/store-contract/fx.test.ts proves it on every adapter.
 */

const SNAP = 'default snapshot (@fawazahmed0/currency-api 9.9.9)'
/** A store with only the given rates (the bundled snapshot removed). */
const storeWith = fxStores()

describe('labels', () => {
  it('the bundled snapshot is labelled as such; operators cannot use that label', () => {
    expect(fxKind(defaultFxSnapshot().source)).toBe('snapshot')
    const r = FxSetInput.safeParse({currency: 'EUR', date: '2026-01-01', rate: 1, source: 'Default Snapshot (mine)'})
    expect(r.success).toBe(false)
    expect(r.error?.issues[0].message).toContain('"default snapshot" labels the bundled snapshot')
    expect(fxKind('manual')).toBe('manual')
    expect(fxKind('treasury desk')).toBe('manual')
    expect(fxKind('ECB eurofxref (eurofxref-hist.zip:eurofxref-hist.csv)')).toBe('import')
  })
})

describe('a long-lived pricing context (the server\'s)', () => {
  it('is replaced when the day changes, so a rate scheduled for today is used from today', async () => {
    const db = await storeWith([
      {date: '2026-09-29', rate: 0.88, source: SNAP},
      {date: '2026-11-24', rate: 2, source: 'manual'},
    ])
    process.env.PRICECTL_NOW = '2026-11-23T23:59:00Z'
    const contexts = new PricingContexts(db)
    expect((await contexts.current()).rate('EUR')?.rate).toBe(0.88)
    expect((await contexts.current()).ratesStale()).toBe(false)
    process.env.PRICECTL_NOW = '2026-11-24T00:00:30Z'
    expect((await contexts.current()).rate('EUR')?.rate).toBe(2)
    expect(contexts.builds).toBe(2)
  })
})
