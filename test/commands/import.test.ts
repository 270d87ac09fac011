import {copyFileSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse} from 'csv-parse/sync'
import {beforeEach, describe, expect, it} from 'vitest'

import {READ_BYTES} from '../../src/import/worker.js'
import {configureRule} from '../../src/pricing/gateways.js'
import {PAYMENTS_HEADER, paymentsCsv, runArgs, seedCatalog, setRates, tempDir, withStore, writeTemp} from '../helpers/revenue-fixtures.js'
import {ROOT, tempStore} from '../helpers/run.js'

const FIXTURES = join(ROOT, 'fixtures', 'imports')

/** A fixture copied to a temp folder, so the default rejects file lands there. */
function fixture(name: string): string {
  const dir = tempDir()
  copyFileSync(join(FIXTURES, name), join(dir, name))
  return join(dir, name)
}

function rejects(path: string): {line: string; reason: string; row: Record<string, string>}[] {
  const rows = parse(readFileSync(path, 'utf8'), {columns: true, relax_column_count: true}) as Record<string, string>[]
  return rows.map(({line, reason, ...row}) => ({line, reason, row}))
}

async function rows(db: string, table: 'charges' | 'subscriptions'): Promise<Record<string, any>[]> {
  return await withStore(db, (d) => d.prepare(`SELECT * FROM ${table} ORDER BY origin_id`).all() as Record<string, any>[])
}

const at = (iso: string) => Date.parse(iso) / 1000

/** The six kinds of bad rows every fixture carries, in this order of lines. */
const BAD_REASONS = [/^unknown product /, /^bad date /, /^currency: unknown currency /, /^amount: must not be negative/, /^unknown status /, /^missing id: /]

