import {writeFileSync} from 'node:fs'
import {beforeEach, describe, expect, it} from 'vitest'

import {tempStore} from '../helpers/run.js'
import {runArgs, seedCatalog, tempDir, withStore} from '../helpers/revenue-fixtures.js'
import {join} from 'node:path'

const BASE: Record<string, string> = {amount: '9.99', created: '1767225600', currency: 'EUR', origin: 'gateway_a', 'origin-id': 'sub_1', product: 'pro_monthly', status: 'active', 'user-id': 'u1'}

/** `subscriptions create` of sub_1 with some flags changed (oclif takes each flag once). */
function create(over: Record<string, string> = {}): string[] {
  return ['subscriptions', 'create', ...Object.entries({...BASE, ...over}).flatMap(([k, v]) => [`--${k}`, v])]
}

async function count(db: string): Promise<number> {
  return await withStore(db, (d) => (d.prepare('SELECT count(*) AS n FROM subscriptions').get() as {n: number}).n)
}

describe('subscriptions create | update | get | delete', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1767312000'
  })

  it('creates a subscription and prints the spec record with USD amounts', async () => {
    const r = await runArgs(db, [...create(), '--json', '--event-id', 'evt_1'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      message: 'subscription created: u1 gateway_a sub_1',
      record: {
        amount: 9.99,
        amount_usd: 12.49, // 9.99 EUR at 0.8 EUR per USD = 12.4875
        amount_usd_monthly: 12.49,
        cancel_at: null,
        canceled_at: null,
        created: 1_767_225_600,
        currency: 'EUR',
        interval: 'month',
        interval_count: 1,
        latest_event_id: 'evt_1',
        latest_event_timestamp: 1_767_312_000,
        org_id: 1,
        origin: 'gateway_a',
        origin_id: 'sub_1',
        service_product_id: 1,
        status: 'active',
        trial_end: null,
        trial_start: null,
        type: 'subscription',
        user_id: 'u1',
        // No tax given: none, so the net is the amount and MRR counts all of it.
        tax: 0,
        net: 9.99,
        net_usd_monthly: 12.49,
      },
      success: true,
    })
    const get = await runArgs(db, ['subscriptions', 'get', 'u1', 'gateway_a', 'sub_1', '--json'])
    expect(get.json).toEqual({
      subscription: {
        created: 1_767_225_600,
        interval: 'month',
        interval_count: 1,
        latest_event_id: 'evt_1',
        latest_event_timestamp: 1_767_312_000,
        org_id: 1,
        origin: 'gateway_a',
        origin_id: 'sub_1',
        service_product_id2: 1,
        status: 'active',
        type: 'subscription',
        user_id: 'u1',
      },
      success: true,
    })
    const table = await runArgs(db, ['subscriptions', 'get', 'u1', 'gateway_a', 'sub_1'])
    // People see the product's api_id and ISO dates, never the internal id or raw epochs.
    expect(table.stdout).toMatch(/│ product +│ pro_monthly +│/)
    expect(table.stdout).toMatch(/│ created +│ 2026-01-01T00:00:00Z +│/)
    expect(table.stdout).toMatch(/│ latest_event_timestamp +│ 2026-01-02T00:00:00Z +│/)
    expect(table.stdout).not.toContain('service_product_id')
    expect(table.stdout).not.toContain('1767225600')
  })

  it('takes --body with flags overriding its fields, and an integration object as product', async () => {
    const body = join(tempDir(), 'sub.json')
    writeFileSync(
      body,
      JSON.stringify({amount: 100, created: 1_767_225_600, currency: 'USD', origin: 'gateway_a', origin_id: 'sub_y', product: {gateway_a_product_id: 'prod_team', interval: 'year', interval_count: 1, type: 'gateway_a_with_interval'}, status: 'active', user_id: 'u2'}),
    )
    const r = await runArgs(db, ['subscriptions', 'create', '--body', body, '--amount', '120', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.record).toMatchObject({amount: 120, amount_usd: 120, amount_usd_monthly: 10, interval: 'year', service_product_id: 2})
    const quarterly = await runArgs(db, [
      'subscriptions', 'create', '--body', body, '--origin-id', 'sub_q', '--amount', '30',
      '--product', '{"type":"gateway_a_with_interval","gateway_a_product_id":"prod_team","interval":"month","interval_count":3}', '--json',
    ])
    expect(quarterly.json.record).toMatchObject({amount_usd_monthly: 10, interval: 'month', interval_count: 3, service_product_id: 3})
  })

  it('enforces the status field rules and writes nothing on invalid input (exit 2)', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{'cancel-at': '1769904000'}, /cancel_at: provide cancel_at only when status is canceled/],
      [{'trial-end': '1769904000'}, /trial_end: provide trial_end only when status is trialing/],
      [{currency: 'EUX'}, /currency: unknown currency "EUX"/],
      [{amount: '-1'}, /amount: must not be negative/],
      [{amount: 'ten'}, /amount: expected a number, got "ten"/],
      [{status: 'paused'}, /status: unknown status "paused"/],
      [{origin: 'gateway_d'}, /origin: unknown origin "gateway_d"/],
      [{product: 'nope'}, /product: unknown product "nope"/],
      [{product: '{"type":"gateway_a"}'}, /product.gateway_a_product_id/],
      [{created: 'tomorrow'}, /--created: "tomorrow" is not a valid date or time \(not a date or time in an accepted form\); expected UNIX seconds/],
      [{amount: '9.999', currency: 'USD'}, /amount: 9.999 has more decimals than USD allows/],
    ]
    for (const [flags, message] of cases) {
      const r = await runArgs(db, [...create(flags), '--json'])
      // A product that does not exist is a named thing not found: exit 1 (README, exit codes).
      expect(r.code, JSON.stringify(flags)).toBe(flags.product === 'nope' ? 1 : 2)
      expect(r.json.success).toBe(false)
      expect(r.json.message).toMatch(message)
    }
    expect(await count(db)).toBe(0)
    const missing = await runArgs(db, ['subscriptions', 'create', '--user-id', 'u1', '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toContain('--origin, --origin-id, --product, --amount, --currency, --created, --status')
  })

  it('updates; a status change clears fields of the old status; rules use the resulting status', async () => {
    await runArgs(db, [...create({status: 'trialing', 'trial-end': '2026-01-15', 'trial-start': '1767225600'}), '--event-timestamp', '1767225700'])
    const bad = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--cancel-at', '1769904000', '--event-timestamp', '1767225800', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.json.message).toMatch(/cancel_at: provide cancel_at only when status is canceled \(status is "trialing"\)/)
    const r = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--status', 'canceled', '--cancel-at', '1769904000', '--canceled-at', '1768000000', '--amount', '12', '--event-timestamp', '1767225800', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.record).toMatchObject({amount: 12, amount_usd: 15, cancel_at: 1_769_904_000, canceled_at: 1_768_000_000, status: 'canceled', trial_end: null, trial_start: null})
    const currency = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--currency', 'JPY', '--event-timestamp', '1767225900', '--json'])
    expect(currency.json.record).toMatchObject({amount: 12, amount_usd: 0.12, currency: 'JPY', status: 'canceled'})
  })

  it('says "stale event ignored" for an older event, applies a repeated event id once', async () => {
    await runArgs(db, [...create(), '--event-id', 'e1', '--event-timestamp', '1700000000'])
    const stale = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--amount', '50', '--event-id', 'e0', '--event-timestamp', '1699999999', '--json'])
    expect(stale.code).toBe(0)
    expect(stale.json.success).toBe(true)
    expect(stale.json.message).toMatch(/^stale event ignored/)
    expect(stale.json.record.amount).toBe(9.99)
    const plain = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--amount', '50', '--event-timestamp', '2019-01-01'])
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(/^stale event ignored/)
    const first = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--amount', '11', '--event-id', 'e2', '--event-timestamp', '1700002000', '--json'])
    expect(first.json.record.amount).toBe(11)
    const again = await runArgs(db, ['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--amount', '77', '--event-id', 'e2', '--event-timestamp', '1700003000', '--json'])
    expect(again.code).toBe(0)
    expect(again.json.message).toBe('event e2 was already applied; nothing changed')
    expect(again.json.record.amount).toBe(11)
    // A create of an existing subscription is an event too: older than the record's create it
    // is stale; newer, it replaces every field except those a newer update wrote (amount, e2).
    const older = await runArgs(db, [...create({amount: '1'}), '--event-timestamp', '1699999000', '--json'])
    expect(older.json.message).toMatch(/^stale event ignored/)
    const between = await runArgs(db, [...create({amount: '1', country: 'FR'}), '--event-timestamp', '1700001500', '--json'])
    expect(between.json).toMatchObject({message: 'subscription updated: u1 gateway_a sub_1', record: {amount: 11, latest_event_id: 'e2'}})
    const newer = await runArgs(db, [...create({amount: '2'}), '--event-timestamp', '1700004000', '--json'])
    expect(newer.json).toMatchObject({message: 'subscription updated: u1 gateway_a sub_1', record: {amount: 2}})
    expect(await count(db)).toBe(1)
  })

  it('deletes with --yes (refuses without a terminal); get of an unknown subscription is exit 1, an update of one is kept', async () => {
    await runArgs(db, [...create(), '--event-timestamp', '1767226600'])
    const refused = await runArgs(db, ['subscriptions', 'delete', 'u1', 'gateway_a', 'sub_1', '--json'])
    expect(refused.code).toBe(2)
    expect(refused.json.message).toContain('--yes')
    const del = await runArgs(db, ['subscriptions', 'delete', 'u1', 'gateway_a', 'sub_1', '--yes', '--json'])
    expect(del.code).toBe(0)
    expect(del.json).toMatchObject({message: 'subscription deleted: u1 gateway_a sub_1', record: {origin_id: 'sub_1'}, success: true})
    const get = await runArgs(db, ['subscriptions', 'get', 'u1', 'gateway_a', 'sub_1', '--json'])
    expect(get.code).toBe(1)
    expect(get.json).toEqual({message: expect.stringContaining('no subscription u1 gateway_a sub_1'), success: false})
    // An update of a subscription that does not exist (yet) is kept until its create arrives (exit 0, record null).
    const update = await runArgs(db, ['subscriptions', 'update', 'u9', 'gateway_a', 'nope', '--amount', '1', '--event-id', 'early', '--json'])
    expect(update.code).toBe(0)
    expect(update.json).toEqual({
      message: 'no subscription u9 gateway_a nope yet: update early is kept (pending) and applied when the subscription is created (check the key with "pricectl subscriptions list --user-id u9")',
      record: null,
      success: true,
    })
    const badPath = await runArgs(db, ['subscriptions', 'get', 'u1', 'gateway_x', 'sub_1', '--json'])
    expect(badPath.code).toBe(2)
    expect(badPath.json.message).toMatch(/origin: unknown origin "gateway_x"/)
  })
})

