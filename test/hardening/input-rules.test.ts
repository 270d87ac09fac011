import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {buildServer} from '../../src/server/app.js'
import {dump} from '../helpers/dump.js'
import {runArgs, seedCatalog, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/**
 * Issue 13 ("Hardening II"), items 2, 7, 12 and 16: every date goes through one reader
 * that refuses impossible dates (with --tz for date-times without an offset), duplicate
 * CSV header names are refused by every importer, blank ids and moments out of order are
 * refused, an overflowing number is "out of range", and the spec's "one or more" and
 * "10-digit" rules hold. Each case reproduces a defect found on main.
 */

const CHARGE: Record<string, string> = {amount: '49', created: '1767225600', currency: 'GBP', origin: 'gateway_a', 'origin-id': 'ch_1', product: 'lifetime', status: 'succeeded', 'user-id': 'u1'}
const SUB: Record<string, string> = {amount: '10', created: '1767225600', currency: 'USD', origin: 'gateway_a', 'origin-id': 'sub_1', product: 'pro_monthly', status: 'active', 'user-id': 'u1'}

const flags = (base: Record<string, string>, over: Record<string, string>) => Object.entries({...base, ...over}).flatMap(([k, v]) => [`--${k}`, v])
const charge = (over: Record<string, string> = {}, extra: string[] = []) => ['charges', 'create', ...flags(CHARGE, over), ...extra]
const sub = (over: Record<string, string> = {}, extra: string[] = []) => ['subscriptions', 'create', ...flags(SUB, over), ...extra]

let db: string
beforeEach(async () => {
  db = tempStore()
  await withStore(db, seedCatalog)
  process.env.PRICECTL_NOW = '1767312000'
})

/** Exit 2, the message matching, and the store unchanged. */
async function refused(args: string[], message: RegExp): Promise<void> {
  const before = dump(db)
  const r = await runArgs(db, [...args, '--json'])
  expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(2)
  expect(r.json?.message, args.join(' ')).toMatch(message)
  expect(dump(db)).toEqual(before)
}

async function ok(args: string[]): Promise<any> {
  const r = await runArgs(db, [...args, '--json'])
  expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0)
  return r.json
}

const NOT_A_DAY = /"2026-02-3[01]" is not a valid date or time \(February 2026 has 28 days\); expected UNIX seconds \(such as 1767225600\), a date YYYY-MM-DD, or a date-time/