describe('import fixtures in each preset layout', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1772323200'
  })

  it('gateway_a payments export (new layout): good rows land, exactly the bad rows are rejected with reasons; a re-run changes nothing', async () => {
    const file = fixture('payments-new.csv')
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 5, preset: 'gateway_a_payments', read: 11, rejected: 6, rejects_file: `${file}.rejects.csv`, stale: 0, success: false, unchanged: 0, updated: 0})
    expect(r.json.message).toMatch(/6 of 11 rows rejected; see .*payments-new.csv.rejects.csv/)
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.line)).toEqual(['5', '6', '7', '8', '9', '10'])
    bad.forEach((b, i) => expect(b.reason).toMatch(BAD_REASONS[i]))
    expect(bad[0].reason).toContain('"prod_unknown"')
    expect(bad[1].reason).toContain('"2026-13-45 10:00:00" in Created date (UTC)')
    expect(bad[2].reason).toContain('"xyz"')
    // Cells are echoed as read, but a formula is neutralised.
    expect(bad[2].row.Description).toBe(`'=HYPERLINK("http://evil")`)
    expect(bad[3].row.Amount).toBe('-5.00')

    const charges = await rows(db, 'charges')
    expect(charges.map((c) => c.origin_id)).toEqual(['ch_1001', 'ch_1002', 'ch_1003', 'ch_1009', 'ch_1010'])
    const [c1, c2, c3, c9, c10] = charges
    expect(c1).toMatchObject({amount_minor: 999, country: 'DE', currency: 'USD', product_id: 1, status: 'succeeded', user_id: 'u_alice'})
    expect(JSON.parse(c1.metadata_json)).toEqual({channel: 'web', country: 'DE', product: 'prod_pro', user_id: 'u_alice'})
    // "Refunded" with no refunded amount: fully refunded; the event is the refund date.
    expect(c2).toMatchObject({amount_minor: 12_000, amount_refunded_minor: 12_000, amount_refunded_usd_minor: 15_000, amount_usd_minor: 15_000, latest_event_timestamp: at('2026-01-20T09:00:00Z'), product_id: 5, user_id: 'cus_B'})
    // The row's Converted Amount (10.00 usd) is what the gateway settled: kept as the USD amount, not the store's 15.00.
    expect(c3).toMatchObject({amount_minor: 1500, amount_usd_minor: 1000, currency: 'JPY', status: 'failed'})
    expect(r.json.settled_usd).toEqual({difference_usd: -5, difference_usd_minor: -500, rows: 5})
    expect(r.json.rejected_by_reason).toEqual({'bad date': 1, 'missing id': 1, 'unknown currency': 1, 'unknown product': 1, 'unknown status': 1, 'amount: must not be negative': 1})
    // The row's event: its moment, how far its status moved (1: paid, +1 refunded in part), a hash of its values.
    expect(c9).toMatchObject({amount_refunded_minor: 500, latest_event_id: expect.stringMatching(new RegExp(`^import:${at('2026-02-03T08:15:00Z')}:2:[0-9a-f]{8}$`))})
    expect(c10).toMatchObject({amount_minor: 120_000, product_id: 5})

    const again = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(again.json).toMatchObject({inserted: 0, read: 11, rejected: 6, stale: 0, unchanged: 5, updated: 0})
    expect(await rows(db, 'charges')).toEqual(charges)
  })

  it('gateway_a payments export (older layout, more card columns): --product for rows without one', async () => {
    const file = fixture('payments-old.csv')
    const r = await runArgs(db, ['charges', 'import', file, '--product', 'lifetime', '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 3, preset: 'gateway_a_payments', read: 9, rejected: 6})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.line)).toEqual(['5', '6', '7', '8', '9', '10'])
    bad.forEach((b, i) => expect(b.reason).toMatch(BAD_REASONS[i]))
    expect(bad[4].reason).toContain('"Chargeback"')
    const charges = await rows(db, 'charges')
    expect(charges.map((c) => [c.origin_id, c.product_id, c.country, c.created])).toEqual([
      ['ch_old1', 5, 'US', at('2019-06-01T10:00:00Z')],
      ['ch_old2', 5, 'GB', at('2019-06-02T11:00:00Z')],
      ['ch_old3', 5, null, at('2019-06-03T12:00:00Z')],
    ])
    // The gateway settled 62.00 USD (Converted Amount): that is the record's USD amount, fully refunded.
    expect(charges[1]).toMatchObject({amount_refunded_minor: 4900, amount_refunded_usd_minor: 6200, amount_usd_minor: 6200})
    // The store's FX would have said 98.00 (2019 is older than every rate on file: the earliest, GBP 0.5, is used).
    expect(r.json.settled_usd).toEqual({difference_usd: -36, difference_usd_minor: -3600, rows: 3})
    const again = await runArgs(db, ['charges', 'import', file, '--product', 'lifetime', '--json'])
    expect(again.json).toMatchObject({inserted: 0, unchanged: 3, updated: 0})

    const noProduct = await runArgs(db, ['charges', 'import', file, '--rejects', join(tempDir(), 'r.csv'), '--json'])
    expect(noProduct.json).toMatchObject({rejected: 8, unchanged: 1})
    expect(rejects(noProduct.json.rejects_file).filter((b) => b.reason.startsWith('missing product')).map((b) => b.line)).toEqual(['2', '4'])
  })

  it('gateway_a subscriptions export: statuses mapped, products matched by integration and interval, fields the status forbids dropped', async () => {
    const file = fixture('subscriptions-gateway-a.csv')
    const r = await runArgs(db, ['subscriptions', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 5, preset: 'gateway_a_subscriptions', read: 11, rejected: 6})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.line)).toEqual(['7', '8', '9', '10', '11', '12'])
    bad.forEach((b, i) => expect(b.reason).toMatch(BAD_REASONS[i]))
    const subs = Object.fromEntries((await rows(db, 'subscriptions')).map((s) => [s.origin_id, s]))
    expect(Object.keys(subs)).toEqual(['sub_A1', 'sub_A2', 'sub_A3', 'sub_A4', 'sub_A5'])
    expect(subs.sub_A1).toMatchObject({amount_usd_monthly_minor: 999, interval: 'month', latest_event_timestamp: at('2026-03-01T00:00:00Z'), product_id: 1, status: 'active', user_id: 'u_alice'})
    expect(subs.sub_A2).toMatchObject({status: 'trialing', trial_end: at('2026-03-24T08:00:00Z'), trial_start: at('2026-03-10T08:00:00Z'), user_id: 'cus_B'})
    expect(subs.sub_A3).toMatchObject({
      amount_usd_minor: 12_500,
      amount_usd_monthly_minor: 1042,
      cancel_at: at('2026-02-15T10:00:00Z'),
      canceled_at: at('2026-02-15T10:00:00Z'),
      interval: 'year',
      product_id: 2,
      status: 'canceled',
    })
    expect(subs.sub_A4).toMatchObject({amount_usd_monthly_minor: 1000, interval: 'month', interval_count: 3, product_id: 3, status: 'active'})
    expect(subs.sub_A5).toMatchObject({amount_usd_monthly_minor: 3033, interval: 'week', status: 'active', trial_end: null, trial_start: null})
    const again = await runArgs(db, ['subscriptions', 'import', file, '--json'])
    expect(again.json).toMatchObject({inserted: 0, rejected: 6, unchanged: 5, updated: 0})
  })

  it('gateway_c subscriptions export: quantity x unit price, interval from the product, statuses mapped', async () => {
    const file = fixture('subscriptions-gateway-c.csv')
    const r = await runArgs(db, ['subscriptions', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 4, preset: 'gateway_c_subscriptions', read: 10, rejected: 6})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.line)).toEqual(['6', '7', '8', '9', '10', '11'])
    bad.forEach((b, i) => expect(b.reason).toMatch(BAD_REASONS[i]))
    const subs = Object.fromEntries((await rows(db, 'subscriptions')).map((s) => [s.origin_id, s]))
    expect(subs.cb_1).toMatchObject({origin: 'gateway_c', product_id: 1, status: 'active', user_id: 'cust_1'})
    expect(subs.cb_2).toMatchObject({amount_minor: 600, amount_usd_monthly_minor: 5200, interval: 'week', product_id: 4, status: 'trialing', trial_end: at('2026-03-15T00:00:00Z')})
    expect(subs.cb_3).toMatchObject({cancel_at: at('2026-02-01T00:00:00Z'), canceled_at: at('2026-02-01T00:00:00Z'), status: 'canceled'})
    expect(subs.cb_4).toMatchObject({status: 'active'})
    const again = await runArgs(db, ['subscriptions', 'import', file, '--json'])
    expect(again.json).toMatchObject({inserted: 0, unchanged: 4, updated: 0})
  })

  it('--mapping describes another layout (integer cents, UNIX seconds, own statuses)', async () => {
    const file = fixture('gateway-b-charges.csv')
    const r = await runArgs(db, ['charges', 'import', file, '--mapping', join(FIXTURES, 'gateway-b-charges.mapping.json'), '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 3, preset: expect.stringContaining('mapping'), read: 9, rejected: 6})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.line)).toEqual(['5', '6', '7', '8', '9', '10'])
    bad.forEach((b, i) => expect(b.reason).toMatch(BAD_REASONS[i]))
    const charges = Object.fromEntries((await rows(db, 'charges')).map((c) => [c.origin_id, c]))
    expect(charges.tx_2).toMatchObject({amount_minor: 4900, amount_refunded_minor: 4900, latest_event_timestamp: 1_768_298_400, metadata_json: '{"Channel":"app"}', origin: 'gateway_b'})
    expect(charges.tx_3).toMatchObject({amount_minor: 1500, currency: 'JPY', status: 'failed'})
  })
})

