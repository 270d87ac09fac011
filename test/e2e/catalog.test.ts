import {describe, expect, it} from 'vitest'

import {e2eInitStore, e2eSeeded, e2eStore, storeDigest, storeState} from '../helpers/e2e.js'
import {run, runBin} from '../helpers/run.js'

/** A store `demo` filled, made once and copied (test/helpers/e2e.ts e2eSeeded). */
const demoStore = () =>
  e2eSeeded('demo', async (db) => {
    expect((await run(db, ['demo'])).code).toBe(0)
  })

/**
 * The catalog commands on either adapter, in-process (test/helpers/run.ts): what is tested is
 * the store and the output. stdin is the process's own: what reads it runs bin/run.js.
 */
describe('catalog end to end', () => {
  it('demo, then products and coupons read back as JSON', async () => {
    const db = await e2eStore()
    const demo = await run(db, ['demo'])
    expect(demo.code, demo.stderr).toBe(0)
    expect(demo.stdout).toContain('What to try next:')
    const p = await run(db, ['products', 'get', 'pro_monthly', '--json'])
    expect(p.json).toMatchObject({api_id: 'pro_monthly', base_px: 9.99, country_prices: expect.arrayContaining([{country: 'JP', currency: 'JPY', local_price: 1200}]), success: true})
    const c = await run(db, ['coupons', 'list', '--name', 'welcome', '--json'])
    expect(c.json.coupons.map((x: {api_id: string}) => x.api_id)).toEqual(['WELCOME10'])
  })

  it('--body - reads the spec body from stdin; malformed JSON exits 2 and leaves the store unchanged', async () => {
    // bin/run.js: the body is the child's stdin.
    const db = await e2eStore()
    const body = {api_id: 'ebook', base_px: 14.99, country_prices: [{amount: 12.99, country: 'DE', currency: 'EUR'}], integrations: [{gateway_c_plan_id: 'ebook', type: 'gateway_c'}], interval: 'one_time', interval_count: 1, name: 'E-book'}
    const r = runBin(db, ['products', 'create', '--body', '-', '--json'], {input: JSON.stringify(body)})
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toEqual({
      api_id: 'ebook', base_px: 14.99, baseline_id: null, country_prices: [{country: 'DE', currency: 'EUR', local_price: 12.99}], dry_run: false, impact: expect.objectContaining({changed: 0, dropped: []}), integrations: body.integrations, message: 'created product ebook', name: 'E-book', success: true,
    })
    const before = await storeState(db)
    const digest = storeDigest(db)
    const bad = runBin(db, ['products', 'create', '--body', '-', '--json'], {input: '{"api_id": "x", "name": '})
    expect(bad.code).toBe(2)
    expect(bad.json).toEqual({message: expect.stringContaining('--body: malformed JSON'), success: false})
    expect(await storeState(db)).toEqual(before)
    expect(storeDigest(db)).toBe(digest)
  })

  it('export piped into import changes nothing', async () => {
    const db = await demoStore()
    const before = await storeState(db)
    const exported = await run(db, ['products', 'export', '--output', 'csv'])
    expect(exported.code).toBe(0)
    // bin/run.js: the export is piped into the child's stdin.
    const imported = runBin(db, ['products', 'import', '-'], {input: exported.stdout})
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stdout).toContain('0 inserted, 0 updated, 7 unchanged')
    expect(await storeState(db)).toEqual(before)
  })

  it('user get of an unknown user: exit 1 and the spec error body', async () => {
    const r = await run(await e2eInitStore(), ['user', 'get', 'nobody', '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({error_message: expect.stringContaining('nobody'), success: false})
  })

  it('delete without a terminal needs --yes', async () => {
    const db = await demoStore()
    const r = await run(db, ['coupons', 'delete', 'WELCOME10'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('refusing to delete coupon WELCOME10 without --yes')
    expect((await run(db, ['coupons', 'delete', 'WELCOME10', '--yes'])).code).toBe(0)
  })
})
