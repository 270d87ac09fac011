import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it, vi} from 'vitest'

import {countryCurrency, isCountry} from '../../src/currency.js'
import {osUser} from '../../src/history/context.js'
import {buildServer} from '../../src/server/app.js'
import {dump} from '../helpers/dump.js'
import {run, seededStore, tempStore} from '../helpers/run.js'

/**
 * Change history (issue 15, item 3): every write to the catalog and the configuration is
 * recorded with who, when, which command and each row before and after; `history` lists
 * it, `history show` shows a change, `revert` restores the earlier state as a new change.
 */

/** 203 countries, each priced in its own currency where it has one with two decimals, else EUR. */
function countryPrices(): {amount: number; country: string; currency: string}[] {
  const codes: string[] = []
  for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) {
    const c = String.fromCharCode(a, b)
    if (isCountry(c)) codes.push(c)
  }
  const chosen = codes.slice(0, 203)
  expect(chosen).toHaveLength(203)
  return chosen.map((country, i) => ({amount: 10 + (i % 50) + 0.99, country, currency: ['USD', 'EUR'].includes(countryCurrency(country) ?? '') ? countryCurrency(country)! : 'EUR'}))
}

/** The product created through the real command, once per worker (and PRICECTL_NOW, which the history records), copied after that. */
async function starterWith203(db: string): Promise<{prices: unknown}> {
  await seededStore(db, `history:starter203:${process.env.PRICECTL_NOW}`, async (store) => {
    const body = {api_id: 'starter_monthly', base_px: 9.99, country_prices: countryPrices(), interval: 'month', interval_count: 1, name: 'Starter Monthly'}
    const file = join(dirname(store), 'starter.json')
    writeFileSync(file, JSON.stringify(body))
    const created = await run(store, ['products', 'create', '--body', file, '--json'])
    expect(created.code, created.stdout + created.stderr).toBe(0)
  })
  const got = await run(db, ['products', 'get', 'starter_monthly', '--json'])
  expect(got.json.country_prices).toHaveLength(203)
  return {prices: got.json.country_prices}
}

async function latest(db: string): Promise<any> {
  const r = await run(db, ['history', '--limit', '1', '--json'])
  expect(r.code, r.stderr).toBe(0)
  return r.json.changes[0]
}

