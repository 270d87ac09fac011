import {join} from 'node:path'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'

import {WORKERS} from '../src/workers.js'
import {cyclePath, cycles, type Import, readSources, sourceFiles, sqlIn} from './helpers/import-graph.js'

/**
 * The layers of docs/architecture.md, checked on the import graph of src/ and commands/:
 * the engine imports no front end, the front ends not each other, runtime imports form no
 * cycle, and SQL lives in src/store/ only.
 */

const ROOT = join(import.meta.dirname, '..')
const sources = readSources(ROOT, sourceFiles(ROOT, ['src', 'commands']))
const files = new Set(sources.map((s) => s.file))

const isCli = (f: string) => f.startsWith('src/cli/')
const isServer = (f: string) => f.startsWith('src/server/')
const isEngine = (f: string) => f.startsWith('src/') && !isCli(f) && !isServer(f)

/** Packages only a front end uses: command parsing, prompts, tables, progress bars, terminals, HTTP. */
const FRONT_END_PACKAGES = [/^@oclif\//, /^@inquirer\//, /^cli-table3$/, /^cli-progress$/, /^string-width$/, /^fastify$/, /^@fastify\//, /^light-my-request$/, /^(node:)?(tty|readline)$/]

const isFrontEnd = (target: string) => isCli(target) || isServer(target) || target.startsWith('commands/') || FRONT_END_PACKAGES.some((p) => p.test(target))

/** Every import of the files matching `from` whose target matches `to`, as "file -> specifier". */
function importsOf(from: (file: string) => boolean, to: (i: Import) => boolean): string[] {
  return sources.filter((s) => from(s.file)).flatMap((s) => s.imports.filter(to).map((i) => `${s.file} -> ${i.specifier}`))
}

/** Edges between repository files; `keep` picks which imports count. */
function graph(keep: (i: Import) => boolean, within: (file: string) => boolean = () => true): Map<string, string[]> {
  return new Map(
    sources
      .filter((s) => within(s.file))
      .map((s) => [s.file, [...new Set(s.imports.filter((i) => keep(i) && files.has(i.target) && within(i.target)).map((i) => i.target))]]),
  )
}

describe('the import graph', () => {
  it('reads the sources it checks (a broken reader would pass every test below)', () => {
    expect(sources.length).toBeGreaterThan(150)
    const price = sources.find((s) => s.file === 'commands/price/index.ts')!
    expect(price.imports.some((i) => i.target === 'src/pricing/price.ts' && !i.typeOnly)).toBe(true)
    expect(price.imports.some((i) => i.target === '@oclif/core')).toBe(true)
    // A type-only import (an `import type`, or names used only as types) is told apart.
    const coupons = sources.find((s) => s.file === 'src/pricing/coupons.ts')!
    expect(coupons.imports.find((i) => i.target === 'src/store/port.ts')?.typeOnly).toBe(true)
  })
})

describe('layers', () => {
  it('no engine file imports front-end code (oclif, prompts, tables, progress, terminals, fastify, src/cli, src/server, commands)', () => {
    const bad = importsOf(isEngine, (i) => isFrontEnd(i.target))
    expect(bad, 'move the importing code to src/cli/ (or src/server/), or the imported code to a neutral module of the engine: see docs/architecture.md').toEqual([])
  })

  it('the server imports nothing from the CLI, and the CLI nothing from the server', () => {
    const bad = [...importsOf(isServer, (i) => isCli(i.target)), ...importsOf(isCli, (i) => isServer(i.target))]
    expect(bad, 'what both front ends need belongs in the engine (as src/error-format.ts and src/input.ts do)').toEqual([])
  })

  it('runtime imports form no cycle in src/ and commands/ (type-only and lazy import() are left out)', () => {
    const edges = graph((i) => !i.typeOnly && !i.dynamic)
    const found = cycles(edges).map((c) => cyclePath(edges, c))
    expect(found, 'break each cycle: move what both sides need into a module both import').toEqual([])
  })

  it('src/pricing has no import cycle, not even through types (the layers see the context through src/pricing/types.ts)', () => {
    const edges = graph(() => true, (f) => f.startsWith('src/pricing/'))
    const found = cycles(edges).map((c) => cyclePath(edges, c))
    expect(found).toEqual([])
  })
})

/**
 * Files outside src/store/ that still hold SQL or import better-sqlite3 while their queries
 * move behind the storage port (src/store/port.ts). The list only shrinks: a new file with
 * SQL fails, and so does a listed file that no longer has any (delete its line).
 */
const KNOWN_SQL_LEFTOVERS: string[] = [
]

/** The database drivers: only the adapters load them. */
const DRIVERS = ['better-sqlite3', 'pg', 'pg-copy-streams']

describe('storage', () => {
  const offenders = new Map(
    sources
      .filter((s) => !s.file.startsWith('src/store/'))
      .map((s) => [s.file, [...sqlIn(s.file, s.text), ...s.imports.filter((i) => DRIVERS.includes(i.target)).map((i) => `imports ${i.specifier}`)]] as const)
      .filter(([, found]) => found.length > 0),
  )

  it('recognises SQL in a source (a blind detector would pass the tests below)', () => {
    expect(sqlIn('x.ts', "db.prepare('SELECT id FROM products WHERE api_id = ?')")).toHaveLength(2)
    expect(sqlIn('x.ts', 'const q = `INSERT OR REPLACE INTO fx_rates (currency) VALUES (${n})`')).toHaveLength(1)
    expect(sqlIn('x.ts', "db.exec('BEGIN IMMEDIATE')")).toHaveLength(1)
    expect(sqlIn('x.ts', "store.pragma('cache_size = -65536')")).toHaveLength(1)
    expect(sqlIn('x.ts', "const summary = 'Delete a coupon; select the rows to update from a file'")).toEqual([])
    expect(sqlIn('x.ts', 'ctx.coupons.prepare(request)')).toEqual([])
  })

  it('no file outside src/store/ holds SQL or imports a database driver (better-sqlite3, pg, pg-copy-streams), but for the known leftovers', () => {
    const fresh = [...offenders].filter(([file]) => !KNOWN_SQL_LEFTOVERS.includes(file)).map(([file, found]) => `${file}: ${found.slice(0, 3).join(' | ')}`)
    expect(fresh, 'SQL belongs in a store adapter (src/store/sqlite/) behind the storage port; see docs/architecture.md').toEqual([])
  })

  it('the known leftovers only shrink: a listed file without SQL any more is removed from KNOWN_SQL_LEFTOVERS', () => {
    const stale = KNOWN_SQL_LEFTOVERS.filter((file) => !offenders.has(file))
    expect(stale, 'delete these lines from KNOWN_SQL_LEFTOVERS in test/architecture.test.ts').toEqual([])
    expect(KNOWN_SQL_LEFTOVERS).toEqual([...new Set(KNOWN_SQL_LEFTOVERS)].sort())
  })
})

/**
 * The modules that open a store, the only ones outside the adapters (src/store/sqlite/,
 * src/store/postgres/) that import them: openStore (src/store/db.ts) and the import
 * workers' read-only store (src/store/reader.ts). Everything else holds a StorePort.
 */
const STORE_OPENERS = ['src/store/db.ts', 'src/store/reader.ts']

/** What reaches past the port for a database handle: the removed bridges, and a statement prepared on a store's handle. */
const HANDLE_USES = [/\bsqliteHandle\b/, /\bstoreOfHandle\b/, /\.db\.prepare\b/]

describe('the storage port holds the handle', () => {
  it('recognises a reach for the handle (a blind detector would pass the tests below)', () => {
    expect(HANDLE_USES.some((p) => p.test('const rows = this.store.db.prepare(sql).all()'))).toBe(true)
    expect(HANDLE_USES.some((p) => p.test('PricingContext.open(storeOfHandle(db))'))).toBe(true)
    expect(HANDLE_USES.some((p) => p.test('store.catalog.storeContents()'))).toBe(false)
    expect(sources.find((s) => s.file === 'src/store/db.ts')!.imports.some((i) => i.target.startsWith('src/store/sqlite/'))).toBe(true)
  })

  it('no file outside src/store/ references sqliteHandle, storeOfHandle or .db.prepare', () => {
    const bad = sources.filter((s) => !s.file.startsWith('src/store/')).flatMap((s) => HANDLE_USES.filter((p) => p.test(s.text)).map((p) => `${s.file}: ${p.source}`))
    expect(bad, 'hold the StorePort and call a repository method (add one to src/store/port/<part>.ts and its adapter in src/store/sqlite/)').toEqual([])
  })

  it(`only the store openers (${STORE_OPENERS.join(', ')}) import src/store/sqlite/ from outside it`, () => {
    const bad = importsOf((f) => !f.startsWith('src/store/sqlite/') && !STORE_OPENERS.includes(f), (i) => i.target.startsWith('src/store/sqlite/'))
    expect(bad, 'the engine holds a StorePort (src/store/port.ts), never the SQLite adapter; see docs/architecture.md').toEqual([])
  })

  /** The openers, and the maintenance commands' dispatch (db info, db check: src/store/maintenance.ts). */
  const PG_IMPORTERS = [...STORE_OPENERS, 'src/store/maintenance.ts']

  it(`only ${PG_IMPORTERS.join(', ')} import src/store/postgres/ from outside it`, () => {
    const bad = importsOf((f) => !f.startsWith('src/store/postgres/') && !PG_IMPORTERS.includes(f), (i) => i.target.startsWith('src/store/postgres/'))
    expect(bad, 'the engine holds a StorePort (src/store/port.ts), never the PostgreSQL adapter; see docs/architecture.md').toEqual([])
  })

  it('the adapters do not import each other, and only the PostgreSQL adapter names pg or pg-copy-streams', () => {
    const across = [
      ...importsOf((f) => f.startsWith('src/store/postgres/'), (i) => i.target.startsWith('src/store/sqlite/') || i.target === 'better-sqlite3'),
      ...importsOf((f) => f.startsWith('src/store/sqlite/'), (i) => i.target.startsWith('src/store/postgres/')),
    ]
    expect(across, 'what both adapters need belongs in src/store/ beside the port').toEqual([])
    const drivers = sources
      .filter((s) => !s.file.startsWith('src/store/postgres/') && /(require(\.resolve)?\(|from\s+|import\s*\()\s*['"](pg|pg-copy-streams)['"]/.test(s.text))
      .map((s) => s.file)
    expect(drivers, 'the PostgreSQL driver is loaded by src/store/postgres/ only').toEqual([])
  })

  it('the PostgreSQL adapter runs in the calling thread: no worker thread, no Atomics, no code in strings', () => {
    const blocking = sources.filter((s) => s.file.startsWith('src/store/postgres/') && /\bAtomics\.|node:worker_threads|\bnew Worker\(|eval:\s*true/.test(s.text)).map((s) => s.file)
    expect(blocking, 'the adapter awaits pg (docs/postgres.md, "The connection")').toEqual([])
  })
})

/** The plain types the engine and the port exchange: type declarations only (docs/architecture.md, "Domain types"). */
const DOMAIN = 'src/domain.ts'
const isPort = (f: string) => f === 'src/store/port.ts' || f.startsWith('src/store/port/')

/**
 * What a file outside src/store/ may import from it: the port and its errors, opening a store
 * (src/store/db.ts; src/store/reader.ts, a worker thread's read-only store), telling a busy
 * store's error from a failure (src/store/busy.ts) and a full disk's folder (src/store/disk-full.ts),
 * what a --db names (src/store/url.ts), and the safe writing of files beside the store
 * (src/store/output-file.ts). The db commands (commands/db/) run the store's own
 * operations too: backup, copy, restore, info and check.
 */
const STORE_ENTRY_POINTS = ['src/store/db.ts', 'src/store/url.ts', 'src/store/reader.ts', 'src/store/busy.ts', 'src/store/disk-full.ts', 'src/store/output-file.ts']
const STORE_OPERATIONS = ['src/store/copy.ts', 'src/store/maintenance.ts', 'src/store/restore.ts']

function storeEntryAllowed(file: string, target: string): boolean {
  if (isPort(target) || STORE_ENTRY_POINTS.includes(target)) return true
  return file.startsWith('commands/db/') && STORE_OPERATIONS.includes(target)
}

/** Code that asks which adapter holds a store: a read of `store.kind`, or a comparison of a `.kind` with an adapter's name. */
const KIND_READ = /\bstore\??\.kind\b/
const KIND_TEST = /\.kind\s*[!=]==?\s*['"](sqlite|postgres)['"]|['"](sqlite|postgres)['"]\s*[!=]==?\s*[\w.?]*\.kind\b/

/** What compiling `text` leaves to run: empty for a module of type declarations only. */
function compiled(file: string, text: string): string {
  const js = ts.transpileModule(text, {compilerOptions: {module: ts.ModuleKind.ESNext, removeComments: true, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false}, fileName: file}).outputText
  return js.replace(/^export \{\};?$/m, '').trim()
}

describe('domain types apart from the store', () => {
  it('recognises runtime code, reads of the adapter and store imports (a blind detector would pass the tests below)', () => {
    expect(compiled('x.ts', 'export type A = {b: number}\nexport interface C { d: string }')).toBe('')
    expect(compiled('x.ts', "import type {A} from './a.js'\nexport type B = A")).toBe('')
    expect(compiled('x.ts', 'export const A = 1')).not.toBe('')
    expect(KIND_READ.test("const sqlite = store.kind === 'sqlite'")).toBe(true)
    expect(KIND_READ.test('checkpoints ??= store?.kind')).toBe(true)
    expect(KIND_TEST.test("const result = this.store.kind === 'postgres'")).toBe(true)
    expect(KIND_TEST.test("if ('sqlite' !== opened.kind) return")).toBe(true)
    expect(KIND_TEST.test("input.kind === 'charges' ? chargeRow : subscriptionRow")).toBe(false)
    expect(storeEntryAllowed('src/pricing/context.ts', 'src/store/settings.ts')).toBe(false)
    expect(storeEntryAllowed('src/pricing/context.ts', 'src/store/port/pricing.ts')).toBe(true)
    expect(storeEntryAllowed('commands/db/backup.ts', 'src/store/copy.ts')).toBe(true)
  })

  it(`${DOMAIN} holds type declarations only and imports nothing`, () => {
    const domain = sources.find((s) => s.file === DOMAIN)!
    expect(domain, `${DOMAIN} is the domain module (docs/architecture.md)`).toBeDefined()
    expect(domain.imports.map((i) => i.specifier), 'the domain types depend on nothing: declare what they need in the module').toEqual([])
    expect(compiled(domain.file, domain.text), 'only types: put code that works on them in the engine or an adapter').toBe('')
  })

  it('the port imports the domain types, its own parts and the errors only, and nothing at run time but its errors', () => {
    const bad = sources
      .filter((s) => isPort(s.file))
      .flatMap((s) =>
        s.imports
          .filter((i) => {
            const errors = (s.file === 'src/store/port/errors.ts' && i.target === 'src/errors.ts') || i.target === 'src/store/port/errors.ts'
            if (errors) return false
            if (!i.typeOnly || i.dynamic) return true
            return i.target !== DOMAIN && !isPort(i.target)
          })
          .map((i) => `${s.file} -> ${i.specifier}${i.typeOnly ? ' (type)' : ''}`),
      )
    expect(bad, `the port describes data: take the types from ${DOMAIN}, and let the adapters (src/store/rows.ts) or the engine hold the code`).toEqual([])
  })

  it('no import cycle runs through the port or the domain types, not even through type imports', () => {
    const edges = graph(() => true)
    const found = cycles(edges)
      .filter((c) => c.some((f) => isPort(f) || f === DOMAIN))
      .map((c) => cyclePath(edges, c))
    expect(found, `a type the port needs from the engine belongs in ${DOMAIN}`).toEqual([])
  })

  it('outside src/store/ only the port and the entry points are imported from it (opening a store, its errors, output files; the db commands its operations)', () => {
    const bad = importsOf((f) => !f.startsWith('src/store/'), (i) => i.target.startsWith('src/store/')).filter((line) => {
      const [file, specifier] = line.split(' -> ')
      const target = sources.find((s) => s.file === file)!.imports.find((i) => i.specifier === specifier)!.target
      return !storeEntryAllowed(file, target)
    })
    expect(bad, 'the engine holds a StorePort: add a repository method (src/store/port/<part>.ts), or move the pure part into the engine; see docs/architecture.md').toEqual([])
  })

  it('src/store/reader.ts gives the engine openReaderStore only (what else a worker thread needs of the store is a port method)', () => {
    const names = sources
      .filter((s) => !s.file.startsWith('src/store/'))
      .flatMap((s) => [...s.text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'[./]*\/store\/reader\.js'/g)].flatMap((m) => m[1].split(',').map((n) => `${s.file}: ${n.trim()}`)))
    expect(names.length, 'the import worker opens its store through src/store/reader.ts').toBeGreaterThan(0)
    expect(names.filter((n) => !n.endsWith(': openReaderStore')), 'fill stages and run checkpoints through ImportsRepository (src/store/port/imports.ts)').toEqual([])
  })

  it('no code outside src/store/ asks which adapter holds a store (store.kind; the CLI may print it)', () => {
    const bad = sources
      .filter((s) => !s.file.startsWith('src/store/'))
      .flatMap((s) => {
        const reads = isCli(s.file) || s.file.startsWith('commands/') ? [] : [...s.text.matchAll(new RegExp(KIND_READ, 'g'))].map((m) => m[0])
        return [...reads, ...[...s.text.matchAll(new RegExp(KIND_TEST, 'g'))].map((m) => m[0])].map((m) => `${s.file}: ${m}`)
      })
    expect(bad, 'offer the difference as a port capability (an optional method, as PricingRepository.commitVersion or ImportsRepository.checkpoints) or dispatch inside src/store/').toEqual([])
  })
})

/** What a source does wrong in starting a worker thread: code evaluated from a string, or a file not given by workerUrl. */
function workerOffences(text: string): string[] {
  const found = [...text.matchAll(/\beval\s*:\s*true\b/g)].map((m) => m[0])
  for (const m of text.matchAll(/\bnew Worker\(\s*([^,)]*)/g)) if (!m[1].startsWith('workerUrl(')) found.push(m[0])
  return found
}

// Worker code is modules of src/ the type checker, the tests and the mutation runs see (docs/architecture.md).
describe('workers', () => {
  it('recognises a worker started from a string or located by hand (a blind detector would pass the tests below)', () => {
    expect(workerOffences("new Worker(SOURCE, {eval: true, execArgv: []})")).toHaveLength(2)
    expect(workerOffences("new Worker(new URL('reader-worker.js', import.meta.url))")).toHaveLength(1)
    expect(workerOffences("new Worker(workerUrl('store/sqlite/checkpointer-worker'), {execArgv: []})")).toEqual([])
  })

  it('every worker thread of src/ runs a module located by src/workers.ts, none evaluates a string', () => {
    const bad = sources.flatMap((s) => workerOffences(s.text).map((o) => `${s.file}: ${o}`))
    expect(bad, 'put the worker code in a module of src/, add it to WORKERS in src/workers.ts and start it with workerUrl(NAME)').toEqual([])
    expect(sources.filter((s) => /\bnew Worker\(/.test(s.text)).length).toBeGreaterThanOrEqual(WORKERS.length)
  })

  it('each of WORKERS (src/workers.ts) is a module of src/', () => {
    expect(WORKERS.filter((name) => !files.has(`src/${name}.ts`))).toEqual([])
  })
})

/**
 * The files a module loads with itself: runtime static imports followed, each with the chain
 * that reached it first (type-only imports are erased, `import()` loads on call).
 */
function loadedWith(entry: string): Map<string, string[]> {
  const bySource = new Map(sources.map((s) => [s.file, s]))
  const reached = new Map<string, string[]>([[entry, [entry]]])
  const queue = [entry]
  while (queue.length > 0) {
    const file = queue.shift()!
    for (const i of bySource.get(file)?.imports ?? []) {
      if (i.typeOnly || i.dynamic || reached.has(i.target)) continue
      reached.set(i.target, [...reached.get(file)!, i.target])
      if (bySource.has(i.target)) queue.push(i.target)
    }
  }
  return reached
}

// docs/performance.md "Cold start": zod and the schemas are about a sixth of a cold `price`, which validates by hand.
describe('a cold price', () => {
  it('follows imports through the sources (a blind walk would pass the test below)', () => {
    const loaded = loadedWith('commands/price/index.ts')
    expect(loaded.get('src/pricing/price.ts')).toBeDefined()
    expect(loaded.get('src/schemas/on-first-use.ts')).toBeDefined()
    expect(loaded.has('src/schemas/price.ts')).toBe(false)
    expect(loadedWith('commands/price/explain.ts').get('zod')).toEqual(['commands/price/explain.ts', 'zod'])
  })

  it('loads no zod with the price command: schema constants come from src/schemas/no-zod.ts, the price schemas on first use (src/schemas/on-first-use.ts)', () => {
    const chain = loadedWith('commands/price/index.ts').get('zod')
    expect(chain?.join(' -> '), 'take what the price path needs from a module without zod (src/schemas/no-zod.ts, src/catalog/coupon-reads.ts, ...) or load it on first use').toBeUndefined()
  })
})
