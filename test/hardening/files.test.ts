import Database from 'better-sqlite3'
import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {chmodSync, chownSync, copyFileSync, existsSync, linkSync, lstatSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {APPLICATION_ID} from '../../src/store/identify.js'
import {SCHEMA_VERSION} from '../../src/store/migrations.js'
import {dump, fileDigest} from '../helpers/dump.js'
import {ROOT, run, type Run} from '../helpers/run.js'
import {BIN, copyFixtureStore, expectCleanFailure, fixtureExpected, type Invocation, paymentsCsv, RUN_MANY, runMany, tempDir, write} from './helpers.js'

/** The fixture store of the current schema: stores on read-only media are not migrated. */
const CURRENT = `v${SCHEMA_VERSION}.db`

/**
 * Files around the store (issue 13, items 1, 4, 10, 11): output paths never hit the store
 * or an input and are written whole; only an empty file or a pricectl store is opened; a
 * store on read-only media can be read; a backup that fails leaves nothing behind.
 *
 * The read-only and full-disk cases need real file systems: the commands run in a user and
 * mount namespace of their own (`unshare -Urm`) with a read-only bind mount of the folder or
 * a tiny tmpfs, which goes away with them; a test's many commands run in one namespace and
 * one process (readOnlyMany). Tests run as root here, and root ignores file modes, so chmod
 * cannot make a store read-only; a read-only mount stops root too.
 */

const dirs: string[] = []
function folder(prefix = 'pricectl-store-files-'): string {
  const d = tempDir(prefix)
  dirs.push(d)
  return d
}
/**
 * Let another user reach `dir`: the test run keeps its temp folders owner-only (and a
 * checkout may sit in one, as a fresh clone in a mktemp folder does), so each ancestor
 * that others cannot enter gets the search bit (nothing becomes listable).
 */
function reachableByOthers(dir: string): void {
  for (let d = dirname(dir); d !== dirname(d); d = dirname(d)) {
    const mode = statSync(d).mode & 0o777
    if ((mode & 0o001) === 0) chmodSync(d, mode | 0o011)
  }
}
afterAll(() => {
  for (const d of dirs) rmSync(d, {force: true, recursive: true})
})

function sha(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

/** The application_id in an SQLite file's header (bytes 68-71). */
function applicationId(path: string): number {
  return readFileSync(path).readUInt32BE(68)
}

/** A payments export with one good and one bad row (the bad one goes to the rejects CSV). */
function payments(dir: string, name = 'payments.csv'): string {
  return write(dir, name, paymentsCsv(2, {bad: [1], prefix: 'files_'}))
}

/** The folder's entries, names only. */
function entries(dir: string): string[] {
  return readdirSync(dir).sort()
}

/**
 * The read-only and full-disk tests need `unshare -Urm` (user namespaces). They run unless
 * PRICECTL_SKIP_MOUNT_TESTS=1 says the machine cannot; they never skip silently.
 */
const skipMounts = process.env.PRICECTL_SKIP_MOUNT_TESTS === '1'
const canUnshare = spawnSync('unshare', ['-Urm', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"'], {encoding: 'utf8'}).status === 0
const mountsOr = (name: string) => (canUnshare ? name : `${name} (FAILS: unshare -Urm with mounts is not available; set PRICECTL_SKIP_MOUNT_TESTS=1 to skip)`)

/** Run a shell script in a fresh user and mount namespace; "$NODE" and "$BIN" run pricectl. */
function inNamespace(script: string, env: Record<string, string> = {}): {code: null | number; stderr: string; stdout: string} {
  const r = spawnSync('unshare', ['-Urm', 'sh', '-c', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {...process.env, BIN, CI: '1', DEBUG: '', NODE: process.execPath, NODE_ENV: '', ...env},
  })
  return {code: r.status, stderr: r.stderr, stdout: r.stdout}
}

function asRun(r: {code: null | number; stderr: string; stdout: string}): Run {
  let json: unknown
  try {
    json = JSON.parse(r.stdout)
  } catch {
    json = undefined
  }
  return {code: r.code ?? -1, json, stderr: r.stderr, stdout: r.stdout}
}

/** pricectl with the folder of the store mounted read-only (for this one command). */
function readOnly(dir: string, db: string, args: string[], env: Record<string, string> = {}): Run {
  const script = 'mount --bind "$DIR" "$DIR" && mount -o remount,bind,ro "$DIR" || exit 99; exec "$NODE" "$BIN" "$@"'
  const r = spawnSync('unshare', ['-Urm', 'sh', '-c', script, 'sh', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {...process.env, BIN, CI: '1', DEBUG: '', DIR: dir, NODE: process.execPath, NODE_ENV: '', PRICECTL_DB: db, ...env},
  })
  expect(r.status, `mount failed: ${r.stderr}`).not.toBe(99)
  return asRun({code: r.status, stderr: r.stderr, stdout: r.stdout})
}

/**
 * pricectl with the folder of the store (or each of `dirs`) mounted read-only: `commands` in
 * one namespace and one process (runMany), each with PRICECTL_DB=db and `env` as readOnly
 * runs one.
 */
function readOnlyMany(dirs: string[], db: string, commands: Invocation[], env: Record<string, string> = {}): Run[] {
  // The folders are the first arguments, after their count; then RUN_MANY's.
  const script = 'n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99; shift; n=$((n - 1)); done; exec "$NODE" "$@"'
  return runMany(commands, (args, stdio) =>
    spawnSync('unshare', ['-Urm', 'sh', '-c', script, 'sh', String(dirs.length), ...dirs, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {...process.env, BIN, CI: '1', DEBUG: '', NODE: process.execPath, NODE_ENV: '', PRICECTL_DB: db, ...env},
      stdio,
    }),
  )
}

/** `commands` as `user` (spawnSync's uid and gid; none: as this user) from /, in one process (runMany). */
function asUserMany(user: {gid?: number; uid?: number}, commands: Invocation[]): Run[] {
  if (user.uid) reachableByOthers(RUN_MANY)
  return runMany(commands, (args, stdio) => spawnSync(process.execPath, args, {cwd: '/', encoding: 'utf8', env: {...process.env, CI: '1', DEBUG: '', HOME: tmpdir()}, stdio, ...user}))
}

// ------------------------------------------------------------------ item 1: output paths

describe('an output path is never the store, its -wal/-shm/-journal, or an input of the command', () => {
  it('charges import --rejects STORE (and its -wal, -shm, -journal, a symlink or a hard link to it): exit 2, store untouched', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const file = payments(dir)
    await run(db, ['db', 'check']) // marks the fixture store and checkpoints it
    const before = dump(db)
    const digest = fileDigest(db)
    symlinkSync(db, join(dir, 'link.db'))
    linkSync(db, join(dir, 'hard.db'))
    for (const [target, what] of [
      [db, 'the store'],
      [`${db}-wal`, "the store's -wal file"],
      [`${db}-shm`, "the store's -shm file"],
      [`${db}-journal`, "the store's -journal file"],
      [join(dir, 'link.db'), 'the store'],
      [join(dir, 'hard.db'), 'the store'],
    ]) {
      for (const json of [false, true]) {
        const r = await run(db, ['charges', 'import', file, '--rejects', target, ...(json ? ['--json'] : [])])
        expectCleanFailure(r, json, `--rejects ${target}`)
        expect(r.code, target).toBe(2)
        expect(json ? r.json.message : r.stderr).toContain(`--rejects: ${target} is ${what}; pass another path`)
      }
    }
    // Nothing was imported (the good row neither) and the store file is byte for byte the same.
    expect(dump(db)).toEqual(before)
    expect(fileDigest(db)).toBe(digest)
    expect((await run(db, ['db', 'check', '--json'])).json).toMatchObject({ok: true})
    expect(existsSync(`${db}-journal`)).toBe(false)
  })

  it('charges import --rejects INPUT or --rejects MAPPING: exit 2, the input untouched', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const file = payments(dir)
    const mapping = write(dir, 'mapping.json', JSON.stringify({columns: {}}))
    const before = dump(db)
    const inputs = [sha(file), sha(mapping)]
    const same = await run(db, ['charges', 'import', file, '--rejects', file])
    expect(same.code).toBe(2)
    expect(same.stderr).toContain(`--rejects: ${file} is the file to import; pass another path`)
    const viaLink = join(dir, 'input-link.csv')
    symlinkSync(file, viaLink)
    expect((await run(db, ['charges', 'import', file, '--rejects', viaLink])).code).toBe(2)
    const map = await run(db, ['subscriptions', 'import', file, '--mapping', mapping, '--rejects', mapping])
    expect(map.code).toBe(2)
    expect(map.stderr).toContain(`--rejects: ${mapping} is the --mapping file; pass another path`)
    expect([sha(file), sha(mapping)]).toEqual(inputs)
    expect(dump(db)).toEqual(before)
  })

  it('products export STORE --force and db backup STORE --force: exit 2, store untouched', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    await run(db, ['db', 'check'])
    const digest = fileDigest(db)
    linkSync(db, join(dir, 'hard.db'))
    for (const args of [
      ['products', 'export', db, '--force'],
      ['products', 'export', join(dir, 'hard.db'), '--force', '--output', 'csv'],
      ['products', 'export', `${db}-wal`, '--force'],
      ['db', 'backup', db, '--force'],
      ['db', 'backup', join(dir, 'hard.db'), '--force'],
      ['db', 'backup', `${db}-shm`, '--force'],
    ]) {
      const r = await run(db, [...args, '--json'])
      expectCleanFailure(r, true, args.join(' '))
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.message, args.join(' ')).toMatch(/ is the store('s -wal file|'s -shm file)?; pass another path$/)
    }
    expect(fileDigest(db)).toBe(digest)
    expect((await run(db, ['db', 'check', '--json'])).json).toMatchObject({ok: true})
  })

  it('an existing file needs --force; a rejects CSV of an earlier import is replaced without it', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const file = payments(dir)
    const mine = write(dir, 'notes.csv', 'my own notes\n')
    const before = dump(db)
    const refused = await run(db, ['charges', 'import', file, '--rejects', mine, '--json'])
    expect(refused.code).toBe(2)
    expect(refused.json.message).toBe(`${mine} exists: it is not a rejects CSV of an earlier import; pass --force to overwrite it, or --rejects PATH`)
    expect(readFileSync(mine, 'utf8')).toBe('my own notes\n')
    // Refused before any row: the good row was not imported either.
    expect(dump(db)).toEqual(before)
    // The default FILE.rejects.csv, when it is not a rejects CSV, needs --force too.
    write(dir, 'payments.csv.rejects.csv', 'keep me\n')
    expect((await run(db, ['charges', 'import', file])).code).toBe(2)
    expect(readFileSync(join(dir, 'payments.csv.rejects.csv'), 'utf8')).toBe('keep me\n')

    const forced = await run(db, ['charges', 'import', file, '--rejects', mine, '--force', '--json'])
    expect(forced.code).toBe(1) // one row rejected
    expect(forced.json).toMatchObject({inserted: 1, rejected: 1, rejects_file: mine})
    expect(readFileSync(mine, 'utf8')).toMatch(/^line,reason,/)
    // A re-run replaces its own rejects CSV without --force.
    expect((await run(db, ['charges', 'import', file, '--rejects', mine, '--json'])).json).toMatchObject({rejected: 1, unchanged: 1})

    const out = write(dir, 'products.json', 'old export\n')
    const r = await run(db, ['products', 'export', out, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe(`${out} exists: pass --force to overwrite it`)
    expect(readFileSync(out, 'utf8')).toBe('old export\n')
  })

  it('outputs are written to a temporary file and renamed into place (a hard link to the old file keeps the old content)', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const file = payments(dir)
    // Rejects CSV: an earlier run's file, hard-linked elsewhere.
    const rejects = join(dir, 'rejects.csv')
    write(dir, 'rejects.csv', 'line,reason,old\n2,old reason,x\n')
    linkSync(rejects, join(dir, 'rejects-old.csv'))
    await run(db, ['charges', 'import', file, '--rejects', rejects])
    expect(readFileSync(join(dir, 'rejects-old.csv'), 'utf8')).toBe('line,reason,old\n2,old reason,x\n')
    expect(readFileSync(rejects, 'utf8')).toMatch(/^line,reason,id,/)
    // products export and db backup over a file with another name linked to it.
    for (const [name, args] of [
      ['export.json', ['products', 'export']],
      ['backup.db', ['db', 'backup']],
    ] as const) {
      const out = write(dir, name, 'old\n')
      linkSync(out, join(dir, `${name}.old`))
      const r = await run(db, [...args, out, '--force'])
      expect(r.code, r.stderr).toBe(0)
      expect(readFileSync(join(dir, `${name}.old`), 'utf8')).toBe('old\n')
      expect(readFileSync(out, 'utf8')).not.toBe('old\n')
    }
    // A symlink as the output: the file it points to is replaced, the link stays.
    const target = write(dir, 'real.json', 'old\n')
    symlinkSync(target, join(dir, 'link.json'))
    expect((await run(db, ['products', 'export', join(dir, 'link.json'), '--force'])).code).toBe(0)
    expect(lstatSync(join(dir, 'link.json')).isSymbolicLink()).toBe(true)
    expect(JSON.parse(readFileSync(target, 'utf8')).products).toHaveLength(4) // the fixture's four products
    // No temporary file is left.
    expect(entries(dir).filter((n) => n.endsWith('.tmp'))).toEqual([])
  })

  it('a missing folder or a folder as the output path: exit 2, nothing written', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const file = payments(dir)
    const before = dump(db)
    for (const [args, message] of [
      [['products', 'export', join(dir, 'nowhere', 'p.json')], `FILE: folder ${join(dir, 'nowhere')} does not exist (create it, or pass another path)`],
      [['db', 'backup', join(dir, 'nowhere', 'b.db')], `backup: folder ${join(dir, 'nowhere')} does not exist (create it, or pass another path)`],
      [['products', 'export', dir, '--force'], `FILE: ${dir} is a folder; give the path of a file`],
      [['charges', 'import', file, '--rejects', dir, '--force'], `--rejects: ${dir} is a folder; give the path of a file`],
    ] as const) {
      const r = await run(db, [...args, '--json'])
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.json.message).toBe(message)
    }
    expect(dump(db)).toEqual(before)
    expect(entries(dir)).toEqual(['payments.csv', 'store.db'])
  })

  it('a temporary file a killed pricectl left beside an output is removed by the next write there', async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    // The pid of a process that has exited.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {encoding: 'utf8'}).stdout
    const out = join(dir, 'export.json')
    write(dir, `export.json.${gone}.tmp`, '{"half": ')
    write(dir, `backup.db.${gone}.tmp`, 'half')
    write(dir, `backup.db.${gone}.tmp-journal`, 'half')
    expect((await run(db, ['products', 'export', out])).code).toBe(0)
    expect((await run(db, ['db', 'backup', join(dir, 'backup.db')])).code).toBe(0)
    expect(entries(dir).filter((n) => n.includes('.tmp'))).toEqual([])
  })
})