describe('item 2: one date reader refuses impossible dates, everywhere', () => {
  it('charges create --created 2026-02-30 (stored 2026-03-02 before)', async () => {
    await refused(charge({created: '2026-02-30'}), new RegExp(`--created: ${NOT_A_DAY.source}`))
    await refused(charge({created: '2026-01-01T24:00'}), /--created: .*no hour 24/)
    await refused(charge({created: '2026-01-01 12:61'}), /--created: .*no minute 61/)
    await refused(charge({created: '2026-13-01'}), /--created: .*no month 13/)
  })

  it('--event-timestamp 2026-02-31', async () => {
    await refused(charge({}, ['--event-timestamp', '2026-02-31']), new RegExp(`--event-timestamp: ${NOT_A_DAY.source}`))
  })

  it('subscriptions create --cancel-at 2026-02-30, and the other subscription moments', async () => {
    await refused(sub({'cancel-at': '2026-02-30', status: 'canceled'}), new RegExp(`--cancel-at: ${NOT_A_DAY.source}`))
    await refused(sub({'canceled-at': '2026-02-30', status: 'canceled'}), /--canceled-at: "2026-02-30"/)
    await refused(sub({status: 'trialing', 'trial-start': '2026-02-30'}), /--trial-start: "2026-02-30"/)
    await refused(sub({status: 'trialing', 'trial-end': '2026-02-30'}), /--trial-end: "2026-02-30"/)
    await ok(sub())
    await refused(['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--created', '2026-02-30'], /--created: "2026-02-30"/)
  })

  it('revenue report, charges list and subscriptions list --since / --until 2026-02-30', async () => {
    await refused(['revenue', 'report', '--since', '2026-02-30'], new RegExp(`--since: ${NOT_A_DAY.source}`))
    await refused(['revenue', 'report', '--until', '2026-02-30'], /--until: "2026-02-30"/)
    await refused(['charges', 'list', '--since', '2026-02-30'], /--since: "2026-02-30"/)
    await refused(['subscriptions', 'list', '--until', '2026-02-31'], /--until: "2026-02-31"/)
  })

  it('coupon and campaign windows: 24:00 no longer rolls over to the next day', async () => {
    const coupon = ['coupons', 'create', '--api-id', 'C1', '--name', 'C', '--type', 'percentage', '--value', '10']
    await refused([...coupon, '--active-from', '2026-01-01T24:00Z'], /active_from: expected an ISO date such as 2026-01-31, got "2026-01-01T24:00Z" \(there is no hour 24/)
    await refused([...coupon, '--active-till', '2026-02-30'], /active_till: .*"2026-02-30" \(February 2026 has 28 days/)
    await ok([...coupon, '--active-from', '2026-01-01T10:00:00+02:00'])
    await refused(['campaigns', 'create', '--api-id', 'K1', '--name', 'K', '--coupon', 'C1', '--active-till', '2026-04-31'], /active_till: .*April 2026 has 30 days/)
  })

  it('--tz reads date-times without an offset in an IANA zone; UTC by default; an offset wins', async () => {
    const utc = await ok(charge({created: '2026-03-01T10:00', 'origin-id': 'c_utc'}))
    expect(utc.record.created).toBe(Date.UTC(2026, 2, 1, 10) / 1000)
    const berlin = await ok(charge({created: '2026-03-01T10:00', 'origin-id': 'c_ber'}, ['--tz', 'Europe/Berlin']))
    expect(berlin.record.created).toBe(Date.UTC(2026, 2, 1, 9) / 1000)
    const offset = await ok(charge({created: '2026-03-01T10:00:00-05:00', 'origin-id': 'c_off'}, ['--tz', 'Europe/Berlin']))
    expect(offset.record.created).toBe(Date.UTC(2026, 2, 1, 15) / 1000)
    await refused(charge({created: '2026-03-29T02:30', 'origin-id': 'c_gap'}, ['--tz', 'Europe/Berlin']), /does not exist in Europe\/Berlin \(the clocks skip it\)/)
    await refused(charge({'origin-id': 'c_tz'}, ['--tz', 'Mars/Olympus']), /--tz: unknown time zone "Mars\/Olympus"/)
    // --until DATE covers that whole day in the zone: 23:30 in Berlin is 22:30 UTC the same day.
    await ok(charge({created: '2026-03-31T22:30:00Z', 'origin-id': 'c_late'}))
    const ids = async (...a: string[]) => ((await ok(['charges', 'list', ...a])).charges as {origin_id: string}[]).map((c) => c.origin_id).sort()
    expect(await ids('--since', '2026-03-31', '--until', '2026-03-31')).toEqual(['c_late'])
    expect(await ids('--since', '2026-04-01', '--tz', 'Asia/Tokyo')).toEqual(['c_late'])
    expect(await ids('--until', '2026-03-31', '--tz', 'Pacific/Honolulu')).toEqual(['c_ber', 'c_late', 'c_off', 'c_utc'])
  })

  it('FX days must exist (fx set, fx import, fx list --date)', async () => {
    await refused(['fx', 'set', 'EUR', '0.9', '--date', '2026-02-30'], /date: expected a date YYYY-MM-DD, got "2026-02-30"/)
    await refused(['fx', 'import', writeTemp('r.csv', 'EUR,0.9\n'), '--date', '2026-02-30'], /--date: expected a date YYYY-MM-DD, got "2026-02-30"/)
    await refused(['fx', 'import', writeTemp('r.csv', 'currency,rate,date\nEUR,0.9,2026-04-31\n')], /line 2: date "2026-04-31" is not a date YYYY-MM-DD/)
    await refused(['fx', 'list', '--date', '2026-13-01'], /expected a date YYYY-MM-DD, got "2026-13-01"/)
  })

  it('PRICECTL_NOW 2026-02-30 is refused, not rolled over', async () => {
    process.env.PRICECTL_NOW = '2026-02-30'
    try {
      await refused(charge(), /PRICECTL_NOW: "2026-02-30" is not a valid date or time \(February 2026 has 28 days\)/)
    } finally {
      process.env.PRICECTL_NOW = '1767312000'
    }
  })

  it('imports read their date cells with the same reader, and take --tz', async () => {
    const header = 'id,Created date (UTC),Amount,Amount Refunded,Currency,Status,Customer ID,product (metadata)'
    const file = writeTemp('p.csv', `${header}\nch_1,2026-02-30 10:00:00,9.99,0,usd,Paid,cus_1,lifetime\nch_2,2026-03-01T10:00:00,9.99,0,usd,Paid,cus_2,lifetime\n`)
    const rejects = join(tempDir(), 'r.csv')
    const r = await runArgs(db, ['charges', 'import', file, '--rejects', rejects, '--tz', 'America/New_York', '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 1, rejected: 1})
    const got = await ok(['charges', 'get', 'cus_2', 'gateway_a', 'ch_2'])
    expect(got.charge.created).toBe(Date.UTC(2026, 2, 1, 15) / 1000)
    const bad = await runArgs(db, ['charges', 'import', file, '--tz', 'Nowhere/Land', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.json.message).toMatch(/--tz: unknown time zone "Nowhere\/Land"/)
  })

  it('a --mapping file may name the zone (time_zone); --tz overrides it', async () => {
    const dir = tempDir()
    const mapping = {columns: {amount: 'Amount', created: 'Date', currency: 'Currency', origin_id: 'Id', product: 'Plan', status: 'State', user_id: 'Account'}, kind: 'charges', origin: 'gateway_b', time_zone: 'Asia/Tokyo'}
    const mapFile = writeTemp('m.json', JSON.stringify(mapping), dir)
    const file = writeTemp('b.csv', 'Id,Account,Date,Amount,Currency,State,Plan\ntx_1,acct_1,2026-03-01 09:00:00,9.99,USD,succeeded,lifetime\n', dir)
    await ok(['charges', 'import', file, '--mapping', mapFile])
    expect((await ok(['charges', 'get', 'acct_1', 'gateway_b', 'tx_1'])).charge.created).toBe(Date.UTC(2026, 3 - 1, 1, 0) / 1000)
    await ok(['charges', 'import', file, '--mapping', mapFile, '--tz', 'UTC'])
    expect((await ok(['charges', 'get', 'acct_1', 'gateway_b', 'tx_1'])).charge.created).toBe(Date.UTC(2026, 3 - 1, 1, 9) / 1000)
    await refused(['charges', 'import', file, '--mapping', writeTemp('m2.json', JSON.stringify({...mapping, time_zone: 'Tokyo'}), dir)], /--mapping: time_zone: unknown time zone "Tokyo"/)
  })

  it('revenue report reads --since/--until in --tz, and still reports UTC days and months', async () => {
    const r = await ok(['revenue', 'report', '--since', '2026-02-01', '--until', '2026-02-28', '--tz', 'Asia/Tokyo'])
    expect(r).toMatchObject({since: '2026-01-31', until: '2026-02-28'})
    expect(r.rows.map((x: {key: string}) => x.key)).toEqual(['2026-01', '2026-02'])
  })

  describe('HTTP X-Event-Timestamp', () => {
    let app: ReturnType<typeof buildServer>
    let base: string
    let key: string
    let store: string
    beforeAll(async () => {
      store = tempStore()
      await withStore(store, seedCatalog)
      const k = await runArgs(store, ['keys', 'create', '--name', 't', '--json'])
      key = k.json.api_key
      app = buildServer({db: store, log: () => {}})
      base = await app.listen({host: '127.0.0.1', port: 0})
    })
    afterAll(async () => {
      await app.close()
    })

    const post = (ts: string, id: string) =>
      fetch(`${base}/v1/charges`, {
        body: JSON.stringify({amount: 1, created: 1767225600, currency: 'USD', origin: 'gateway_a', origin_id: id, product: 'lifetime', status: 'succeeded', user_id: 'u1'}),
        headers: {accept: 'application/json', authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-event-timestamp': ts},
        method: 'POST',
      })

    it('X-Event-Timestamp: 2026-02-30 is 400 naming the header; without an offset it is UTC', async () => {
      const before = dump(store)
      const r = await post('2026-02-30', 'h1')
      expect(r.status).toBe(400)
      expect(((await r.json()) as {message: string}).message).toMatch(/header X-Event-Timestamp: "2026-02-30" is not a valid date or time \(February 2026 has 28 days\); .*\(without one it is UTC\)$/)
      expect(dump(store)).toEqual(before)
      const good = await post('2026-02-01T10:00', 'h2')
      expect(good.status).toBe(200)
      expect(((await good.json()) as {record: {latest_event_timestamp: number}}).record.latest_event_timestamp).toBe(Date.UTC(2026, 1, 1, 10) / 1000)
    })

    it('a blank id in a path is 400 (item 12)', async () => {
      const r = await fetch(`${base}/v1/charges/%20%20/gateway_a/h2`, {headers: {accept: 'application/json', authorization: `Bearer ${key}`}})
      expect(r.status).toBe(400)
      expect(((await r.json()) as {message: string}).message).toMatch(/user_id: must not be blank/)
    })
  })
})

describe('item 7: a header naming a column twice is refused by every importer', () => {
  it('charges import', async () => {
    const file = writeTemp('dup.csv', 'id,Created date (UTC),Amount,Amount Refunded,Currency,Status,Customer ID,Amount\nch_1,2026-01-05 10:00:00,9.99,0,usd,Paid,cus_1,1.00\n')
    await refused(['charges', 'import', file, '--product', 'lifetime'], /the header names a column twice: column "Amount" appears 2 times \(columns 3 and 8\)/)
  })

  it('subscriptions import (names compared as matched: case and spaces ignored)', async () => {
    const header = 'id,Customer ID,Status,Amount,Currency,Interval,Product,Created (UTC),Current Period Start (UTC), status '
    const file = writeTemp('dup.csv', `${header}\nsub_1,cus_1,active,9.99,usd,month,prod_pro,2026-01-01 00:00:00,2026-01-01 00:00:00,canceled\n`)
    await refused(['subscriptions', 'import', file], /column "Status" appears 2 times \(columns 3 and 10\)/)
  })

  it('fx import (currency,rate,date CSV and ECB layouts)', async () => {
    const csv = writeTemp('dup.csv', 'currency,rate,date,rate\nEUR,0.9,2026-01-05,0.8\n')
    await refused(['fx', 'import', csv], /line 1: column "rate" appears 2 times \(columns 2 and 4\)/)
    const ecb = writeTemp('ecb.csv', 'Date,USD,JPY,USD,\n2026-04-13,1.1,186,1.2,\n')
    await refused(['fx', 'import', ecb], /line 1: column "USD" appears 2 times \(columns 2 and 4\)/)
  })

  it('products import (refused before this issue; kept)', async () => {
    const csv = writeTemp('dup.csv', 'api_id,name,base_px,interval,interval_count,Name\np1,P,5,month,1,Q\n')
    await refused(['products', 'import', csv], /column "name" appears twice/)
  })
})

describe('item 12: blank ids, moments out of order, numbers out of range', () => {
  it('whitespace-only ids are refused like empty ones (flags, bodies, HTTP paths share the schemas)', async () => {
    await refused(charge({'user-id': '   '}), /user_id: must not be blank, got " {3}" \(whitespace only\)/)
    await refused(charge({'origin-id': ' \u00a0 '}), /origin_id: must not be blank/)
    await refused(sub({'user-id': '\u2003'}), /user_id: must not be blank/)
    await refused(['charges', 'get', '  ', 'gateway_a', 'ch_1'], /user_id: must not be blank/)
    const body = writeTemp('s.json', JSON.stringify({amount: 10, created: 1767225600, currency: 'USD', origin: 'gateway_a', origin_id: '\t ', product: 'pro_monthly', status: 'active', user_id: 'u2'}))
    await refused(['subscriptions', 'create', '--body', body], /origin_id: must not be blank/)
    await refused(['products', 'create', '--api-id', '  ', '--name', 'P', '--base-px', '5', '--interval', 'month', '--interval-count', '1'], /api_id: must not be blank/)
    await refused(['coupons', 'create', '--api-id', ' ', '--name', 'C', '--type', 'percentage', '--value', '10'], /api_id: must not be blank/)
    await refused(['products', 'create', '--api-id', 'p1', '--name', 'P', '--base-px', '5', '--interval', 'month', '--interval-count', '1', '--integration', '{"type": "gateway_c", "gateway_c_plan_id": "  "}'], /integrations\[0\]\.gateway_c_plan_id: must not be blank/)
    // Import cells: a blank id is a missing one (the row is rejected, the others land).
    const header = 'id,Created date (UTC),Amount,Amount Refunded,Currency,Status,Customer ID,product (metadata)'
    const file = writeTemp('p.csv', `${header}\n   ,2026-01-05 10:00:00,9.99,0,usd,Paid,cus_1,lifetime\nch_2,2026-01-05 10:00:00,9.99,0,usd,Paid,  ,lifetime\nch_3,2026-01-05 10:00:00,9.99,0,usd,Paid,cus_3,lifetime\n`)
    const rejects = join(tempDir(), 'r.csv')
    const r = await runArgs(db, ['charges', 'import', file, '--rejects', rejects, '--json'])
    expect(r.json).toMatchObject({inserted: 1, rejected: 2})
    expect(readFileSync(rejects, 'utf8')).toMatch(/missing id: id is empty[\s\S]*missing user id/)
  })

  it('trial_end before trial_start, cancel_at or canceled_at before created: create and update', async () => {
    await refused(sub({status: 'trialing', 'trial-end': '2026-01-10', 'trial-start': '2026-01-14'}), /trial_end: 1768003200 \(2026-01-10T00:00:00Z\) is before trial_start 1768348800 \(2026-01-14T00:00:00Z\)/)
    await refused(sub({'cancel-at': '2025-12-31', status: 'canceled'}), /cancel_at: 1767139200 \(2025-12-31T00:00:00Z\) is before created 1767225600 \(2026-01-01T00:00:00Z\)/)
    await refused(sub({'canceled-at': '2025-12-31T23:59:59Z', status: 'canceled'}), /canceled_at: 1767225599 .* is before created 1767225600/)
    await ok(sub({status: 'trialing', 'trial-end': '2026-01-14', 'trial-start': '2026-01-14'}))
    await refused(['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--trial-end', '2026-01-13', '--event-timestamp', '1767312001'], /invalid subscription update: trial_end: .* is before trial_start/)
    await refused(['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--status', 'canceled', '--cancel-at', '2025-06-01', '--event-timestamp', '1767312001'], /cancel_at: .* is before created/)
    await refused(['subscriptions', 'update', 'u1', 'gateway_a', 'sub_1', '--status', 'canceled', '--cancel-at', '2026-02-01', '--created', '2026-03-01', '--event-timestamp', '1767312001'], /cancel_at: .* is before created 1772323200/)
    // A body breaks the same rules through --body (and over HTTP).
    const body = writeTemp('s.json', JSON.stringify({amount: 10, cancel_at: 1767225599, created: 1767225600, currency: 'USD', origin: 'gateway_a', origin_id: 'sub_2', product: 'pro_monthly', status: 'canceled', user_id: 'u2'}))
    await refused(['subscriptions', 'create', '--body', body], /cancel_at: 1767225599 .* is before created/)
  })

  it('an import row with moments out of order is rejected with its reason', async () => {
    const header = 'id,Customer ID,Status,Amount,Currency,Interval,Product,Created (UTC),Current Period Start (UTC),Trial Start (UTC),Trial End (UTC),Canceled At (UTC),Ended At (UTC)'
    const rows = ['sub_1,cus_1,trialing,9.99,usd,month,prod_pro,2026-01-10 00:00:00,2026-01-10 00:00:00,2026-01-10 00:00:00,2026-01-03 00:00:00,,', 'sub_2,cus_2,canceled,9.99,usd,month,prod_pro,2026-01-10 00:00:00,2026-01-10 00:00:00,,,2026-01-09 00:00:00,2026-01-09 00:00:00']
    const file = writeTemp('s.csv', [header, ...rows].join('\n') + '\n')
    const rejects = join(tempDir(), 'r.csv')
    const r = await runArgs(db, ['subscriptions', 'import', file, '--rejects', rejects, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 0, rejected: 2})
    const text = readFileSync(rejects, 'utf8')
    expect(text).toMatch(/trial_end: 1767398400 \(2026-01-03T00:00:00Z\) is before trial_start/)
    expect(text).toMatch(/cancel_at: .* is before created/)
  })

  it('--amount 1e400 is "out of range", not "got null" (flags and JSON bodies)', async () => {
    await refused(charge({amount: '1e400'}), /amount: number out of range \(too large to represent, such as 1e400\); expected a finite number/)
    await refused(sub({amount: '-1e400'}), /amount: number out of range/)
    await refused(['products', 'create', '--api-id', 'p1', '--name', 'P', '--base-px', '1e400', '--interval', 'month', '--interval-count', '1'], /base_px: number out of range/)
    const body = writeTemp('c.json', '{"amount": 1e999, "created": 1767225600, "currency": "USD", "origin": "gateway_a", "origin_id": "b1", "product": "lifetime", "status": "succeeded", "user_id": "u1"}')
    await refused(['charges', 'create', '--body', body], /amount: number out of range/)
  })
})

describe('item 16: the spec\'s "one or more" and "10-digit" rules', () => {
  const product = (extra: Record<string, unknown> = {}) => writeTemp('p.json', JSON.stringify({api_id: 'p1', base_px: 5, interval: 'month', interval_count: 1, name: 'P', ...extra}))

  it('country_prices: [] is refused on create and update; null (or --country-price none) removes them', async () => {
    await refused(['products', 'create', '--body', product({country_prices: []})], /country_prices: must list one or more country prices \(the spec's rule\); to have none, leave the field out, or send null on update to remove them all \(CLI: --country-price none\)/)
    await ok(['products', 'create', '--body', product({country_prices: [{amount: 4.99, country: 'DE', currency: 'EUR'}]})])
    await refused(['products', 'update', 'p1', '--body', writeTemp('u.json', '{"country_prices": []}')], /country_prices: must list one or more/)
    // Dropping the stored country prices needs --yes without a terminal.
    const cleared = await ok(['products', 'update', 'p1', '--body', writeTemp('u.json', '{"country_prices": null}'), '--yes'])
    expect(cleared.country_prices).toEqual([])
    // 4.99 EUR over the converted 5 USD is +25.06%: --yes without a terminal.
    await ok(['products', 'update', 'p1', '--country-price', 'DE=4.99:EUR', '--yes'])
    expect((await ok(['products', 'update', 'p1', '--country-price', 'none', '--yes'])).country_prices).toEqual([])
  })

  it('a product without country prices exports and imports back unchanged', async () => {
    await ok(['products', 'create', '--body', product()])
    for (const ext of ['json', 'csv']) {
      const file = join(tempDir(), `catalog.${ext}`)
      await ok(['products', 'export', file])
      const before = dump(db)
      const r = await ok(['products', 'import', file])
      expect(r).toMatchObject({inserted: 0, updated: 0})
      expect(dump(db)).toEqual(before)
    }
  })

  it('created 999999999 (9 digits) is refused in a body and as a flag; 10 digits and ISO dates are accepted', async () => {
    const body = writeTemp('c.json', JSON.stringify({amount: 1, created: 999_999_999, currency: 'USD', origin: 'gateway_a', origin_id: 'b1', product: 'lifetime', status: 'succeeded', user_id: 'u1'}))
    await refused(['charges', 'create', '--body', body], /created: expected a 10-digit UNIX timestamp in seconds \(1000000000 to 9999999999, 2001-09-09 to 2286-11-20\), got 999999999/)
    await refused(charge({created: '999999999'}), /--created: "999999999" is not a valid date or time \(UNIX seconds have 10 digits, from 2001-09-09 to 2286-11-20; this has 9\)/)
    await refused(sub({'cancel-at': '123', status: 'canceled'}), /--cancel-at: "123" .*this has 3/)
    const subBody = writeTemp('s.json', JSON.stringify({amount: 1, created: 1767225600, currency: 'USD', origin: 'gateway_a', origin_id: 's9', product: 'pro_monthly', status: 'trialing', trial_end: 99, trial_start: 1767225600, user_id: 'u1'}))
    await refused(['subscriptions', 'create', '--body', subBody], /trial_end: expected a 10-digit UNIX timestamp/)
    await ok(charge({created: '1000000000', 'origin-id': 'ok1'}))
    await ok(charge({created: '2026-01-01', 'origin-id': 'ok2'}))
  })
})