describe('import behaviour', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, seedCatalog)
    process.env.PRICECTL_NOW = '1772323200'
  })

  it('--dry-run counts what would change and writes nothing', async () => {
    const file = writeTemp('p.csv', paymentsCsv(40))
    const dry = await runArgs(db, ['charges', 'import', file, '--dry-run', '--json'])
    expect(dry.code).toBe(0)
    expect(dry.json).toMatchObject({dry_run: true, inserted: 40, read: 40, rejected: 0, success: true})
    expect(await rows(db, 'charges')).toHaveLength(0)
    const real = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(real.json).toMatchObject({dry_run: false, inserted: 40})
    const dryAgain = await runArgs(db, ['charges', 'import', file, '--dry-run', '--json'])
    expect(dryAgain.json).toMatchObject({inserted: 0, unchanged: 40})
  })

  it('rows with bytes that are not UTF-8 are rejected wherever they fall in a file, also across a read', async () => {
    // The reader decodes the file READ_BYTES (64 KB) at a time, in a worker or, for a file up
    // to 1 MB like this one, in the writer's thread (the same readExport), and checks cells
    // only where the text read held a replacement character: put a latin-1 byte (é) just
    // before the end of the first read, in a record that ends in the next read (whose own
    // text is clean), and another in the third read.
    const rowsInFile = 2000
    const lines = paymentsCsv(rowsInFile).split('\n')
    const bytes = Buffer.from(lines.join('\n'))
    const boundary = READ_BYTES
    expect(bytes.length).toBeGreaterThan(3 * boundary)
    const lineOf = (offset: number) => bytes.subarray(0, offset).toString('latin1').split('\n').length
    expect(bytes.indexOf(0x0a, boundary - 2)).toBeGreaterThan(boundary)
    bytes[boundary - 2] = 0xe9
    const deep = 1600
    const deepAt = bytes.indexOf(Buffer.from(`\n${lines[deep]}`)) + 1
    expect(deepAt).toBeGreaterThan(2 * boundary)
    bytes[bytes.indexOf('Pro plan', deepAt) + 2] = 0xe9
    const file = join(tempDir(), 'latin1-inside.csv')
    writeFileSync(file, bytes)
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: rowsInFile - 2, read: rowsInFile, rejected: 2})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => Number(b.line))).toEqual([lineOf(boundary - 2), deep + 1])
    for (const b of bad) expect(b.reason).toMatch(/^not valid UTF-8 text/)
  })

  it('a later export row updates; an older one is stale against a newer single write or a delete', async () => {
    const header = PAYMENTS_HEADER.join(',')
    const row = (status: string, refunded: string, refundedAt: string) => `ch_x,2026-01-05 10:00:00,10.00,${refunded},usd,true,10.00,0.00,usd,,Pro,0.59,${refundedAt},ACME,${status},ok,0.00,card_1,cus_1,,a@b.c,in_1,,u1,prod_pro`
    const v1 = writeTemp('v1.csv', `${header}\n${row('Paid', '0.00', '')}\n${row('Paid', '0.00', '').replace('ch_x', 'ch_y')}\n`)
    const v2 = writeTemp('v2.csv', `${header}\n${row('Refunded', '10.00', '2026-01-09 08:00:00')}\n`)
    expect((await runArgs(db, ['charges', 'import', v1, '--json'])).json).toMatchObject({inserted: 2})
    expect((await runArgs(db, ['charges', 'import', v2, '--json'])).json).toMatchObject({inserted: 0, updated: 1})
    expect((await runArgs(db, ['charges', 'import', v1, '--json'])).json).toMatchObject({stale: 1, unchanged: 1})
    expect((await rows(db, 'charges'))[0]).toMatchObject({amount_refunded_minor: 1000, origin_id: 'ch_x'})
    // A single write with a newer event wins over the export (its field, status); a delete keeps
    // the record gone. v2's row is the record's base event: the same event again, unchanged.
    await runArgs(db, ['charges', 'update', 'u1', 'gateway_a', 'ch_x', '--status', 'failed', '--event-timestamp', '2026-02-01'])
    await runArgs(db, ['charges', 'delete', 'u1', 'gateway_a', 'ch_y', '--yes', '--event-timestamp', '2026-02-01'])
    expect((await runArgs(db, ['charges', 'import', v2, '--json'])).json).toMatchObject({stale: 0, unchanged: 1, updated: 0})
    expect((await runArgs(db, ['charges', 'import', v1, '--json'])).json).toMatchObject({inserted: 0, stale: 2})
    expect((await rows(db, 'charges')).map((c) => [c.origin_id, c.status])).toEqual([['ch_x', 'failed']])
  })

  it('reads BOM, CRLF, quoted line breaks; reports the line where a bad record starts; rejects rows with the wrong column count', async () => {
    const header = PAYMENTS_HEADER.join(',')
    const good = paymentsCsv(3).split('\n').slice(1, 4)
    const multiline = good[1].replace('Pro plan', '"Pro\nplan,\nwith breaks"')
    const badAfter = good[2].replace(/,usd,/, ',EURO,')
    const text = `\uFEFF${header}\r\n${good[0]}\r\n${multiline}\r\n${badAfter}\r\nch_short,2026-01-01\r\n`
    const file = writeTemp('crlf.csv', text)
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.json).toMatchObject({inserted: 2, read: 4, rejected: 2})
    const bad = rejects(r.json.rejects_file)
    expect(bad.map((b) => [b.line, b.reason.slice(0, 28)])).toEqual([
      ['6', 'currency: unknown currency "'],
      ['7', `expected ${PAYMENTS_HEADER.length} columns, got 2`],
    ])
    expect((await rows(db, 'charges')).map((c) => c.origin_id)).toEqual(['ch_000000', 'ch_000001'])
  })

  it('a record csv-parse cannot read is rejected, the rest lands', async () => {
    const lines = paymentsCsv(3).trimEnd().split('\n')
    const file = writeTemp('broken.csv', `${lines.join('\n')}\n"ch_open,2026-01-01 00:00:00,1.00\n`)
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 3, rejected: 1})
    expect(rejects(r.json.rejects_file)[0].reason).toMatch(/^unreadable CSV record: /)
  })

  it('refuses files it cannot map with exit 2 and a next step, writing nothing', async () => {
    const payments = fixture('payments-new.csv')
    const wrongKind = await runArgs(db, ['subscriptions', 'import', payments, '--json'])
    expect(wrongKind.code).toBe(2)
    expect(wrongKind.json.message).toContain('looks like a gateway_a payments export')
    expect(wrongKind.json.message).toContain('pricectl charges import')
    const unknown = await runArgs(db, ['charges', 'import', writeTemp('x.csv', 'a,b,c\n1,2,3\n'), '--json'])
    expect(unknown.code).toBe(2)
    expect(unknown.json.message).toMatch(/unrecognised header \("a", "b", "c"\).*--mapping FILE/)
    const forced = await runArgs(db, ['subscriptions', 'import', fixture('subscriptions-gateway-a.csv'), '--preset', 'gateway_c_subscriptions', '--json'])
    expect(forced.code).toBe(2)
    expect(forced.json.message).toContain('the file lacks columns of preset gateway_c_subscriptions: subscriptions.id')
    const kind = await runArgs(db, ['charges', 'import', payments, '--preset', 'gateway_c_subscriptions', '--json'])
    expect(kind.json.message).toContain('pricectl subscriptions import')
    const mapping = writeTemp('m.json', JSON.stringify({columns: {origin_id: 'id', plan: 'x'}, origin: 'gateway_z'}))
    const badMapping = await runArgs(db, ['charges', 'import', payments, '--mapping', mapping, '--json'])
    expect(badMapping.code).toBe(2)
    expect(badMapping.json.message).toMatch(/origin: unknown origin "gateway_z"/)
    const missingCols = writeTemp('m2.json', JSON.stringify({columns: {amount: 'Amount', origin_id: 'nope'}, origin: 'gateway_b'}))
    const noCols = await runArgs(db, ['charges', 'import', payments, '--mapping', missingCols, '--json'])
    expect(noCols.code).toBe(2)
    expect(noCols.json.message).toMatch(/the file has no column for origin_id \(nope\), user_id, created, currency, status/)
    const product = await runArgs(db, ['charges', 'import', payments, '--product', 'ghost', '--json'])
    // A product that does not exist is not found (exit 1), like every unknown named thing.
    expect(product.code).toBe(1)
    expect(product.json.message).toContain('--product: unknown product "ghost"')
    const missing = await runArgs(db, ['charges', 'import', join(tempDir(), 'nope.csv'), '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toContain('no such file')
    const empty = await runArgs(db, ['charges', 'import', writeTemp('e.csv', ''), '--json'])
    expect(empty.code).toBe(2)
    expect(empty.json.message).toContain('is empty')
    expect(await rows(db, 'charges')).toHaveLength(0)
    expect(existsSync(`${payments}.rejects.csv`)).toBe(false)
  })

  it('prints a summary table and plain progress lines without a terminal, nothing on stderr under --json', async () => {
    const file = writeTemp('p.csv', paymentsCsv(30))
    process.env.PRICECTL_PROGRESS_INTERVAL_MS = '0'
    try {
      const plain = await runArgs(db, ['charges', 'import', file, '--batch-size', '10'])
      expect(plain.code).toBe(0)
      expect(plain.stderr).toMatch(/charges import: 30 rows read \(100%, \d+ rows\/s\)/)
      expect(plain.stdout).toMatch(/│ inserted\s+│ 30\s+│/)
      expect(plain.stdout).toContain('charges imported: 30 read, 30 inserted, 0 updated, 0 unchanged, 0 stale, 0 rejected')
      const quiet = await runArgs(db, ['charges', 'import', file, '--json'])
      expect(quiet.stderr).toBe('')
      expect(quiet.json).toMatchObject({message: expect.stringContaining('30 unchanged'), success: true, unchanged: 30})
    } finally {
      delete process.env.PRICECTL_PROGRESS_INTERVAL_MS
    }
  })

  it('a later run without rejected rows removes the stale rejects file', async () => {
    const file = writeTemp('p.csv', paymentsCsv(5))
    writeFileSync(`${file}.rejects.csv`, 'line,reason,id\n2,old,x\n')
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.json.rejects_file).toBeNull()
    expect(existsSync(`${file}.rejects.csv`)).toBe(false)
  })
})

