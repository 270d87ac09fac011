import Database from 'better-sqlite3'
import {spawn} from 'node:child_process'
import {readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {dump} from '../helpers/dump.js'
import {ROOT, run, runBin} from '../helpers/run.js'
import {copyFixtureStore, FIXTURE_STORES, fixtureExpected, startBin, tempDir} from './helpers.js'

/**
 * Upgrades (issue 7, item 4): a store made by each released schema version
 * (fixtures/stores/vN.db, see make-v1.mjs) is opened by the current pricectl: migrated,
 * checked, and read back with the data intact. And `db backup` makes a consistent copy
 * while another process writes.
 */

const versions = readdirSync(FIXTURE_STORES)
  .filter((f) => /^v\d+\.db$/.test(f))
  .map((f) => f.replace(/\.db$/, ''))
  .sort()

/** Fields a later version may legitimately print differently: where the store was made, its (migrated) schema version. */
function comparable(args: string[], json: any): any {
  if (args[0] === 'db' && args[1] === 'info') return {counts: json.counts}
  return json
}

describe('fixture stores of released schema versions', () => {
  it('there is one per schema version up to the current one', () => {
    expect(versions).toContain('v1')
    // A new migration adds fixtures/stores/vN.db (and make-vN.mjs) for the version it releases.
    expect(versions.length).toBeGreaterThanOrEqual(SCHEMA_VERSION)
  })

  /**
   * Reads whose output a later issue changed on purpose, with the values they give now.
   * Issue 12 (FX sources the operator controls): v1 priced bob's EUR quote back to USD at
   * the bundled snapshot (0.88022588, dated 2026-09-29) because it was the latest; the
   * operator's rate (0.9, 2026-01-01, source "fixture") now outranks the snapshot.
   */
  const CHANGED_ON_PURPOSE: Record<string, (json: any) => void> = {
    'v1 price -u bob -p pro_monthly --integration gateway_b'(json) {
      const p = json.products.pro_monthly
      p.price_usd = 8.88 // 7.99 EUR / 0.9
      p.coupon.display.usd_price_numeric = 7.99 // 7.19 EUR / 0.9
      p.coupon.display.usd_price_formatted = '7,99\u00A0$'
    },
  }

  /**
   * Reads every version printed differently because a later issue changed a default on
   * purpose. Issue 29 (what a gateway is sent is chargeable): gateways without stored
   * settings accept their published currency lists ("listed") instead of any currency, and
   * gateway_c (Chargebee) takes amounts in minor units.
   */
  const CHANGED_IN_EVERY_VERSION: Record<string, (json: any) => void> = {
    'gateways list'(json) {
      for (const g of json.gateways) {
        if (g.source !== 'default') continue
        g.accepted_currencies = ['listed']
        if (g.gateway === 'gateway_c') g.amount_format = 'minor'
      }
    },
  }

  // In-process (the commands of run.ts): what is tested is the store, not the process.
  for (const version of versions) {
    it(`${version}.db: migrate, check, and every read gives what that version wrote`, async () => {
      const expected = fixtureExpected(version)
      const db = copyFixtureStore(tempDir(), `${version}.db`)
      process.env.CI = '1'
      process.env.PRICECTL_NOW = expected.now
      const before = dump(db)

      const migrated = await run(db, ['db', 'migrate', '--json'])
      expect(migrated.code, migrated.stdout + migrated.stderr).toBe(0)
      const check = await run(db, ['db', 'check', '--json'])
      expect(check.json).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true, schema_version: SCHEMA_VERSION})
      const afterMigrate = dump(db)
      expect(afterMigrate.user_version).toBe(SCHEMA_VERSION)
      // Every table of the old store still holds its rows (tables a later migration adds may be empty).
      for (const table of Object.keys(before.tables)) expect(afterMigrate.tables[table].length, `table ${table}`).toBeGreaterThan(0)

      for (const {args, json} of expected.reads) {
        CHANGED_ON_PURPOSE[`${version} ${args.join(' ')}`]?.(json)
        CHANGED_IN_EVERY_VERSION[args.join(' ')]?.(json)
        const r = await run(db, [...args, '--json'])
        expect(r.code, `${args.join(' ')}: ${r.stdout} ${r.stderr}`).toBe(0)
        // The current version may add fields; what the old one printed stays the same.
        expect(comparable(args, r.json), args.join(' ')).toMatchObject(comparable(args, json))
      }
      // Reading (including price for locked users) wrote nothing.
      expect(dump(db)).toEqual(afterMigrate)
      expect(statSync(db).mode & 0o777).toBe(0o600)
    })
  }

  it('a store made before charges kept tax (v5.db) reads tax 0 and its net as its amount: revenue and MRR as before', async () => {
    const expected = fixtureExpected('v5')
    const db = copyFixtureStore(tempDir(), 'v5.db')
    process.env.CI = '1'
    process.env.PRICECTL_NOW = expected.now
    expect((await run(db, ['db', 'migrate', '--json'])).code).toBe(0)
    for (const c of (await run(db, ['charges', 'list', '--json'])).json.charges) {
      expect(c, c.origin_id).toMatchObject({net: c.amount, net_usd: c.amount_usd, tax: 0, tax_usd: c.amount_usd === null ? null : 0})
    }
    for (const s of (await run(db, ['subscriptions', 'list', '--json'])).json.subscriptions) {
      expect(s, s.origin_id).toMatchObject({net: s.amount, net_usd_monthly: s.amount_usd_monthly, tax: 0})
    }
    const report = await run(db, ['revenue', 'report', '--since', '2026-01-01', '--until', '2026-03-31', '--json'])
    const before = expected.reads.find((x: {args: string[]}) => x.args.join(' ') === 'revenue report --since 2026-01-01 --until 2026-03-31')!.json
    expect(report.json.totals).toMatchObject({...before.totals, gross_revenue: before.totals.net_revenue, tax: 0})
  })

  it('a store made before tax in prices (v6.db): its locks read as exclusive at today\'s rate, prices as before, no settings', async () => {
    const expected = fixtureExpected('v6')
    const db = copyFixtureStore(tempDir(), 'v6.db')
    process.env.CI = '1'
    process.env.PRICECTL_NOW = expected.now
    expect((await run(db, ['db', 'migrate', '--json'])).code).toBe(0)
    const args = ['price', '-u', 'bob', '-p', 'pro_monthly', '--integration', 'gateway_b']
    const before = expected.reads.find((x: {args: string[]}) => x.args.join(' ') === args.join(' '))!.json.products.pro_monthly
    const p = (await run(db, [...args, '--json'])).json.products.pro_monthly
    expect(p.price).toBe(before.price)
    expect(p.tax).toEqual({behavior: 'exclusive', country: 'DE', display: 'zzgl. MwSt.', gross: expect.any(Number), label: 'VAT', net: before.price, rate: 19, tax: expect.any(Number)})
    expect(Math.round(p.tax.net * 100) + Math.round(p.tax.tax * 100)).toBe(Math.round(p.tax.gross * 100))
    expect(p.integrations.gateway_b).toMatchObject({...before.integrations.gateway_b, tax_behavior: 'exclusive'})
    expect((await run(db, ['tax', 'behavior', '--json'])).json).toMatchObject({settings: [], store_behavior: 'exclusive'})
    expect((await run(db, ['tax', 'list', '--country', 'DE', '--json'])).json.rates[0]).toMatchObject({kind: 'bundled', rate: 19})
  })

  it('a store of tax in prices (v7.db): a lock keeps the tax it was shown after the rates change', async () => {
    const expected = fixtureExpected('v7')
    const db = copyFixtureStore(tempDir(), 'v7.db')
    process.env.CI = '1'
    process.env.PRICECTL_NOW = expected.now
    expect((await run(db, ['db', 'migrate', '--json'])).code).toBe(0)
    const args = ['price', '-u', 'greta', '-p', 'pro_monthly', '-p', 'lifetime', '--integration', 'gateway_a']
    const before = expected.reads.find((x: {args: string[]}) => x.args.join(' ') === args.join(' '))!.json
    expect(before.products.pro_monthly.tax).toMatchObject({behavior: 'inclusive', rate: 20})
    // DE's own setting outranks the product's exclusive; the product's ebook category gives the operator's 5%.
    expect(before.products.lifetime.tax).toMatchObject({behavior: 'inclusive', rate: 5})
    expect((await run(db, ['tax', 'set', 'DE', '25', '--from', '2026-01-01', '--yes'])).code).toBe(0)
    expect((await run(db, [...args, '--json'])).json.products).toEqual(before.products)
  })

  it('a store newer than this pricectl is refused, not damaged', () => {
    const db = copyFixtureStore(tempDir())
    const d = new Database(db)
    d.pragma(`user_version = ${SCHEMA_VERSION + 1}`)
    d.close()
    const before = dump(db)
    const r = runBin(db, ['products', 'list'], {env: {CI: '1'}})
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^Error: .*newer than this pricectl understands.*upgrade pricectl/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(dump(db)).toEqual(before)
  })
})

