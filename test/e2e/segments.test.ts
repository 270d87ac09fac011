import {beforeAll, describe, expect, it} from 'vitest'

import {createProducts} from '../helpers/catalog.js'
import {e2eSeeded, tableCount as count} from '../helpers/e2e.js'
import {run, runBin, withEnv} from '../helpers/run.js'
import {SEG_PRODUCTS} from '../helpers/segments-fixtures.js'

/**
 * Segmentation and coupons as an operator uses them, on either adapter: in-process
 * (test/helpers/run.ts), but for the lock a separate process (bin/run.js) reads back.
 */
describe('audiences, packages, campaigns and coupons end to end', () => {
  let db: string
  const env = {PRICECTL_NOW: '2026-03-10T12:00:00Z'}
  const cmd = (args: string[]) => withEnv(env, () => run(db, args))
  const ok = async (args: string[]) => {
    const r = await cmd(args)
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
    return r
  }

  // The setup runs the commands once, on a SQLite file (on PostgreSQL moved by `db copy`): test/helpers/e2e.ts e2eSeeded.
  beforeAll(async () => {
    db = await e2eSeeded('segments', async (file) => {
      await withEnv(env, () => createProducts(file, SEG_PRODUCTS))
      for (const args of [
        ['fx', 'set', 'EUR', '0.5', '--date', '2020-01-01', '--yes'],
        ['coupons', 'create', '--api-id', 'SPRING', '--name', 'Spring', '--type', 'percentage', '--value', '25', '--active-till', '2026-03-31', '--external', 'GATEWAY_A=promo_spring'],
        ['coupons', 'create', '--api-id', 'FIVE', '--name', 'Five dollars', '--type', 'fixed_amount', '--value', '5', '--currency', 'USD'],
        ['coupons', 'create', '--api-id', 'GONE', '--name', 'Gone', '--type', 'percentage', '--value', '90', '--active-till', '2026-01-01'],
        ['audiences', 'create', '--api-id', 'power', '--name', 'Power users', '--priority', '10', '--rule', 'feature seats gt 9'],
        ['audiences', 'create', '--api-id', 'dach', '--name', 'DACH', '--priority', '5', '--rule', 'country in DE,AT,CH'],
        ['packages', 'create', '--api-id', 'dach_pkg', '--name', 'DACH', '--product', 'basic,yearly', '--audience', 'dach'],
        ['campaigns', 'create', '--api-id', 'spring_dach', '--name', 'Spring DACH', '--coupon', 'SPRING', '--audience', 'dach', '--product', 'yearly', '--yes'],
      ]) {
        const r = await withEnv(env, () => run(file, args))
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
      }
    })
  })

  it('bad rules exit 2, unknown products 1, and both write nothing', async () => {
    const op = await cmd(['audiences', 'create', '--api-id', 'x', '--name', 'X', '--rule', 'feature seats about 3'])
    expect(op.code).toBe(2)
    expect(op.stderr).toContain('unknown operator "about"')
    expect(op.stderr).not.toMatch(/\n\s+at /)
    const gt = await cmd(['audiences', 'create', '--api-id', 'x', '--name', 'X', '--rule', 'feature seats gt many', '--json'])
    expect(gt.code).toBe(2)
    expect(gt.json).toEqual({message: expect.stringContaining('"gt" compares numbers: "many" is not a number'), success: false})
    const pkg = await cmd(['packages', 'create', '--api-id', 'x', '--name', 'X', '--product', 'basic,nope'])
    expect(pkg.code).toBe(1)
    expect(pkg.stderr).toContain('products[1]: unknown product "nope"')
    expect(await count(db, 'audiences')).toBe(2)
    expect(await count(db, 'packages')).toBe(1)
  })

  it('prices the audience package with the campaign coupon, and the lock keeps them across processes', async () => {
    const first = await ok(['price', '-u', 'anna', '--country', 'AT', '--feature', 'seats=10', '--json'])
    expect(first.json.matching_audiences.map((a: {api_id: string}) => a.api_id)).toEqual(['power', 'dach'])
    expect(first.json.package_id).toBe('dach_pkg')
    expect(Object.keys(first.json.products)).toEqual(['basic', 'yearly'])
    expect(first.json.products.basic.coupon).toBeUndefined()
    const yearly = first.json.products.yearly
    expect(yearly.coupon).toMatchObject({api_id: 'SPRING', coupon_source: ['GATEWAY_A'], external_coupon_id: 'promo_spring', valid_till: '2026-03-31 23:59:59'})
    expect(yearly.coupon.display.pct_discount_to_baseline).toBe(25)
    // 100 USD at 0.5 = 50 EUR, rounded by the EUR default rule to 49.99; 25% off (12.50, half up) = 37.49.
    expect(yearly.price).toBe(49.99)
    expect(yearly.coupon.display.price_numeric).toBe(37.49)

    await ok(['campaigns', 'delete', 'spring_dach', '--yes'])
    await ok(['audiences', 'update', 'dach', '--rule', 'country in CH', '--yes'])
    // Another process (bin/run.js) reads the lock the first price wrote.
    const again = runBin(db, ['price', '-u', 'anna', '--json'], {env})
    expect(again.code, again.stderr).toBe(0)
    expect(again.json).toEqual(first.json)
    const table = await ok(['price', '-u', 'anna'])
    expect(table.stdout).toContain('audience power, package dach_pkg')
    expect(table.stdout).toContain('SPRING: ')
  })

  it('converts a fixed coupon, never applies an expired one, and explain says why', async () => {
    const r = await ok(['price', 'explain', '-u', 'ben', '-p', 'basic', '--country', 'DE', '--coupon', 'basic=GONE,FIVE', '--json'])
    // 5 USD = 2.50 EUR off the 10 EUR country price.
    expect(r.json.result.products.basic.coupon).toMatchObject({api_id: 'FIVE', currency_code: 'USD', type: 'fixed_amount', value: 5})
    expect(r.json.result.products.basic.coupon.display.price_numeric).toBe(7.5)
    const details = r.json.steps.map((s: {detail: string}) => s.detail).join('\n')
    expect(details).toContain('GONE (request) not applied: GONE has expired: it ended 2026-01-01 23:59:59 UTC')
    expect(details).toContain('rule "feature seats gt 9" failed (feature seats not given)')
    expect(await count(db, 'locks')).toBe(1) // explain wrote nothing
  })

  it('lists what was configured', async () => {
    expect((await ok(['audiences', 'list'])).stdout).toContain('feature seats gt 9')
    expect((await ok(['packages', 'list', '--json'])).json.packages[0]).toMatchObject({api_id: 'dach_pkg', audience: 'dach', products: ['basic', 'yearly']})
    expect((await ok(['campaigns', 'list', '--json'])).json.campaigns).toEqual([])
  })
})