describe('subscriptions list', () => {
  it('filters by user, status, product and created window; CSV cells are formula-safe', async () => {
    const db = tempStore()
    await withStore(db, seedCatalog)
    const make = (user: string, id: string, product: string, status: string, created: string) =>
      runArgs(db, ['subscriptions', 'create', '--user-id', user, '--origin', 'gateway_b', '--origin-id', id, '--product', product, '--amount', '5', '--currency', 'USD', '--created', created, '--status', status])
    await make('u1', 's1', 'pro_monthly', 'active', '2026-01-10')
    await make('u1', 's2', 'pro_yearly', 'pending', '2026-02-10')
    await make('u2', 's3', 'pro_monthly', 'active', '2026-03-10')
    await make('=cmd|x', 's4', 'weekly', 'active', '2026-03-11')
    const ids = async (...flags: string[]) => ((await runArgs(db, ['subscriptions', 'list', ...flags, '--json'])).json.subscriptions as {origin_id: string}[]).map((s) => s.origin_id)
    expect(await ids()).toEqual(['s4', 's3', 's2', 's1'])
    expect(await ids('--user-id', 'u1')).toEqual(['s2', 's1'])
    expect(await ids('--status', 'active', '--product', 'pro_monthly')).toEqual(['s3', 's1'])
    expect(await ids('--since', '2026-02-01', '--until', '2026-03-10')).toEqual(['s3', 's2'])
    expect(await ids('--limit', '1')).toEqual(['s4'])
    const total = await runArgs(db, ['subscriptions', 'list', '--limit', '1', '--json'])
    expect(total.json).toMatchObject({message: '1 of 4 subscriptions', total: 4})
    const csv = await runArgs(db, ['subscriptions', 'list', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('amount,amount_usd,amount_usd_monthly,cancel_at,canceled_at,created,currency,interval,interval_count,latest_event_id,latest_event_timestamp,org_id,origin,origin_id,service_product_id,status,trial_end,trial_start,type,user_id,tax,net,net_usd_monthly')
    expect(csv.stdout).toContain("'=cmd|x")
    const table = await runArgs(db, ['subscriptions', 'list'])
    expect(table.stdout).toContain('4 of 4 subscriptions')
    const bad = await runArgs(db, ['subscriptions', 'list', '--since', 'last week', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.json.message).toContain('--since')
  })
})