// ------------------------------------------------------------------ item 4: only pricectl stores

describe('only an empty file or a pricectl store is opened', () => {
  /** Another application's database: WAL mode, its own tables and user_version. */
  function foreignDb(dir: string, name: string, setup: (db: Database.Database) => void): string {
    const path = join(dir, name)
    const db = new Database(path)
    db.pragma('journal_mode = WAL')
    setup(db)
    db.close()
    return path
  }

  it('another application\'s SQLite file, a text file, a folder: exit 1, byte for byte untouched, no -wal/-shm/-journal', async () => {
    const dir = folder()
    const files = [
      foreignDb(dir, 'notes.db', (db) => {
        db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES (\'hello\')')
        db.pragma('user_version = 3')
      }),
      foreignDb(dir, 'fresh-app.db', (db) => db.exec('CREATE TABLE t (x)')), // user_version 0, one table
      foreignDb(dir, 'geo.gpkg', (db) => {
        db.pragma('application_id = 1196444487') // GeoPackage
        db.exec('CREATE TABLE gpkg_contents (table_name TEXT)')
      }),
      // Tables of the same names as pricectl's but another application's mark.
      foreignDb(dir, 'lookalike.db', (db) => {
        db.exec('CREATE TABLE products (id); CREATE TABLE settings (key)')
        db.pragma('user_version = 1')
      }),
      write(dir, 'readme.txt', 'hello, not a database\n'),
      write(dir, 'short.db', 'SQLite format 3\0'),
    ]
    for (const path of files) {
      const digest = sha(path)
      for (const args of [['db', 'info'], ['db', 'migrate'], ['db', 'check'], ['products', 'list'], ['products', 'create', '--api-id', 'x', '--name', 'X', '--base-px', '1', '--interval', 'month', '--interval-count', '1']]) {
        const r = await run(path, [...args, '--json'])
        const context = `${args.join(' ')} --db ${path}`
        expectCleanFailure(r, true, context)
        expect(r.code, context).toBe(1)
        expect(r.json.message, context).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')} is not a pricectl store \\(.+\\); it was left untouched`))
        expect(sha(path), context).toBe(digest)
        for (const suffix of ['-wal', '-shm', '-journal']) expect(existsSync(path + suffix), context + suffix).toBe(false)
      }
    }
    const r = await run(dir, ['db', 'info'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('is not a pricectl store (it is a folder)')
    // The same from a separate process (the build a user runs).
    const digest = sha(files[0])
    const bin = spawnSync(process.execPath, [BIN, 'db', 'info', '--db', files[0]], {encoding: 'utf8'})
    expect(bin.status).toBe(1)
    expect(sha(files[0])).toBe(digest)
    expect(existsSync(`${files[0]}-wal`)).toBe(false)
  })

  it('a new store carries pricectl\'s application_id; an empty file and an empty SQLite database become stores', async () => {
    const dir = folder()
    const fresh = join(dir, 'new.db')
    expect((await run(fresh, ['db', 'init'])).code).toBe(0)
    expect(applicationId(fresh)).toBe(APPLICATION_ID)
    const empty = write(dir, 'empty.db', '')
    expect((await run(empty, ['db', 'info', '--json'])).json).toMatchObject({schema_version: expect.any(Number), success: true})
    expect(applicationId(empty)).toBe(APPLICATION_ID)
    const emptySqlite = join(dir, 'empty-sqlite.db')
    const d = new Database(emptySqlite)
    d.exec('CREATE TABLE t (x); DROP TABLE t')
    d.close()
    expect((await run(emptySqlite, ['db', 'check'])).code).toBe(0)
    expect(applicationId(emptySqlite)).toBe(APPLICATION_ID)
  })

  it('a store of the released schema without the mark (fixtures/stores/v1.db) is recognised and marked, its rows unchanged', {timeout: 120_000}, async () => {
    const dir = folder()
    const db = copyFixtureStore(dir, 'v1.db')
    expect(applicationId(db)).toBe(0)
    const before = dump(db)
    const info = await run(db, ['db', 'info', '--json'])
    expect(info.code, info.stderr).toBe(0)
    expect(info.json).toMatchObject({read_only: null, schema_version: 1})
    expect(applicationId(db)).toBe(APPLICATION_ID)
    expect(dump(db)).toEqual(before)
    // One whose schema grew after 19 MB of rows (a schema page past the first 16 MiB, which
    // are read first): the whole file is read to find the tables.
    const big = copyFixtureStore(folder(), 'v1.db')
    const d = new Database(big)
    const fill = d.prepare("INSERT INTO charges (user_id, origin, origin_id, status, currency, amount_minor, metadata_json, latest_event_timestamp, latest_event_id) VALUES (?, 'gateway_b', ?, 'succeeded', 'EUR', 4900, ?, 1, 'fill')")
    d.transaction(() => {
      for (let i = 0; i < 70_000; i++) fill.run(`u${i % 5000}`, `f${i}`, 'x'.repeat(150))
    })()
    d.exec(`CREATE TABLE operator_notes (id INTEGER PRIMARY KEY, ${Array.from({length: 200}, (_, i) => `note_column_with_a_long_name_${i} TEXT`).join(', ')})`)
    const schemaPage = (d.prepare("SELECT max(pageno) AS p FROM dbstat WHERE name = 'sqlite_schema'").get() as {p: number}).p
    const pageSize = d.pragma('page_size', {simple: true}) as number
    d.close()
    expect(schemaPage * pageSize).toBeGreaterThan(16 * 1024 * 1024)
    expect(applicationId(big)).toBe(0)
    const bigInfo = await run(big, ['db', 'info', '--json'])
    expect(bigInfo.code, bigInfo.stderr).toBe(0)
    expect(bigInfo.json.counts.charges).toBe(70_002)
    expect(applicationId(big)).toBe(APPLICATION_ID)
    // A backup is a marked store too.
    const copy = join(dir, 'copy.db')
    expect((await run(db, ['db', 'backup', copy])).code).toBe(0)
    expect(applicationId(copy)).toBe(APPLICATION_ID)
  })
})

// ------------------------------------------------------------------ item 10: read-only stores

describe.skipIf(skipMounts)(mountsOr('a store on a read-only file system'), () => {
  const expected = fixtureExpected(`v${SCHEMA_VERSION}`)
  const env = {PRICECTL_NOW: expected.now}

  it('every read command works and prints what it prints on a writable store; nothing is written', {timeout: 240_000}, () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT) // read where it lies: nothing is written, not even the mark
    const digest = sha(db)
    const backup = join(folder(), 'backup.db')
    const more = [['db', 'check'], ['price', 'explain', '-u', 'alice', '-p', 'pro_monthly'], ['fx', 'list'], ['revenue', 'report', '--by', 'product', '--output', 'csv']]
    // All in one process in one read-only namespace (readOnlyMany), in this order: the reads
    // with --json, the others, the backup (without PRICECTL_NOW), then `db check` of the backup.
    const results = readOnlyMany([dir], db, [
      ...expected.reads.map(({args}) => ({args: [...args, '--json'], env})),
      ...more.map((args) => ({args, env})),
      {args: ['db', 'backup', backup]},
      {args: ['db', 'check', '--json', '--db', backup]},
    ])
    for (const [i, {args, json}] of expected.reads.entries()) {
      const r = results[i]
      expect(r.code, `${args.join(' ')}: ${r.stdout} ${r.stderr}`).toBe(0)
      if (args[0] === 'db' && args[1] === 'info') {
        expect(r.json).toMatchObject({counts: json.counts, journal_mode: 'wal', read_only: 'it is on a read-only file system', schema_version: json.schema_version})
      } else {
        expect(r.json, args.join(' ')).toMatchObject(json)
      }
    }
    for (const [i, args] of more.entries()) {
      const r = results[expected.reads.length + i]
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0)
    }
    const [backedUp, checked] = results.slice(-2)
    expect(backedUp.code).toBe(0)
    expect(sha(db)).toBe(digest)
    expect(entries(dir)).toEqual(['store.db'])
    // The backup is a complete store.
    expect(checked.json).toMatchObject({ok: true})
  })

  it('a write command says the store is read-only (exit 1), not "run pricectl db check"', {timeout: 180_000}, () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const input = payments(folder())
    const digest = sha(db)
    const writes = [
      ['products', 'create', '--api-id', 'x', '--name', 'X', '--base-px', '1', '--interval', 'month', '--interval-count', '1'],
      ['price', '-u', 'new_user', '-p', 'pro_monthly'],
      ['fx', 'set', 'EUR', '0.9'],
      ['charges', 'import', input],
      ['db', 'migrate'],
    ].flatMap((args) => [false, true].map((json) => ({args, json})))
    // All in one process in one read-only namespace (readOnlyMany), in this order.
    const results = readOnlyMany([dir], db, writes.map(({args, json}) => ({args: [...args, ...(json ? ['--json'] : [])], env})))
    for (const [i, {args, json}] of writes.entries()) {
      const r = results[i]
      const context = args.join(' ')
      if (args[1] === 'migrate') {
        // Nothing to migrate: it reports so without writing.
        expect(r.code, `${context}: ${r.stderr}`).toBe(0)
        continue
      }
      expectCleanFailure(r, json, context)
      expect(r.code, context).toBe(1)
      const message = json ? r.json.message : r.stderr
      expect(message, context).toContain(`the store ${db} is read-only (it is on a read-only file system) and this command changes it`)
      expect(message, context).toContain('pass --db COPY')
      expect(message, context).not.toContain('run "pricectl db check"')
    }
    expect(sha(db)).toBe(digest)
    expect(entries(dir)).toEqual(['store.db'])
  })

  it('a read-only store that is not there cannot be created: said plainly', () => {
    const dir = folder()
    const r = readOnly(dir, join(dir, 'new.db'), ['db', 'init'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^Error: cannot create the store at .*new\.db: EROFS: read-only file system/)
    expect(entries(dir)).toEqual([])
  })

  it('a read-only store whose -wal holds changes is read with its -shm file; without one it is refused, saying why', () => {
    // A snapshot taken while a writer had the store open: changes still in the -wal.
    const src = copyFixtureStore(folder(), CURRENT)
    const writer = new Database(src)
    writer.pragma('wal_autocheckpoint = 0')
    const inFile = writer.prepare('SELECT count(*) FROM charges').pluck().get() as number
    writer.prepare("INSERT INTO charges (user_id, origin, origin_id, status, currency, amount_minor, latest_event_timestamp, latest_event_id) VALUES ('walrus', 'gateway_a', 'in_wal', 'succeeded', 'USD', 100, 1, 'w')").run()
    const both = folder()
    const walOnly = folder()
    for (const suffix of ['', '-wal', '-shm']) copyFileSync(src + suffix, join(both, 'store.db' + suffix))
    for (const suffix of ['', '-wal']) copyFileSync(src + suffix, join(walOnly, 'store.db' + suffix))
    writer.close()
    // Both folders read-only, both commands in one process (readOnlyMany).
    const [r, refused] = readOnlyMany([both, walOnly], join(both, 'store.db'), [{args: ['db', 'info', '--json']}, {args: ['products', 'list'], env: {PRICECTL_DB: join(walOnly, 'store.db')}}])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.counts.charges).toBe(inFile + 1) // those in the file, one in the -wal
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(`Error: cannot read the store at ${join(walOnly, 'store.db')}: it is read-only and its -wal file holds changes SQLite can only read with a -shm file it cannot create; open it once where it is writable\n`)
    expect(entries(walOnly)).toEqual(['store.db', 'store.db-wal'])
  })

  it('price --input on a read-only store prices locked users and says why the others fail', () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const input = write(folder(), 'requests.jsonl', '{"user_id": "alice", "products": ["pro_monthly"]}\n{"user_id": "zed", "products": ["pro_monthly"]}\n')
    const r = readOnly(dir, db, ['price', '--input', input], env)
    expect(r.code).toBe(1)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines[0]).toMatchObject({user_id: 'alice'})
    expect(lines[1]).toEqual({line: 2, message: 'the store is read-only: only requests whose quote is already locked can be priced', success: false})
  })
})

