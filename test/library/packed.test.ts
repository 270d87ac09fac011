import {spawnSync, type SpawnSyncReturns} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/run.js'

/**
 * The package as a user gets it: `npm pack`, the tarball installed into a temp project
 * (offline: its dependencies come from a copy of this checkout's production dependencies),
 * both examples of docs/library.md run with node, and a consumer file type-checked with tsc.
 */

let project: string
let installed: string

const EXPORTS = join(ROOT, 'fixtures', 'imports')

function sh(command: string, args: string[], options: {cwd?: string; env?: NodeJS.ProcessEnv} = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, {cwd: options.cwd ?? project, encoding: 'utf8', env: {...process.env, NO_COLOR: '1', PRICECTL_DB: '', ...options.env}, timeout: 60_000})
}

function ok(r: SpawnSyncReturns<string>): string {
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stdout}\n${r.stderr}`)
  return r.stdout
}

/** The fenced examples of docs/library.md whose first line names a file ("// NAME.mjs: ..."). */
function docExamples(): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8').matchAll(/```js\n(\/\/ ([\w.-]+\.mjs)[^\n]*\n[\s\S]*?)```/g)) out.set(m[2]!, m[1]!)
  return out
}

/**
 * What of `modules` (this checkout's node_modules) the packed package needs: the top-level
 * folders (`name` or `@scope/name`) that package-lock.json marks neither dev nor devOptional,
 * and their command links in .bin (without those npm reinstalls the package, from a registry).
 */
function productionEntries(modules: string): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {packages: Record<string, {dev?: boolean; devOptional?: boolean}>}
  const folders = new Set<string>()
  for (const [path, entry] of Object.entries(lock.packages)) {
    const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
    if (m && !entry.dev && !entry.devOptional && existsSync(join(modules, m[1]!))) folders.add(m[1]!)
  }
  const bin = join(modules, '.bin')
  const links = (existsSync(bin) ? readdirSync(bin) : []).filter((name) => {
    const target = /^\.\.\/((?:@[^/]+\/)?[^/]+)\//.exec(readlinkSync(join(bin, name)))
    return target !== null && folders.has(target[1]!)
  })
  return [...folders, ...links.map((name) => join('.bin', name))].sort()
}

beforeAll(() => {
  expect(existsSync(join(ROOT, 'dist', 'src', 'index.d.ts')), 'dist/src/index.d.ts is missing: run npm run build').toBe(true)
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-packed-'))
  const pack = JSON.parse(ok(sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {cwd: ROOT}))) as {filename: string}[]
  const tarball = join(dir, pack[0]!.filename)

  project = join(dir, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({name: 'consumer', private: true, type: 'module'}))
  // Dependencies without a network: the production dependencies of this checkout
  // (productionEntries: ~94 MB of the ~340 MB; `npm ls --omit=dev` is no help in a worktree
  // whose node_modules is a link, where it calls every dev dependency extraneous),
  // hard-linked when the temp folder is on the same device, else copied (a tmpfs). npm's own
  // index of the folder is not among them: npm rewrites that file in place, and a hard link
  // would carry the install's change into this checkout's (or another checkout's) copy.
  const modules = realpathSync(join(ROOT, 'node_modules'))
  const lock = join(modules, '.package-lock.json')
  const lockBefore = existsSync(lock) ? statSync(lock).mtimeMs : undefined
  const entries = productionEntries(modules)
  expect(entries).toContain('better-sqlite3')
  const link = statSync(modules).dev === statSync(dir).dev ? ['-l'] : []
  mkdirSync(join(project, 'node_modules'))
  ok(sh('cp', ['-a', ...link, '--parents', ...entries, join(project, 'node_modules')], {cwd: modules}))
  ok(sh('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', join(dir, 'npm-cache'), tarball]))
  expect(existsSync(lock) ? statSync(lock).mtimeMs : undefined).toBe(lockBefore)
  installed = join(project, 'node_modules', 'pricectl')
  for (const [name, code] of docExamples()) writeFileSync(join(project, name), code)
}, 120_000)

describe('the packed package', () => {
  it('ships the entry, its declarations and nothing of better-sqlite3 or oclif in its types', () => {
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {exports: Record<string, unknown>; types: string}
    expect(pkg.exports['.']).toEqual({import: './dist/src/index.js', types: './dist/src/index.d.ts'})
    const declarations = (readdirSync(join(installed, 'dist'), {recursive: true}) as string[]).filter((f) => f.endsWith('.d.ts'))
    expect(declarations).toContain(join('src', 'index.d.ts'))
    for (const f of declarations) expect(readFileSync(join(installed, 'dist', f), 'utf8'), f).not.toMatch(/better-sqlite3|@oclif|cli-table3|@inquirer|fastify/)
  })

  it('runs the CI price gate of docs/library.md: snapshot, pass, fail on a moved price', () => {
    expect([...docExamples().keys()]).toEqual(['ci-prices.mjs', 'backfill.mjs'])
    ok(sh(join(project, 'node_modules', '.bin', 'pricectl'), ['demo', '--db', 'store.db', '--json']))
    const first = ok(sh('node', ['ci-prices.mjs', 'store.db', 'prices.json']))
    expect(first).toMatch(/^wrote 18 prices to prices\.json: commit it/)
    const passed = sh('node', ['ci-prices.mjs', 'store.db', 'prices.json'])
    expect(passed.stdout).toMatch(/^price gate passed: 18 prices match prices\.json/)
    expect(passed.status).toBe(0)

    const snapshot = JSON.parse(readFileSync(join(project, 'prices.json'), 'utf8')) as {rows: {country: string; price: number; product: string}[]}
    const row = snapshot.rows.find((r) => r.product === 'pro_monthly' && r.country === 'DE')!
    row.price += 1
    writeFileSync(join(project, 'prices.json'), JSON.stringify(snapshot))
    const failed = sh('node', ['ci-prices.mjs', 'store.db', 'prices.json'])
    expect(failed.status).toBe(1)
    expect(failed.stderr).toMatch(/^pro_monthly in DE: .* \(changed\)\nprice gate failed: 1 of 18 prices differ/)
    ok(sh('node', ['ci-prices.mjs', 'store.db', 'prices.json', '--update']))
    expect(sh('node', ['ci-prices.mjs', 'store.db', 'prices.json']).status).toBe(0)

    // A bad snapshot exits 2 with the engine's message, like the CLI.
    writeFileSync(join(project, 'broken.json'), '{not json')
    const broken = sh('node', ['ci-prices.mjs', 'store.db', 'broken.json'])
    expect(broken.status).toBe(2)
    expect(broken.stderr).toMatch(/broken\.json: not valid JSON/)
  })

  it('runs the backfill of docs/library.md over a folder of exports; a rerun changes nothing', () => {
    const folder = join(project, 'exports')
    mkdirSync(folder)
    // Payments and subscriptions of the demo catalog, and a payments export with a bad row.
    const [payHeader, ...payRows] = readFileSync(join(EXPORTS, 'payments-new.csv'), 'utf8').trim().split('\n')
    const [subHeader, ...subRows] = readFileSync(join(EXPORTS, 'subscriptions-gateway-a.csv'), 'utf8').trim().split('\n')
    writeFileSync(join(folder, '2026-01-payments.csv'), [payHeader, ...payRows.slice(0, 3)].map((l) => l.replace(',prod_pro,', ',basic_monthly,').replace(',prod_life,', ',lifetime,')).join('\n') + '\n')
    writeFileSync(join(folder, '2026-01-subscriptions.csv'), [subHeader, ...subRows.slice(0, 2)].map((l) => l.replace(',prod_pro,', ',prod_basic_monthly,')).join('\n') + '\n')
    writeFileSync(join(folder, '2026-02-payments.csv'), [payHeader, payRows[0]!.replace('ch_1001', 'ch_2001').replace('2026-01-05', '2026-13-45')].join('\n') + '\n')

    const r = sh('node', ['backfill.mjs', 'store.db', 'exports'])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(1)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^2026-01-payments\.csv: charges imported: 3 read, 3 inserted, 0 updated, 0 unchanged, 0 stale, 0 rejected/)
    expect(lines[1]).toMatch(/^2026-01-subscriptions\.csv: subscriptions imported: 2 read, 2 inserted/)
    expect(lines[2]).toMatch(/^2026-02-payments\.csv: 1 of 1 rows rejected; see .*2026-02-payments\.csv\.rejects\.csv/)
    expect(lines, r.stdout).toContain('2026-01: MRR 9.99 USD, net charges 9.99 USD')
    expect(lines.at(-1)).toMatch(/^total net charges [\d.]+ USD$/)

    const again = sh('node', ['backfill.mjs', 'store.db', 'exports'])
    expect(again.status).toBe(1)
    expect(again.stdout).toMatch(/2026-01-payments\.csv: charges imported: 3 read, 0 inserted, 0 updated, 3 unchanged/)
    expect(again.stdout).toMatch(/2026-01-subscriptions\.csv: subscriptions imported: 2 read, 0 inserted, 0 updated, 2 unchanged/)
  })

  it('type-checks consumers: a correct file compiles, wrong calls fail', () => {
    // The user's own @types/node (zod's types name URL); nothing else of this checkout.
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({compilerOptions: {lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', noEmit: true, skipLibCheck: false, strict: true, target: 'ES2022', typeRoots: [join(ROOT, 'node_modules', '@types')], types: ['node']}, files: ['good.ts', 'bad.ts']}),
    )
    const tsc = join(ROOT, 'node_modules', '.bin', 'tsc')
    writeFileSync(
      join(project, 'good.ts'),
      `import {InvalidInputError, openStore, price, priceMany, PricectlError, type PriceOutcome, type PriceRequest, type Store} from 'pricectl'