describe('import amounts without guessing', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await withStore(db, (d) => {
      seedCatalog(d)
      setRates(d, '2020-01-01', {HUF: 400, ISK: 125, KWD: 0.25}, false)
    })
    process.env.PRICECTL_NOW = '1772323200'
  })

  /** A payments export (gateway_a_payments preset) of rows [id, Amount cell, currency]. */
  function payments(rowsIn: [string, string, string][]): string {
    const lines = rowsIn.map(([id, amount, currency]) => {
      const cells = Object.fromEntries(PAYMENTS_HEADER.map((h) => [h, '']))
      Object.assign(cells, {Amount: amount, 'Amount Refunded': '0.00', Captured: 'true', Currency: currency, 'Created date (UTC)': '2026-01-05 10:00:00', 'Customer ID': `cus_${id}`, id, 'product (metadata)': 'prod_life', Status: 'Paid'})
      return PAYMENTS_HEADER.map((h) => (/[",]/.test(cells[h]) ? `"${cells[h]}"` : cells[h])).join(',')
    })
    return writeTemp('payments.csv', [PAYMENTS_HEADER.join(','), ...lines].join('\n') + '\n')
  }

  it('a country or currency cell is upper-cased as ASCII only: "ß" is no South Sudan, "uſd" no USD; "de" is DE', async () => {
    const header = [...PAYMENTS_HEADER, 'country (metadata)']
    const line = (id: string, currency: string, country: string) => {
      const cells: Record<string, string> = Object.fromEntries(header.map((h) => [h, '']))
      Object.assign(cells, {Amount: '9.99', 'Amount Refunded': '0.00', Captured: 'true', 'country (metadata)': country, Currency: currency, 'Created date (UTC)': '2026-01-05 10:00:00', 'Customer ID': `cus_${id}`, id, 'product (metadata)': 'prod_life', Status: 'Paid'})
      return header.map((h) => cells[h]).join(',')
    }
    const file = writeTemp('payments-case.csv', [header.join(','), line('ch_de', 'usd', 'de'), line('ch_ss', 'usd', 'ß'), line('ch_it', 'usd', 'ıt'), line('ch_usd', 'uſd', 'DE')].join('\n') + '\n')
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.json).toMatchObject({inserted: 1, read: 4, rejected: 3})
    expect(await rows(db, 'charges')).toEqual([expect.objectContaining({country: 'DE', currency: 'USD', origin_id: 'ch_de'})])
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.reason)).toEqual([
      expect.stringContaining('unknown country "ß"'),
      expect.stringContaining('unknown country "ıt"'),
      expect.stringContaining('unknown currency "uſd"'),
    ])
  })

  it('a payments row "19,999" KWD is rejected with the reason (the export writes no thousands separator); 19.999 KWD lands exactly', async () => {
    const file = payments([
      ['ch_kwd1', '19,999', 'kwd'],
      ['ch_kwd2', '19.999', 'kwd'],
      ['ch_kwd3', '19.9995', 'kwd'],
      ['ch_usd1', '1,200.00', 'usd'],
    ])
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.code).toBe(1)
    expect(r.json).toMatchObject({inserted: 1, read: 4, rejected: 3})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => [b.line, b.row.Amount])).toEqual([['2', '19,999'], ['4', '19.9995'], ['5', '1,200.00']])
    expect(bad[0].reason).toBe(
      'bad amount "19,999" in Amount: has ",", which is not a separator of this layout, so the amount is ambiguous (expected "." before decimals and no thousands separator, such as 1234.56; a --mapping file declares other separators with decimal_separator and thousands_separator)',
    )
    expect(bad[1].reason).toBe('bad amount "19.9995" in Amount: has 4 decimals, more than KWD has (3, ISO 4217); amounts are kept as charged, never rounded')
    expect(bad[2].reason).toContain('bad amount "1,200.00" in Amount: has ","')
    expect(await rows(db, 'charges')).toEqual([expect.objectContaining({amount_minor: 19_999, amount_usd_minor: 8000, currency: 'KWD', origin_id: 'ch_kwd2'})])
  })

  it('a gateway_a HUF charge of 6500.50 is imported as charged and shown so', async () => {
    const file = payments([['ch_huf', '6500.50', 'huf']])
    const r = await runArgs(db, ['charges', 'import', file, '--json'])
    expect(r.json).toMatchObject({inserted: 1, rejected: 0})
    expect((await rows(db, 'charges'))[0]).toMatchObject({amount_minor: 650_050, amount_usd_minor: 1625, currency: 'HUF'})
    const got = await runArgs(db, ['charges', 'get', 'cus_ch_huf', 'gateway_a', 'ch_huf', '--json'])
    expect(got.json.charge).toMatchObject({amount: 6500.5, amount_usd: 16.25, currency: 'HUF'})
    const human = await runArgs(db, ['charges', 'get', 'cus_ch_huf', 'gateway_a', 'ch_huf'])
    expect(human.stdout).toMatch(/6500\.5/)
  })

  /** A charges export in the gateway's integer units: the mapping names the origin gateway. */
  function minorExport(origin: string, rowsIn: [string, string, string][]): {file: string; mapping: string} {
    const dir = tempDir()
    const mapping = writeTemp('m.json', JSON.stringify({amount_unit: 'minor', columns: {amount: 'amount', created: 'created', currency: 'currency', origin_id: 'id', product: 'plan', status: 'status', user_id: 'customer'}, kind: 'charges', origin}), dir)
    const file = writeTemp('units.csv', ['id,customer,created,amount,currency,status,plan', ...rowsIn.map(([id, amount, currency]) => `${id},cus_1,1767607200,${amount},${currency},succeeded,lifetime`)].join('\n') + '\n', dir)
    return {file, mapping}
  }

  it('a minor-unit column is the origin gateway\'s integer amount: gateway_a ISK 240000 is 2400 krónur, what storage cannot hold is rejected', async () => {
    const {file, mapping} = minorExport('gateway_a', [
      ['ch_isk', '240000', 'ISK'],
      ['ch_isk_frac', '240050', 'ISK'],
      ['ch_jpy', '1500', 'JPY'],
      ['ch_kwd', '19990', 'KWD'],
      ['ch_usd', '999', 'USD'],
      ['ch_dec', '2400.00', 'ISK'],
    ])
    const r = await runArgs(db, ['charges', 'import', file, '--mapping', mapping, '--json'])
    expect(r.json).toMatchObject({inserted: 4, rejected: 2})
    const charges = Object.fromEntries((await rows(db, 'charges')).map((c) => [c.origin_id, c]))
    expect(charges.ch_isk).toMatchObject({amount_minor: 2400, amount_usd_minor: 1920, currency: 'ISK'})
    expect(charges.ch_jpy).toMatchObject({amount_minor: 1500, currency: 'JPY'})
    expect(charges.ch_kwd).toMatchObject({amount_minor: 19_990, currency: 'KWD'})
    expect(charges.ch_usd).toMatchObject({amount_minor: 999, currency: 'USD'})
    const got = await runArgs(db, ['charges', 'get', 'cus_1', 'gateway_a', 'ch_isk', '--json'])
    expect(got.json.charge).toMatchObject({amount: 2400, currency: 'ISK'})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.row.id)).toEqual(['ch_isk_frac', 'ch_dec'])
    expect(bad[0].reason).toBe('bad amount "240050" in amount: 240050 gateway_a units of ISK (exponent 2) is 2400.50 ISK, which ISK cannot hold exactly (0 decimals, ISO 4217)')
    expect(bad[1].reason).toMatch(/^bad amount "2400\.00" in amount: has a decimal separator, but the layout's amounts are whole minor units/)
  })

  it('minor units follow the origin gateway\'s table and the store\'s overrides of it', async () => {
    const paypal = minorExport('gateway_b', [['tx_isk', '240000', 'ISK'], ['tx_huf', '6500', 'HUF']])
    const r = await runArgs(db, ['charges', 'import', paypal.file, '--mapping', paypal.mapping, '--json'])
    expect(r.json).toMatchObject({inserted: 2, rejected: 0})
    const charges = Object.fromEntries((await rows(db, 'charges')).map((c) => [c.origin_id, c]))
    // gateway_b takes ISK in ISO units and HUF in whole forints.
    expect(charges.tx_isk).toMatchObject({amount_minor: 240_000, currency: 'ISK'})
    expect(charges.tx_huf).toMatchObject({amount_minor: 650_000, currency: 'HUF'})
    await withStore(db, async (_d, store) => await configureRule(store, 'gateway_a', 'ISK', {divisible_by: 1, exponent: 0}))
    const stripe = minorExport('gateway_a', [['ch_isk', '2400', 'ISK']])
    const s = await runArgs(db, ['charges', 'import', stripe.file, '--mapping', stripe.mapping, '--json'])
    expect(s.json).toMatchObject({inserted: 1, rejected: 0})
    expect((await rows(db, 'charges')).find((c) => c.origin_id === 'ch_isk')).toMatchObject({amount_minor: 2400})
  })

  it('a --mapping file declares its separators: "," before decimals and "." between thousands reads "1.234,56"', async () => {
    const dir = tempDir()
    const mapping = writeTemp(
      'de.json',
      JSON.stringify({columns: {amount: 'Betrag', created: 'Datum', currency: 'Währung', origin_id: 'ID', product: 'Plan', status: 'Status', user_id: 'Kunde'}, decimal_separator: ',', kind: 'charges', origin: 'gateway_c', thousands_separator: '.'}),
      dir,
    )
    const file = writeTemp('de.csv', 'ID;Kunde;Datum;Betrag;Währung;Status;Plan\n'.replaceAll(';', ',') + ['b1,k1,2026-01-05,"1.234,56",EUR,succeeded,lifetime', 'b2,k2,2026-01-05,"9,5",EUR,succeeded,lifetime', 'b3,k3,2026-01-05,1.5,EUR,succeeded,lifetime', 'b4,k4,2026-01-05,"1.234.5",EUR,succeeded,lifetime'].join('\n') + '\n', dir)
    const r = await runArgs(db, ['charges', 'import', file, '--mapping', mapping, '--json'])
    expect(r.json).toMatchObject({inserted: 2, rejected: 2})
    const charges = Object.fromEntries((await rows(db, 'charges')).map((c) => [c.origin_id, c]))
    expect(charges.b1).toMatchObject({amount_minor: 123_456, amount_usd_minor: 154_320})
    expect(charges.b2).toMatchObject({amount_minor: 950})
    const bad = rejects(`${file}.rejects.csv`)
    expect(bad.map((b) => b.row.ID)).toEqual(['b3', 'b4'])
    expect(bad[0].reason).toBe('bad amount "1.5" in Betrag: has "." where no thousands separator can be, so the amount is ambiguous (expected "," before decimals and "." between thousands, such as 1234,56 or 1.234,56)')
    const same = writeTemp('same.json', JSON.stringify({columns: {}, decimal_separator: ',', origin: 'gateway_c', thousands_separator: ','}), dir)
    const refused = await runArgs(db, ['charges', 'import', file, '--mapping', same, '--json'])
    expect(refused.code).toBe(2)
    expect(refused.json.message).toContain('--mapping: thousands_separator and decimal_separator are both ","')
    const unknown = writeTemp('odd.json', JSON.stringify({columns: {}, decimal_separator: ';', origin: 'gateway_c'}), dir)
    const odd = await runArgs(db, ['charges', 'import', file, '--mapping', unknown, '--json'])
    expect(odd.code).toBe(2)
    expect(odd.json.message).toMatch(/decimal_separator: expected "\." or ",", got ";"/)
  })
})