describe('a store this user may not write (file modes)', () => {
  it('is read (db info says why it is read-only) and a write says the store is read-only; nothing appears beside it', () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    chmodSync(db, 0o644)
    chmodSync(dir, 0o755)
    const digest = sha(db)
    // Root writes whatever the modes say: run as nobody then (readable, not writable).
    const asUser = process.getuid?.() === 0 ? {gid: 65_534, uid: 65_534} : {}
    if (asUser.uid) for (const d of [dir, BIN]) reachableByOthers(d)
    if (!asUser.uid) {
      chmodSync(db, 0o444)
      chmodSync(dir, 0o555)
    }
    try {
      // The three in one process, in this order (asUserMany).
      const [info, list, write] = asUserMany(asUser, [['db', 'info', '--json'], ['products', 'list', '--json'], ['fx', 'set', 'EUR', '0.9', '--json']].map((args) => ({args: [...args, '--db', db]})))
      expect(info.code, info.stderr).toBe(0)
      expect(info.json).toMatchObject({read_only: 'the file is not writable by this user', schema_version: SCHEMA_VERSION})
      expect(list.json.products).toHaveLength(4)
      expect(write.code).toBe(1)
      expect(write.json.message).toContain(`the store ${db} is read-only (the file is not writable by this user) and this command changes it`)
      expect(sha(db)).toBe(digest)
      expect(entries(dir)).toEqual(['store.db'])
    } finally {
      chmodSync(dir, 0o700)
    }
  })

  it('a writable store in a folder this user may not write (no -wal or -shm can be made) is read, and a write says why', () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    chmodSync(dir, 0o555)
    const root = process.getuid?.() === 0
    // As root: the store belongs to nobody, the folder to root (0555).
    if (root) chownSync(db, 65_534, 65_534)
    const asUser = root ? {gid: 65_534, uid: 65_534} : {}
    if (root) for (const d of [dir, BIN]) reachableByOthers(d)
    try {
      const reason = `its folder ${dir} (where SQLite keeps the -wal and -shm files) is not writable by this user`
      // The three in one process, in this order (asUserMany).
      const [info, get, write] = asUserMany(asUser, [['db', 'info', '--json'], ['products', 'get', 'pro_monthly', '--json'], ['coupons', 'delete', 'SAVE5', '--yes', '--json']].map((args) => ({args: [...args, '--db', db]})))
      expect(info.json).toMatchObject({read_only: reason})
      expect(get.code).toBe(0)
      expect(write.code).toBe(1)
      expect(write.json.message).toContain(`is read-only (${reason})`)
      expect(entries(dir)).toEqual(['store.db'])
    } finally {
      chmodSync(dir, 0o700)
    }
  })
})