describe('history and revert', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it("the issue's example: an update replacing 203 country prices is recorded, and revert brings the 203 back", async () => {
    const db = tempStore()
    // A pinned clock: the update lands a minute after the create, so it moves the product's
    // updated_at too (one products row besides the 203 country prices), on any machine load.
    vi.stubEnv('PRICECTL_NOW', '2026-11-01T10:00:00Z')
    const {prices} = await starterWith203(db)

    vi.stubEnv('PRICECTL_NOW', '2026-11-01T10:01:00Z')
    // Dropping the other 202 country prices needs --yes without a terminal.
    const updated = await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--yes'])
    expect(updated.code, updated.stderr).toBe(0)
    expect((await run(db, ['products', 'get', 'starter_monthly', '--json'])).json.country_prices).toHaveLength(1)

    const change = await latest(db)
    expect(change).toMatchObject({
      actor: osUser(),
      command: 'pricectl products update starter_monthly --country-price DE=9.99:EUR --yes',
      reverted_by: null,
      reverts: null,
      summary: null,
    })
    expect(change.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/)
    const cp = change.rows.filter((r: any) => r.table === 'country_prices')
    expect(cp).toEqual(expect.arrayContaining([{action: 'deleted', count: 203, table: 'country_prices'}, {action: 'inserted', count: 1, table: 'country_prices'}]))

    const shown = await run(db, ['history', 'show', String(change.id), '--json'])
    expect(shown.code).toBe(0)
    const deleted = shown.json.rows.filter((r: any) => r.table === 'country_prices' && r.action === 'deleted')
    expect(deleted).toHaveLength(203)
    expect(deleted[0].before).toMatchObject({country: expect.any(String), currency: expect.any(String), amount_minor: expect.any(Number)})
    expect(deleted[0].after).toBeNull()
    const text = await run(db, ['history', 'show', String(change.id)])
    expect(text.stdout).toContain(`change ${change.id} at ${change.at} by ${osUser()}: pricectl products update starter_monthly`)
    expect(text.stdout).toMatch(/^- country_prices \(1, AD\): /m)
    expect(text.stdout).toMatch(/^\+ country_prices \(1, DE\): .*"amount_minor":999/m)

    // A dry run says what it would restore and writes nothing.
    const before = dump(db)
    const dry = await run(db, ['revert', String(change.id), '--dry-run', '--json'])
    expect(dry.code, dry.stderr).toBe(0)
    // The 203 country prices and the product row (the update moved its updated_at).
    const distinct = new Set(shown.json.rows.map((r: any) => `${r.table} ${JSON.stringify(r.key)}`)).size
    expect(distinct).toBe(204)
    expect(dry.json).toMatchObject({change: null, dry_run: true, restored: distinct, reverted: {id: change.id}, success: true})
    // With its price impact: DE goes back from 9.99 EUR, the other countries' prices come back.
    expect(dry.json.impact.changes.find((c: any) => c.product === 'starter_monthly' && c.country === 'DE')).toMatchObject({after: {currency: 'EUR'}, before: {currency: 'EUR', display: expect.stringContaining('9,99')}, change: 'changed'})
    expect(dry.json.impact.summary).toMatch(/prices? change/)
    expect(dump(db)).toEqual(before)

    // Bringing 202 country prices back moves them beyond --max-change-pct: --yes without a terminal.
    const reverted = await run(db, ['revert', String(change.id), '--yes'])
    expect(reverted.code, reverted.stderr).toBe(0)
    expect(reverted.stderr).toContain('price impact: ')
    expect(reverted.stdout).toMatch(new RegExp(`^reverted change ${change.id} as change ${change.id + 1} \\(country_prices: 1 deleted, 203 inserted; products: 1 updated\\)`))
    expect((await run(db, ['products', 'get', 'starter_monthly', '--json'])).json.country_prices).toEqual(prices)

    const after = await run(db, ['history', '--json'])
    expect(after.json.changes.map((c: any) => [c.id, c.reverts, c.reverted_by])).toEqual([
      [change.id + 1, change.id, null],
      [change.id, null, change.id + 1],
      [change.id - 1, null, null],
    ])
    expect(after.json.changes[0]).toMatchObject({command: `pricectl revert ${change.id} --yes`, summary: `revert of change ${change.id}`})
    expect((await run(db, ['db', 'check', '--json'])).json).toMatchObject({foreign_key_violations: 0, integrity: 'ok', ok: true})

    // Reverting twice is refused; reverting the revert brings the update back.
    const twice = await run(db, ['revert', String(change.id)])
    expect(twice.code).toBe(1)
    expect(twice.stderr).toMatch(`change ${change.id} was already reverted by change ${change.id + 1}: to bring change ${change.id} back, run "pricectl revert ${change.id + 1}"`)
    expect((await run(db, ['revert', String(change.id + 1), '--yes'])).code).toBe(0)
    expect((await run(db, ['products', 'get', 'starter_monthly', '--json'])).json.country_prices).toEqual([{country: 'DE', currency: 'EUR', local_price: 9.99}])
  })

  it('refuses (exit 1, nothing written) when a later change wrote the same rows, unless --force', async () => {
    const db = tempStore()
    // A pinned clock: both updates land a minute after the create and in the same second, so
    // only the first moves the product's updated_at (the second writes the DE country price
    // alone), on any machine load.
    vi.stubEnv('PRICECTL_NOW', '2026-11-01T10:00:00Z')
    await starterWith203(db)
    vi.stubEnv('PRICECTL_NOW', '2026-11-01T10:01:00Z')
    expect((await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=9.99:EUR', '--yes'])).code).toBe(0)
    const first = await latest(db)
    expect((await run(db, ['products', 'update', 'starter_monthly', '--country-price', 'DE=8.99:EUR', '--yes'])).code).toBe(0)
    const second = await latest(db)

    const before = dump(db)
    const refused = await run(db, ['revert', String(first.id), '--json'])
    expect(refused.code).toBe(1)
    expect(refused.json).toMatchObject({later_changes: [second.id], success: false})
    expect(refused.json.message).toContain(`cannot revert change ${first.id}: later change ${second.id} wrote the same rows (country_prices (1, DE))`)
    expect(refused.json.message).toContain(`revert ${second.id} first, or pass --force`)
    expect(dump(db)).toEqual(before)

    const forced = await run(db, ['revert', String(first.id), '--force', '--yes'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(forced.stderr).toContain('warning: --force overwrites 1 row written after change')
    expect((await run(db, ['products', 'get', 'starter_monthly', '--json'])).json.country_prices).toHaveLength(203)
  })

  it('revert of a delete brings the product back with its rows and ids; of a create removes it', async () => {
    const db = tempStore()
    await starterWith203(db)
    const created = await latest(db)
    const before = dump(db)
    expect((await run(db, ['products', 'delete', 'starter_monthly', '--yes'])).code).toBe(0)
    const deleted = await latest(db)
    expect(deleted.rows).toEqual(expect.arrayContaining([{action: 'deleted', count: 1, table: 'products'}, {action: 'deleted', count: 203, table: 'country_prices'}]))
    expect((await run(db, ['revert', String(deleted.id)])).code).toBe(0)
    const back = dump(db)
    for (const t of ['products', 'country_prices', 'product_integrations']) expect(back.tables[t], t).toEqual(before.tables[t])

    // The create was followed by the delete and its revert: refused without --force.
    expect((await run(db, ['revert', String(created.id)])).code).toBe(1)
    // Reverting the create removes the product's prices: --yes without a terminal.
    expect((await run(db, ['revert', String(created.id), '--force', '--yes'])).code).toBe(0)
    expect((await run(db, ['products', 'list', '--json'])).json.products).toEqual([])
    expect((await run(db, ['db', 'check', '--json'])).json).toMatchObject({ok: true})
  })

  it('lists with filters: --table, --product, --actor, --since, --limit; bad filters exit 2, an unknown product 1', async () => {
    const db = tempStore()
    await starterWith203(db)
    expect((await run(db, ['rounding', 'set', 'EUR', '0+: end .99 nearest'])).code).toBe(0)
    expect((await run(db, ['localization', 'set', 'IN', '0.35', '--source', 'test'])).code).toBe(0)
    expect((await run(db, ['coupons', 'create', '--api-id', 'TEN', '--name', 'Ten', '--type', 'percentage', '--value', '10'])).code).toBe(0)

    const all = (await run(db, ['history', '--json'])).json.changes
    expect(all.map((c: any) => c.command.split(' ').slice(1, 3).join(' '))).toEqual(['coupons create', 'localization set', 'rounding set', 'products create'])
    const ids = (args: string[]) => run(db, ['history', ...args, '--json']).then((r) => (r.code === 0 ? r.json.changes.map((c: any) => c.id) : r))
    expect(await ids(['--table', 'rounding_rules'])).toEqual([all[2].id])
    expect(await ids(['--product', 'starter_monthly'])).toEqual([all[3].id])
    expect(await ids(['--actor', osUser()])).toEqual(all.map((c: any) => c.id))
    expect(await ids(['--actor', 'nobody'])).toEqual([])
    expect(await ids(['--limit', '2'])).toEqual([all[0].id, all[1].id])
    expect(await ids(['--since', '2000-01-01'])).toHaveLength(4)
    expect(await ids(['--since', '2200-01-01'])).toEqual([])

    const table = await run(db, ['history'])
    expect(table.stdout).toContain('pricectl rounding set EUR')
    expect(table.stdout).toContain('rounding_rules: 1 inserted')

    const badTable = await run(db, ['history', '--table', 'locks'])
    expect(badTable.code).toBe(2)
    expect(badTable.stderr).toContain('--table: "locks" is not a recorded table (recorded: settings, products')
    expect((await run(db, ['history', '--since', 'yesterday-ish'])).code).toBe(2)
    expect((await run(db, ['history', '--limit', '0'])).code).toBe(2)
    const unknown = await run(db, ['history', '--product', 'nope'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no product with api_id "nope"')
    const missing = await run(db, ['history', 'show', '999'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('no change 999 in the history (list them with: pricectl history)')
    expect((await run(db, ['revert', '999'])).code).toBe(1)
  })

  it('records nothing for reads, rejected input, no-op updates, prices (locks and users) and revenue', async () => {
    const db = tempStore()
    await starterWith203(db)
    const count = async () => (await run(db, ['history', '--json'])).json.changes.length
    expect(await count()).toBe(1)
    await run(db, ['products', 'list'])
    await run(db, ['history'])
    expect((await run(db, ['products', 'update', 'starter_monthly', '--base-px', '-1'])).code).toBe(2)
    expect((await run(db, ['products', 'update', 'starter_monthly', '--name', 'Starter Monthly'])).code).toBe(0)
    expect((await run(db, ['price', '-u', 'alice', '-p', 'starter_monthly', '--country', 'DE'])).code).toBe(0)
    const sub = ['subscriptions', 'create', '--user-id', 'alice', '--origin', 'gateway_a', '--origin-id', 's1', '--product', 'starter_monthly', '--amount', '9.99', '--currency', 'USD', '--created', '1772323200', '--status', 'active']
    expect((await run(db, sub)).code).toBe(0)
    expect(await count()).toBe(1)
  })

  it('API keys: recorded without their hash; revert refuses them', async () => {
    const db = tempStore()
    const k = await run(db, ['keys', 'create', '--name', 'ci', '--json'])
    const change = await latest(db)
    expect(change.command).toBe('pricectl keys create --name ci --json')
    const shown = (await run(db, ['history', 'show', String(change.id), '--json'])).json
    expect(shown.rows).toHaveLength(1)
    expect(Object.keys(shown.rows[0].after).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at'])
    expect(JSON.stringify(shown)).not.toContain(k.json.api_key)
    const r = await run(db, ['revert', String(change.id)])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('which revert does not restore (a revoked API key stays revoked)')
  })

  it('the server attributes a write to the API key that made it', async () => {
    const db = tempStore()
    const key = (await run(db, ['keys', 'create', '--name', 'checkout-bot', '--json'])).json.api_key
    const app = buildServer({accessLog: false, db})
    try {
      const r = await app.inject({
        body: {api_id: 'srv', base_px: 5, interval: 'month', interval_count: 1, name: 'Server product'},
        headers: {authorization: `Bearer ${key}`},
        method: 'POST',
        url: '/v1/products',
      })
      expect(r.statusCode, r.body).toBe(200)
    } finally {
      await app.close()
    }
    const change = await latest(db)
    expect(change).toMatchObject({actor: 'key:checkout-bot', command: 'POST /v1/products', rows: [{action: 'inserted', count: 1, table: 'products'}]})
  })
})