const store: Store = openStore('store.db')
const request: PriceRequest = {country: 'DE', products: ['pro_monthly'], user_id: 'u1'}
const one = await price(store, request)
const currency: string = one.currency
const amount: number = one.products.pro_monthly!.price
const many = await priceMany(store, [request], {batchSize: 100})
const outcome: PriceOutcome = many.results[0]!
if (outcome.success) outcome.variants.arm_id
else outcome.message.toUpperCase()
const code: 1 | 2 = new InvalidInputError('x').exitCode
export const used = [currency, amount, code, PricectlError]
store.close()
`,
    )
    writeFileSync(
      join(project, 'bad.ts'),
      `import {openStore, price, revenueReport} from 'pricectl'

const store = openStore('store.db')
await price(store, {products: ['pro_monthly'], user_id: 42})
revenueReport(store, {by: 'day'})
store.db.prepare('SELECT 1')
`,
    )
    // One program for both (a type-check costs seconds): every error is one of bad.ts's calls.
    const r = sh(tsc, ['-p', 'tsconfig.json'])
    expect(r.status).not.toBe(0)
    const errors = r.stdout.trim().split('\n').filter((l) => /^\S+\.ts\(/.test(l))
    expect(errors.map((l) => /^(\S+\.ts)\((\d+),/.exec(l)!.slice(1).join(':')), r.stdout).toEqual(['bad.ts:4', 'bad.ts:5', 'bad.ts:6'])
  })
})
