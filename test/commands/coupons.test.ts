import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {dump, fileDigest} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-coupons-'))
let n = 0
function file(content: string): string {
  const p = join(dir, `c${n++}.json`)
  writeFileSync(p, content)
  return p
}

/** Every writable coupon field, as the spec shapes a coupon. */
const body = {
  active_from: '2026-03-01',
  active_till: '2026-05-31T23:00:00+02:00',
  api_id: 'SAVE5',
  coupon_external_coupons: [
    {external_coupon: {id: 'promo_123', source: 'GATEWAY_A'}},
    {external_coupon: {id: 'save5', source: 'GATEWAY_C'}},
  ],
  coupon_type: {coupon_type: 'fixed_amount'},
  currency: 'EUR',
  name: 'Spring 5 EUR off',
  status: 'NOT_ACTIVE',
  value: 5.5,
}
const stamps = {created_at: '2026-02-01T10:00:00+00:00', org: 1, updated_at: '2026-02-01T10:00:00+00:00'}

let db: string
const saved = process.env.PRICECTL_NOW
beforeEach(() => {
  process.env.PRICECTL_NOW = '2026-02-01T10:00:00Z'
  db = tempStore()
})
afterEach(() => {
  if (saved === undefined) delete process.env.PRICECTL_NOW
  else process.env.PRICECTL_NOW = saved
})