// ------------------------------------------------------------------ item 11: backup onto a full disk

describe.skipIf(skipMounts)(mountsOr('db backup onto a full disk'), () => {
  /** A store bigger than SQLite's page cache (16 MB), so the copy spills pages and journals them. */
  function bigStore(): string {
    const db = copyFixtureStore(folder(), CURRENT)
    const d = new Database(db)
    const fill = d.prepare("INSERT INTO charges (user_id, origin, origin_id, status, currency, amount_minor, metadata_json, latest_event_timestamp, latest_event_id) VALUES (?, 'gateway_b', ?, 'succeeded', 'EUR', 4900, ?, 1, 'fill')")
    d.transaction(() => {
      for (let i = 0; i < 90_000; i++) fill.run(`filler_${i % 5000}`, `f_${i}`, 'x'.repeat(150))
    })()
    d.close()
    return db
  }

  /** The big store (bigStore), made once: the backups only read it. */
  let big: string
  beforeAll(() => {
    big = bigStore()
  })

  type Onto = {existing?: string; fill?: boolean; force?: boolean; size: string}

  /**
   * For each case: mount a tmpfs of `size` on a new folder, optionally put `existing` in as
   * FILE and fill the rest of the disk, then back up `db` onto each FILE, every backup in one
   * namespace and one process (runMany), and list what each folder holds afterwards.
   */
  function backupsOnto(db: string, cases: Onto[]) {
    const env: Record<string, string> = {}
    const setup: string[] = []
    const after: string[] = []
    const lists = cases.map((_, i) => join(folder('pricectl-full-list-'), `list-${i}`))
    const outs = cases.map((c, i) => {
      const out = folder('pricectl-full-')
      Object.assign(env, {[`EXISTING${i}`]: c.existing ?? '', [`LIST${i}`]: lists[i], [`OUT${i}`]: out, [`SIZE${i}`]: c.size})
      setup.push(
        `mount -t tmpfs -o size=$SIZE${i} tmpfs "$OUT${i}" || exit 99`,
        c.existing ? `cp "$EXISTING${i}" "$OUT${i}/backup.db"` : ':',
        // Fill the rest of the disk.
        c.fill ? `dd if=/dev/zero of="$OUT${i}/filler" bs=4096 2>/dev/null; :` : ':',
      )
      // What is left, written beside (not on) the full disk: the runner's stdout is its own.
      after.push(`(cd "$OUT${i}" && ls -A && ${c.existing ? 'echo "__SHA=$(sha256sum backup.db | cut -c1-64)"' : ':'}) > "$LIST${i}"`)
      return out
    })
    const script = [...setup, '"$NODE" "$@" || exit $?', ...after].join('\n')
    const results = runMany(
      cases.map((c, i) => ({args: ['db', 'backup', join(outs[i], 'backup.db'), '--json', ...(c.force ? ['--force'] : [])], env: {PRICECTL_DB: db}})),
      (args, stdio) => spawnSync('unshare', ['-Urm', 'sh', '-c', script, 'sh', ...args], {cwd: ROOT, encoding: 'utf8', env: {...process.env, BIN, CI: '1', DEBUG: '', NODE: process.execPath, NODE_ENV: '', ...env}, stdio}),
    )
    return results.map((r, i) => {
      const listed = readFileSync(lists[i], 'utf8').trim().split('\n').filter((l) => l !== '')
      const shaLine = listed.find((l) => l.startsWith('__SHA='))
      return {code: r.code, files: listed.filter((l) => !l.startsWith('__SHA=')).sort(), json: r.json, sha: shaLine?.slice(6), stderr: r.stderr}
    })
  }

  it('exits 1 and leaves nothing behind: no FILE, no FILE-journal, no temporary file', () => {
    const sizes = ['1m', '8m']
    const results = backupsOnto(big, [...sizes.map((size) => ({size})), {fill: true, size: '1m'}])
    const full = results.pop()!
    for (const [i, r] of results.entries()) {
      expect(r.code, r.stderr).toBe(1)
      expect(r.json).toEqual({message: expect.stringMatching(/^backup to .*backup\.db failed: the disk is full .*; nothing was written$/), success: false})
      expect(r.files, sizes[i]).toEqual([])
    }
    expect(full.code).toBe(1)
    expect(full.files).toEqual(['filler'])
  })

  it('--force onto an existing backup: the old backup stays as it was, with no -journal, -wal or -shm beside it', () => {
    const old = copyFixtureStore(folder(), CURRENT)
    const oldSha = sha(old)
    const fills = [false, true]
    for (const [i, r] of backupsOnto(big, fills.map((fill) => ({existing: old, fill, force: true, size: '2m'}))).entries()) {
      const fill = fills[i]
      expect(r.code, r.stderr).toBe(1)
      expect(r.files).toEqual(fill ? ['backup.db', 'filler'] : ['backup.db'])
      expect(r.sha).toBe(oldSha)
    }
  })

  it('an import whose rejects CSV cannot be written (full disk) exits 1; the old rejects CSV stays, no temporary file', () => {
    const dir = folder()
    const db = copyFixtureStore(dir, CURRENT)
    const input = write(dir, 'payments.csv', paymentsCsv(3000, {bad: Array.from({length: 1500}, (_, i) => i * 2)}))
    const old = write(folder(), 'old.csv', 'line,reason,id\n2,old,x\n')
    const out = folder('pricectl-full-')
    const script = [
      'mount -t tmpfs -o size=64k tmpfs "$OUT" || exit 99',
      'cp "$OLD" "$OUT/rejects.csv"',
      'dd if=/dev/zero of="$OUT/filler" bs=4096 2>/dev/null; :',
      '"$NODE" "$BIN" charges import "$INPUT" --rejects "$OUT/rejects.csv" --db "$DB"',
      'echo "__EXIT=$?"',
      'cd "$OUT" && ls -A && cat rejects.csv',
    ].join('\n')
    const r = inNamespace(script, {DB: db, INPUT: input, OLD: old, OUT: out})
    expect(r.code, r.stderr).not.toBe(99)
    expect(r.stderr).toMatch(/Error: cannot write .*rejects\.csv: ENOSPC/)
    expect(r.stdout.split('__EXIT=')[1].trim().split('\n')).toEqual(['1', 'filler', 'rejects.csv', 'line,reason,id', '2,old,x'])
  })

  it('a full disk under the store: the error names the store\'s folder, not db check', () => {
    const out = folder('pricectl-full-')
    const input = write(folder(), 'payments.csv', paymentsCsv(20_000))
    const script = [
      'mount -t tmpfs -o size=400k tmpfs "$OUT" || exit 99',
      'cp "$FIXTURE" "$OUT/store.db"',
      'exec "$NODE" "$BIN" charges import "$INPUT" --batch-size 5000 --db "$OUT/store.db" --json',
    ].join('\n')
    const r = asRun(inNamespace(script, {FIXTURE: join(ROOT, 'fixtures', 'stores', CURRENT), INPUT: input, OUT: out}))
    expect(r.code, r.stderr).toBe(1)
    // The store's folder is the full one (its disk has under 64 MB free; the temp folder is another disk with room).
    expect(r.json.message).toBe(`store error SQLITE_FULL: database or disk is full (the store's folder (${out}) is full; free space there)`)
  })

  it('a full temp folder (TMPDIR) under an import: the error names it, not the store\'s disk (#32.21)', () => {
    const temp = folder('pricectl-tmpdir-full-')
    const db = copyFixtureStore(folder(), CURRENT)
    const input = write(folder(), 'payments.csv', paymentsCsv(20_000))
    const script = [
      'mount -t tmpfs -o size=400k tmpfs "$TEMP" || exit 99',
      'TMPDIR="$TEMP" exec "$NODE" "$BIN" charges import "$INPUT" --batch-size 5000 --db "$DB" --json',
    ].join('\n')
    const r = asRun(inNamespace(script, {DB: db, INPUT: input, TEMP: temp}))
    expect(r.code, r.stderr).toBe(1)
    expect(r.json.message).toMatch(/database or disk is full|ENOSPC/)
    expect(r.json.message).toContain(`the temp folder TMPDIR (${temp}) is full; free space there or point TMPDIR elsewhere`)
  })

  it('products export --force onto a full disk keeps the old file and leaves no temporary file', () => {
    const db = copyFixtureStore(folder(), CURRENT)
    const old = write(folder(), 'old.json', '{"products": []}\n')
    const out = folder('pricectl-full-')
    const script = [
      'mount -t tmpfs -o size=64k tmpfs "$OUT" || exit 99',
      'cp "$OLD" "$OUT/products.json"',
      'dd if=/dev/zero of="$OUT/filler" bs=4096 2>/dev/null; :',
      '"$NODE" "$BIN" products export "$OUT/products.json" --force --db "$DB"',
      'echo "__EXIT=$?"',
      'cd "$OUT" && ls -A && cat products.json',
    ].join('\n')
    const r = inNamespace(script, {DB: db, OLD: old, OUT: out})
    expect(r.code, r.stderr).not.toBe(99)
    expect(r.stderr).toMatch(/^Error: cannot write .*products\.json: ENOSPC/)
    expect(r.stdout.split('__EXIT=')[1].trim().split('\n')).toEqual(['1', 'filler', 'products.json', '{"products": []}'])
  })
})
