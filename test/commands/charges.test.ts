import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'

import {runArgs, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

const BASE: Record<string, string> = {amount: '49', created: '1767225600', currency: 'GBP', origin: 'gateway_a', 'origin-id': 'ch_1', product: 'lifetime', status: 'succeeded', 'user-id': 'u1'}

function create(over: Record<string, string> = {}, extra: string[] = []): string[] {
  return ['charges', 'create', ...Object.entries({...BASE, ...over}).flatMap(([k, v]) => [`--${k}`, v]), ...extra]
}

describe('charges create | update | get | list | delete', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1767312000'
  })

  it('refuses a metadata key named __proto__ (it would vanish) and writes nothing', async () => {
    const r = await runArgs(db, [...create({}, ['--metadata', '__proto__=x', '--event-id', 'evt_proto']), '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe('--metadata: "__proto__" cannot be a key name (JavaScript reserves it); rename it')
    const file = join(tempDir(), 'charge.json')
    writeFileSync(file, '{"amount": 49, "created": 1767225600, "currency": "GBP", "metadata": {"__proto__": {"x": 1}}, "origin": "gateway_a", "origin_id": "ch_proto", "product": "lifetime", "status": "succeeded", "user_id": "u1"}')
    const body = await runArgs(db, ['charges', 'create', '--body', file, '--json'])
    expect(body.code).toBe(2)
    expect(body.json.message).toMatch(/metadata: "__proto__" cannot be a metadata key name/)
    const list = await runArgs(db, ['charges', 'list', '--json'])
    expect(JSON.stringify(list.json)).not.toContain('ch_proto')
  })

  it('creates a charge: amount_refunded defaults to 0, metadata is free-form, USD at the created date', async () => {
    const r = await runArgs(db, [...create({}, ['--metadata', 'invoice=in_1', '--metadata', 'channel=web', '--event-id', 'evt_1']), '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      message: 'charge created: u1 gateway_a ch_1',
      record: {
        amount: 49,
        amount_refunded: 0,
        amount_usd: 98, // 49 GBP at 0.5 GBP per USD
        created: 1_767_225_600,
        currency: 'GBP',
        latest_event_id: 'evt_1',
        latest_event_timestamp: 1_767_312_000,
        metadata: {channel: 'web', invoice: 'in_1'},
        org_id: 1,
        origin: 'gateway_a',
        origin_id: 'ch_1',
        service_product_id: 5,
        status: 'succeeded',
        type: 'charge',
        user_id: 'u1',
        // No tax given: none, so the net is the amount.
        tax: 0,
        net: 49,
        tax_usd: 0,
        net_usd: 98,
      },
      success: true,
    })
    const get = await runArgs(db, ['charges', 'get', 'u1', 'gateway_a', 'ch_1', '--json'])
    expect(get.json).toEqual({charge: r.json.record, success: true})
  })

  it('refuses amount_refunded on update, and takes a refund as the charge sent again with a newer event', async () => {
    await runArgs(db, [...create(), '--event-timestamp', '1767226600'])
    const viaBody = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--body', writeBody(JSON.stringify({amount_refunded: 10})), '--json'])
    expect(viaBody.code).toBe(2)
    expect(viaBody.json.message).toContain('amount_refunded is not accepted by an update')
    const flag = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--amount-refunded', '10', '--json'])
    expect(flag.code).toBe(2)
    expect(flag.json.message).toContain('Nonexistent flag: --amount-refunded')
    const refund = await runArgs(db, [...create({'amount-refunded': '49', status: 'succeeded'}), '--event-timestamp', '1767312001', '--json'])
    expect(refund.json).toMatchObject({message: 'charge updated: u1 gateway_a ch_1', record: {amount_refunded: 49, status: 'succeeded'}})
    const tooMuch = await runArgs(db, [...create({'amount-refunded': '50', 'origin-id': 'ch_2'}), '--json'])
    expect(tooMuch.code).toBe(2)
    expect(tooMuch.json.message).toMatch(/amount_refunded: 50 is more than the amount 49/)
  })

  it('updates amount, currency, status and metadata (replaced); stale and repeated events change nothing', async () => {
    await runArgs(db, [...create({}, ['--metadata', '{"a":1,"b":"x"}']), '--event-timestamp', '1767226600', '--event-id', 'e1'])
    const r = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--amount', '20', '--currency', 'EUR', '--metadata', '{"c":true}', '--event-timestamp', '1767227600', '--json'])
    expect(r.json.record).toMatchObject({amount: 20, amount_usd: 25, currency: 'EUR', metadata: {c: true}})
    // Older than the update, newer than the create: it wins the field only it writes (last writer wins per field).
    const between = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--status', 'failed', '--amount', '5', '--event-timestamp', '1767227100', '--json'])
    expect(between.json).toMatchObject({message: 'charge updated: u1 gateway_a ch_1', record: {amount: 20, currency: 'EUR', latest_event_timestamp: 1767227600, status: 'failed'}})
    const stale = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--status', 'pending', '--event-timestamp', '1767226000', '--json'])
    expect(stale.json.message).toMatch(/^stale event ignored/)
    expect(stale.json.record.status).toBe('failed')
    const dup = await runArgs(db, [...create({amount: '1'}), '--event-id', 'e1', '--event-timestamp', '1767234600', '--json'])
    expect(dup.json.message).toBe('event e1 was already applied; nothing changed')
    const bad = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_1', '--status', 'refunded', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.json.message).toMatch(/status: unknown status "refunded" \(expected one of pending, succeeded, failed\)/)
    // A charge that does not exist (yet): the update is kept for its create (exit 0, record null); get is exit 1.
    const missing = await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_404', '--status', 'failed', '--json'])
    expect(missing.code).toBe(0)
    expect(missing.json).toMatchObject({message: expect.stringMatching(/^no charge u1 gateway_a ch_404 yet: update \S+ is kept \(pending\)/), record: null, success: true})
    expect((await runArgs(db, ['charges', 'get', 'u1', 'gateway_a', 'ch_404', '--json'])).code).toBe(1)
  })

  it('lists with filters and deletes with --yes', async () => {
    await runArgs(db, create({'origin-id': 'c1', created: '2026-01-05'}))
    await runArgs(db, create({'origin-id': 'c2', created: '2026-02-05', status: 'failed'}))
    await runArgs(db, create({'origin-id': 'c3', created: '2026-03-05', product: 'pro_monthly', 'user-id': 'u2'}))
    const ids = async (...flags: string[]) => ((await runArgs(db, ['charges', 'list', ...flags, '--json'])).json.charges as {origin_id: string}[]).map((c) => c.origin_id)
    expect(await ids()).toEqual(['c3', 'c2', 'c1'])
    expect(await ids('--status', 'succeeded')).toEqual(['c3', 'c1'])
    expect(await ids('--product', 'lifetime', '--user-id', 'u1')).toEqual(['c2', 'c1'])
    expect(await ids('--until', '2026-02-05')).toEqual(['c2', 'c1'])
    const out = await runArgs(db, ['charges', 'list', '--output', 'json'])
    expect(JSON.parse(out.stdout)).toMatchObject({message: '3 of 3 charges', success: true, total: 3})
    const del = await runArgs(db, ['charges', 'delete', 'u1', 'gateway_a', 'c1', '--yes', '--json'])
    expect(del.json).toMatchObject({message: 'charge deleted: u1 gateway_a c1', success: true})
    expect(await ids()).toEqual(['c3', 'c2'])
  })
})

function writeBody(text: string): string {
  const path = join(tempDir(), 'body.json')
  writeFileSync(path, text)
  return path
}