/** A writer in its own process: inserts charges w_1, w_2, ... one transaction each, until killed. */
const WRITER = `
const Database = require(require('node:module').createRequire(${JSON.stringify(join(ROOT, 'package.json'))}).resolve('better-sqlite3'))
const db = new Database(process.argv[1])
db.pragma('busy_timeout = 10000')
const ins = db.prepare("INSERT INTO charges (user_id, origin, origin_id, status, currency, amount_minor, latest_event_timestamp, latest_event_id) VALUES ('writer', 'gateway_a', ?, 'succeeded', 'USD', 100, 1, 'w')")
let n = 0
for (;;) {
  ins.run('w_' + (++n))
  if (n % 50 === 0) process.stdout.write(n + '\\n')
}
`

describe('db backup while another process writes', () => {
  it('the copy passes db check, is owner-only, and holds a prefix of the writes', async () => {
    const dir = tempDir()
    const db = copyFixtureStore(dir)
    // Enough pages that the copy takes many backup steps (about 15 MB).
    const d = new Database(db)
    const fill = d.prepare("INSERT INTO charges (user_id, origin, origin_id, status, currency, amount_minor, metadata_json, latest_event_timestamp, latest_event_id) VALUES (?, 'gateway_b', ?, 'succeeded', 'EUR', 4900, ?, 1, 'fill')")
    d.transaction(() => {
      for (let i = 0; i < 60_000; i++) fill.run(`filler_${i % 5000}`, `f_${i}`, JSON.stringify({note: 'x'.repeat(150), i}))
    })()
    d.close()

    const writer = spawn(process.execPath, ['-e', WRITER, db], {stdio: ['ignore', 'pipe', 'pipe']})
    let written = 0
    let errors = ''
    writer.stdout.setEncoding('utf8').on('data', (s: string) => (written = Number(s.trim().split('\n').at(-1))))
    writer.stderr.setEncoding('utf8').on('data', (s: string) => (errors += s))
    try {
      while (written < 100) await new Promise((r) => setTimeout(r, 20))
      const copy = join(dir, 'backup.db')
      const started = Date.now()
      const run = startBin(['db', 'backup', copy, '--json'], {env: {PRICECTL_DB: db}})
      // Before the fix the copy restarted on every commit of the writer and never ended.
      const limit = setTimeout(() => run.child.kill('SIGKILL'), 40_000)
      const backup = await run.done
      clearTimeout(limit)
      const seconds = (Date.now() - started) / 1000
      const during = written
      expect(backup.code, backup.stdout + backup.stderr).toBe(0)
      // The writer kept writing while the copy was made (it was not blocked by it).
      await new Promise((r) => setTimeout(r, 300))
      expect(written).toBeGreaterThan(during)
      expect(seconds).toBeLessThan(30)

      expect(statSync(copy).mode & 0o777).toBe(0o600)
      const check = runBin(copy, ['db', 'check', '--json'])
      expect(check.json).toMatchObject({integrity: 'ok', ok: true})
      const c = new Database(copy, {readonly: true})
      const ids = (c.prepare("SELECT origin_id FROM charges WHERE user_id = 'writer'").all() as {origin_id: string}[]).map((r) => Number(r.origin_id.slice(2))).sort((a, b) => a - b)
      const fillers = (c.prepare("SELECT count(*) AS n FROM charges WHERE latest_event_id = 'fill'").get() as {n: number}).n
      c.close()
      // A consistent snapshot: w_1..w_k with no gap, every row committed before it.
      expect(ids.length).toBeGreaterThan(0)
      expect(ids).toEqual(Array.from({length: ids.length}, (_, i) => i + 1))
      expect(fillers).toBe(60_000)
    } finally {
      writer.kill('SIGKILL')
      await new Promise((r) => writer.once('close', r))
    }
    expect(errors).toBe('')
  }, 90_000)
})