describe('coupons create / get round trip', () => {
  it('--body: get --json prints every field with the same values in the spec shape', async () => {
    const c = await run(db, ['coupons', 'create', '--body', file(JSON.stringify(body)), '--json'])
    expect(c.code, c.stderr).toBe(0)
    expect(c.json).toEqual({coupon: {...body, ...stamps}, dry_run: false, impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'}, message: 'created coupon SAVE5', success: true})
    const g = await run(db, ['coupons', 'get', 'SAVE5', '--json'])
    expect(g.json).toEqual({coupon: {...body, ...stamps}, message: 'coupon SAVE5', success: true})
  })

  it('flags: the same coupon from flags', async () => {
    const c = await run(db, [
      'coupons', 'create',
      '--api-id', 'SAVE5', '--name', 'Spring 5 EUR off', '--type', 'fixed_amount', '--value', '5.5', '--currency', 'eur',
      '--active-from', '2026-03-01', '--active-till', '2026-05-31T23:00:00+02:00', '--status', 'not_active',
      '--external', 'GATEWAY_A=promo_123', '--external', 'gateway_c=save5',
    ])
    expect(c.code, c.stderr).toBe(0)
    expect(c.stdout).toContain('created coupon SAVE5 (Spring 5 EUR off): 5.5 EUR off, NOT_ACTIVE')
    const g = await run(db, ['coupons', 'get', 'SAVE5', '--json'])
    expect(g.json.coupon).toEqual({...body, ...stamps})
  })

  it('a percentage coupon with defaults: no currency, ACTIVE, no window', async () => {
    const c = await run(db, ['coupons', 'create', '--api-id', 'WELCOME10', '--name', 'Welcome', '--type', 'percentage', '--value', '10', '--json'])
    expect(c.json.coupon).toEqual({
      active_from: null,
      active_till: null,
      api_id: 'WELCOME10',
      coupon_external_coupons: [],
      coupon_type: {coupon_type: 'percentage'},
      currency: null,
      name: 'Welcome',
      status: 'ACTIVE',
      value: 10,
      ...stamps,
    })
  })
})

describe('coupon bad input exits 2 and writes nothing', () => {
  const good = (over: Record<string, string> = {}) => Object.entries({'--api-id': 'C1', '--name': 'C1', '--type': 'fixed_amount', '--value': '5', '--currency': 'EUR', ...over}).flat()
  const cases: [string, () => string[], RegExp][] = [
    ['unknown type', () => ['coupons', 'create', ...good({'--type': 'percent'})], /coupon_type\.coupon_type: unknown coupon type "percent"/],
    ['fixed amount without currency', () => ['coupons', 'create', ...good({'--currency': 'none'})], /currency: is required for a fixed_amount coupon/],
    ['unknown currency', () => ['coupons', 'create', ...good({'--currency': 'EUX'})], /currency: unknown currency "EUX"/],
    ['amount finer than the currency', () => ['coupons', 'create', ...good({'--currency': 'JPY', '--value': '5.5'})], /value: 5\.5 has more decimals than JPY allows \(0\)/],
    ['negative value', () => ['coupons', 'create', ...good({'--value': '-5'})], /value: must not be negative, got -5/],
    ['percentage above 100', () => ['coupons', 'create', ...good({'--currency': 'none', '--type': 'percentage', '--value': '120'})], /value: a percentage must be above 0 and at most 100, got 120/],
    ['window backwards', () => ['coupons', 'create', ...good(), '--active-from', '2026-06-01', '--active-till', '2026-05-01'], /active_till: active_till 2026-05-01 is before active_from 2026-06-01/],
    ['not a date', () => ['coupons', 'create', ...good(), '--active-till', 'next week'], /active_till: expected an ISO date such as 2026-01-31, got "next week"/],
    ['unknown status', () => ['coupons', 'create', ...good({'--status': 'paused'})], /status: unknown status "PAUSED"/],
    ['unknown external source', () => ['coupons', 'create', ...good(), '--external', 'GATEWAY_B=x'], /source: unknown source "GATEWAY_B"/],
    ['malformed --external', () => ['coupons', 'create', ...good(), '--external', 'promo_1'], /--external: expected SOURCE=ID/],
    ['malformed JSON in --body', () => ['coupons', 'create', '--body', file('{"api_id": ')], /--body: malformed JSON/],
    ['unknown flag', () => ['coupons', 'create', ...good(), '--percent', '5'], /Nonexistent flag: --percent/],
    ['update with --api-id', () => ['coupons', 'update', 'EXISTING', '--api-id', 'NEW'], /--api-id: api_id is immutable/],
    ['delete without --yes', () => ['coupons', 'delete', 'EXISTING'], /refusing to delete coupon EXISTING without --yes/],
  ]
  it.each(cases)('%s', async (_name, args, message) => {
    await run(db, ['coupons', 'create', '--api-id', 'EXISTING', '--name', 'Existing', '--type', 'percentage', '--value', '5'])
    const before = dump(db)
    const digest = fileDigest(db)
    const r = await run(db, [...args(), '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: expect.stringMatching(message), success: false})
    expect(dump(db)).toEqual(before)
    expect(fileDigest(db)).toBe(digest)
  })

  it('an api_id that exists is a conflict: exit 1 and nothing written', async () => {
    await run(db, ['coupons', 'create', '--api-id', 'EXISTING', '--name', 'Existing', '--type', 'percentage', '--value', '5'])
    const digest = fileDigest(db)
    const r = await run(db, ['coupons', 'create', ...good({'--api-id': 'EXISTING'}), '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toEqual({message: 'api_id: coupon "EXISTING" already exists (change it with: pricectl coupons update EXISTING ...)', success: false})
    expect(fileDigest(db)).toBe(digest)
  })
})

describe('coupons update / list / delete', () => {
  it('update changes the given fields and bumps updated_at only when something changed', async () => {
    await run(db, ['coupons', 'create', '--body', file(JSON.stringify(body))])
    process.env.PRICECTL_NOW = '2026-02-02T08:30:00Z'
    const u = await run(db, ['coupons', 'update', 'SAVE5', '--status', 'ACTIVE', '--external', 'none', '--active-till', 'none', '--json'])
    expect(u.json).toEqual({
      coupon: {...body, ...stamps, active_till: null, coupon_external_coupons: [], status: 'ACTIVE', updated_at: '2026-02-02T08:30:00+00:00'},
      dry_run: false,
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: 'updated coupon SAVE5',
      success: true,
    })
    const before = dump(db)
    const same = await run(db, ['coupons', 'update', 'SAVE5', '--body', file(JSON.stringify(u.json.coupon)), '--json'])
    expect(same.json.message).toBe('coupon SAVE5 unchanged (the update matches what is stored)')
    expect(dump(db)).toEqual(before)
    expect((await run(db, ['coupons', 'update', 'NOPE', '--status', 'ACTIVE'])).code).toBe(1)
  })

  it('list --name matches case-insensitively anywhere in the name', async () => {
    await run(db, ['coupons', 'create', '--api-id', 'A', '--name', 'Spring Sale', '--type', 'percentage', '--value', '10'])
    await run(db, ['coupons', 'create', '--api-id', 'B', '--name', 'Black Friday', '--type', 'percentage', '--value', '30'])
    await run(db, ['coupons', 'create', '--api-id', 'C', '--name', 'Early SPRING', '--type', 'percentage', '--value', '5', '--status', 'NOT_ACTIVE'])
    const all = await run(db, ['coupons', 'list', '--json'])
    expect(all.json.message).toBe('3 coupons')
    expect(all.json.coupons.map((c: {api_id: string}) => c.api_id)).toEqual(['A', 'B', 'C'])
    const spring = await run(db, ['coupons', 'list', '--name', 'spring', '--json'])
    expect(spring.json.coupons.map((c: {api_id: string}) => c.api_id)).toEqual(['A', 'C'])
    expect(spring.json.coupons[0]).toEqual({
      active_from: null, active_till: null, api_id: 'A', coupon_external_coupons: [], coupon_type: {coupon_type: 'percentage'}, currency: null, name: 'Spring Sale', status: 'ACTIVE', value: 10, ...stamps,
    })
    const active = await run(db, ['coupons', 'list', '--name', 'SPRING', '--status', 'ACTIVE', '--json'])
    expect(active.json.coupons.map((c: {api_id: string}) => c.api_id)).toEqual(['A'])
    const table = await run(db, ['coupons', 'list', '--name', 'fri'])
    expect(table.stdout).toMatch(/B\s*│ Black Friday\s*│ 30%/)
    expect(table.stdout).not.toContain('Spring')
    const none = await run(db, ['coupons', 'list', '--name', 'zzz'])
    expect(none.stdout.trim()).toBe('no coupons match')
  })

  it('delete --yes prints {message, success, api_id}; an unknown coupon exits 1', async () => {
    await run(db, ['coupons', 'create', '--body', file(JSON.stringify(body))])
    const d = await run(db, ['coupons', 'delete', 'SAVE5', '--yes', '--json'])
    expect(d.json).toEqual({api_id: 'SAVE5', dry_run: false, impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'}, message: 'deleted coupon SAVE5', success: true})
    const g = await run(db, ['coupons', 'get', 'SAVE5', '--json'])
    expect(g.code).toBe(1)
    expect(g.json).toEqual({message: 'no coupon with api_id "SAVE5" (list them with: pricectl coupons list)', success: false})
  })
})
