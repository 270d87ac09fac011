import {describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

describe('demo', () => {
  it('builds the demo catalog, prints a summary and what to try next', async () => {
    const db = tempStore()
    const r = await run(db, ['demo'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('demo catalog loaded into')
    expect(r.stdout).toContain('products: 7 new, 0 updated, 0 unchanged; coupons: 4 new, 0 updated, 0 unchanged')
    expect(r.stdout).toMatch(/pro_monthly\s*│ Pro Monthly/)
    expect(r.stdout).toContain('What to try next:')
    for (const step of ['pricectl products list', 'pricectl products get pro_monthly', 'pricectl coupons list', 'pricectl price --product pro_monthly --country DE', 'pricectl tax list --country DE']) {
      expect(r.stdout).toContain(step)
    }
    // One inclusive country (docs/tax.md): DE prices include VAT, the others are shown net.
    expect(r.stdout).toContain('DE prices include 19% VAT')
    const de = await run(db, ['price', '-u', 'd', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    expect(de.json.products.pro_monthly.tax).toMatchObject({behavior: 'inclusive', gross: de.json.products.pro_monthly.price, rate: 19})
    const us = await run(db, ['price', '-u', 'u', '-p', 'pro_monthly', '--country', 'US', '--json'])
    expect(us.json.products.pro_monthly.tax).toMatchObject({behavior: 'exclusive', net: us.json.products.pro_monthly.price})
  })

  it('covers monthly, yearly and one-time products, several currencies, every integration type, a baseline, features and coupons', async () => {
    const db = tempStore()
    expect((await run(db, ['demo', '--json'])).json).toEqual({
      coupons: 4,
      message: expect.stringContaining('7 products, 4 coupons'),
      products: 7,
      success: true,
    })
    const t = dump(db).tables
    expect(new Set(t.products.map((p) => p.interval))).toEqual(new Set(['month', 'year', 'one_time']))
    expect(new Set(t.country_prices.map((c) => c.currency))).toEqual(new Set(['EUR', 'GBP', 'INR', 'BRL', 'JPY']))
    expect(new Set(t.product_integrations.map((i) => i.type))).toEqual(new Set(['gateway_a', 'gateway_a_with_interval', 'gateway_c', 'gateway_d']))
    expect(t.products.filter((p) => p.baseline_id !== null)).toHaveLength(1)
    expect(t.product_features.length).toBeGreaterThan(0)
    expect(t.product_trials.length).toBeGreaterThan(0)
    expect(new Set(t.coupons.map((c) => c.coupon_type))).toEqual(new Set(['percentage', 'fixed_amount']))
    const intro = await run(db, ['products', 'get', 'pro_yearly_intro', '--json'])
    const yearly = t.products.find((p) => p.api_id === 'pro_yearly')!
    expect(intro.json.baseline_id).toBe(yearly.id)
  })

  it('is idempotent: a second run changes nothing', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const before = dump(db)
    const again = await run(db, ['demo'])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('products: 0 new, 0 updated, 7 unchanged; coupons: 0 new, 0 updated, 4 unchanged')
    expect(dump(db)).toEqual(before)
  })

  it('restores demo rows that were changed, and leaves other products alone', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    await run(db, ['products', 'update', 'pro_monthly', '--base-px', '1', '--yes'])
    await run(db, ['products', 'create', '--api-id', 'mine', '--name', 'Mine', '--base-px', '3', '--interval', 'week', '--interval-count', '2'])
    // Overwriting a changed row of a store in use needs --yes (issue 15: no surprise writes).
    const r = await run(db, ['demo', '--yes', '--json'])
    expect(r.code).toBe(0)
    expect((await run(db, ['products', 'get', 'pro_monthly', '--json'])).json.base_px).toBe(9.99)
    expect((await run(db, ['products', 'get', 'mine', '--json'])).json.interval).toBe('week')
  })

  it('refuses a store in use without --yes (exit 2, nothing written), saying what it holds and what the demo would do', async () => {
    const db = tempStore()
    await run(db, ['products', 'create', '--api-id', 'mine', '--name', 'Mine', '--base-px', '3', '--interval', 'month', '--interval-count', '1'])
    await run(db, ['price', '--product', 'mine', '--country', 'US', '--user-id', 'u1'])
    const before = dump(db)
    const r = await run(db, ['demo', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toBe(
      `the store ${db} is not empty (products 1, users 1, locks 1): demo would add 7 products and add 4 coupons; nothing was written: pass --yes to load the demo into it anyway, or --db NEW_PATH for a separate demo store`,
    )
    expect(dump(db)).toEqual(before)
    const human = await run(db, ['demo'])
    expect(human.code).toBe(2)
    expect(human.stderr).toContain('pass --yes to load the demo into it anyway')
    expect(human.stdout).toBe('')
    const yes = await run(db, ['demo', '--yes', '--json'])
    expect(yes.code).toBe(0)
    expect(yes.json.products).toBe(7)
    expect((await run(db, ['products', 'get', 'mine', '--json'])).code).toBe(0)
  })

  it('loads again in a later month without --yes: its coupons only move their window; a coupon changed by hand still asks', async () => {
    const db = tempStore()
    const before = process.env.PRICECTL_NOW
    try {
      process.env.PRICECTL_NOW = '2026-03-10T12:00:00Z'
      expect((await run(db, ['demo'])).code).toBe(0)
      const terms = (c: Record<string, unknown>) => ({...c, active_from: null, active_till: null, created_at: null, updated_at: null})
      const march = (await run(db, ['coupons', 'get', 'SPRING25', '--json'])).json.coupon
      process.env.PRICECTL_NOW = '2026-05-10T12:00:00Z'
      const may = await run(db, ['demo', '--json'])
      expect(may.code, may.stdout).toBe(0)
      const moved = (await run(db, ['coupons', 'get', 'SPRING25', '--json'])).json.coupon
      expect(moved.active_from).not.toEqual(march.active_from)
      expect(terms(moved)).toEqual(terms(march))
      expect((await run(db, ['coupons', 'update', 'SPRING25', '--name', 'Spring Sale (ours)', '--yes'])).code).toBe(0)
      const changed = await run(db, ['demo', '--json'])
      expect(changed.code).toBe(2)
      expect(changed.json.message).toContain('SPRING25')
    } finally {
      if (before === undefined) delete process.env.PRICECTL_NOW
      else process.env.PRICECTL_NOW = before
    }
  })

  it('names the demo rows it would overwrite in a changed demo store', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    await run(db, ['products', 'update', 'pro_monthly', '--base-px', '1', '--yes'])
    const r = await run(db, ['demo', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain('demo would overwrite pro_monthly with the demo\'s version; nothing was written')
    expect((await run(db, ['products', 'get', 'pro_monthly', '--json'])).json.base_px).toBe(1)
  })

  it('loads into a store holding only what a new store is seeded with (settings, FX rates) without --yes', async () => {
    const db = tempStore()
    expect((await run(db, ['db', 'init'])).code).toBe(0)
    const r = await run(db, ['demo', '--json'])
    expect(r.code, r.stdout).toBe(0)
  })
})
