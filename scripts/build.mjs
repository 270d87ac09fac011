#!/usr/bin/env node
/**
 * Compile src/ and commands/ into dist/ (tsconfig.build.json) and write the declarations of
 * the library entry (dist/src/index.d.ts) and of the files it references: one type-check,
 * as `tsc -p tsconfig.build.json` did, plus the .d.ts the package's `types` point to.
 *
 * Only the public graph gets .d.ts files: engine files the entry's types do not mention
 * (statements, handles) are not published, so a declaration problem there (a type that
 * cannot be named) does not fail the build, and better-sqlite3 or oclif types cannot leak
 * into what a user's tsc reads. Like tsc, it writes everything it can and then exits 1 when
 * there were errors.
 *
 * Then, for a faster cold start (docs/performance.md "Cold start"): the `price` command's
 * module graph is bundled into its own file (bundlePrice), oclif's manifest is written, and
 * the root help is rendered once by oclif for bin/run.js (renderRootHelp).
 */
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {arch, platform, tmpdir} from 'node:os'
import {dirname, join, relative, resolve} from 'node:path'
import * as esbuild from 'esbuild'
import ts from 'typescript'

const root = resolve(import.meta.dirname, '..')
// A clean dist/: a moved or deleted source file must not leave a stale .js that oclif loads or npm packs.
rmSync(join(root, 'dist'), {force: true, recursive: true})
const ENTRY = 'src/index.ts'
/** Where the price bundle's schemas are loaded from on first use (schemasOnFirstUse). */
const ON_FIRST_USE_ENTRY = 'bundle/price-schemas'
/**
 * The module that gives a worker thread its file (workerUrl): bundled, its import.meta.url is
 * the bundle's file, in dist/bundle/ or dist/commands/price/, and it finds dist/src/ from
 * there (bundlePrice lets it use import.meta).
 */
const WORKER_LOCATOR = 'dist/src/workers.js'
/** Modules of src/ the price schemas' bundle may hold a copy of: pure functions and constants (bundleSchemasOnFirstUse). */
const SCHEMA_COPIES = ['dist/src/currency.js', 'dist/src/dates.js']

const file = ts.readConfigFile(join(root, 'tsconfig.build.json'), ts.sys.readFile)
if (file.error) fail([file.error])
const parsed = ts.parseJsonConfigFileContent(file.config, ts.sys, root)
if (parsed.errors.length > 0) fail(parsed.errors)
const options = parsed.options
const program = ts.createProgram({options, rootNames: parsed.fileNames})

const outDir = options.outDir ?? root
const rootDir = options.rootDir ?? root
const outputOf = (source) => join(outDir, relative(rootDir, source))

const emitted = program.emit(undefined, write)

// Declarations of the entry and of every file its declarations import (relative imports),
// emitted file by file: the rest of the engine gets none (and costs no declaration emit).
// The sixth argument of emit() (forceDtsEmit, what ts.transpileDeclaration uses) emits a
// declaration while the project's `declaration` stays off.
const publicFiles = new Set()
const declarationDiagnostics = []
const pending = [join(root, ENTRY)]
while (pending.length > 0) {
  const source = pending.pop()
  if (publicFiles.has(source)) continue
  publicFiles.add(source)
  const file = program.getSourceFile(source)
  if (!file) fail([], `${relative(root, source)}: not part of the build (tsconfig.build.json)`)
  let text
  if (file.isDeclarationFile) text = file.text
  else {
    const result = program.emit(file, (path, data) => { if (path.endsWith('.d.ts')) text = data }, undefined, true, undefined, true)
    declarationDiagnostics.push(...result.diagnostics)
  }
  write(outputOf(source).replace(/(\.d)?\.ts$/, '.d.ts'), text)
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(source), m[1].replace(/\.js$/, '.ts'))
    pending.push(existsSync(target) ? target : target.replace(/\.ts$/, '.d.ts'))
  }
}

// Type errors anywhere fail the build; declaration errors only where a declaration is published.
const errors = [
  ...program.getConfigFileParsingDiagnostics(),
  ...program.getOptionsDiagnostics(),
  ...program.getSyntacticDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...program.getSemanticDiagnostics(),
  ...emitted.diagnostics,
  ...declarationDiagnostics,
].filter((d) => d.category === ts.DiagnosticCategory.Error)
if (errors.length > 0) fail(errors)

await bundlePrice()
writeManifest()
renderRootHelp()

/**
 * oclif's manifest, its commands in id order: oclif lists them in the order their files
 * finished loading, which varies from run to run, and renderRootHelp ties the root help to
 * the manifest's bytes (a rewrite in another order made bin/run.js let oclif answer).
 */
function writeManifest() {
  execFileSync(join(root, 'node_modules', '.bin', 'oclif'), ['manifest'], {cwd: root, env: {...process.env, OCLIF_SKIP_NEW_VERSION_CHECK: 'true'}, stdio: 'ignore'})
  const path = join(root, 'oclif.manifest.json')
  const manifest = JSON.parse(readFileSync(path, 'utf8'))
  const commands = Object.fromEntries(Object.keys(manifest.commands).sort().map((id) => [id, manifest.commands[id]]))
  writeFileSync(path, JSON.stringify({...manifest, commands}, null, 2) + '\n')
}

/**
 * The `price` command and everything it imports, in one file in place of
 * dist/commands/price/index.js (oclif loads it by that path), with its lazy imports (batch
 * pricing, the price impact, geoip, prompts) as chunks in dist/bundle/ (outside
 * dist/commands, where oclif looks for commands). A cold `price` otherwise loads ~100
 * compiled files of src/ and ~95 of zod. better-sqlite3 (native) and oclif stay where they
 * are: the command must extend the Command class the rest of oclif knows. A `price` process
 * loads nothing else of dist/src, so no module exists twice (but the copies the price schemas'
 * bundle holds, bundleSchemasOnFirstUse).
 *
 * A bundled file's import.meta.url is the bundle's: only createRequire(import.meta.url) (which
 * resolves packages, the same from any folder of the package) may use it, so a file that
 * locates a sibling (`new URL('worker.js', import.meta.url)`) fails the build here rather
 * than the command at run time. The one exception is WORKER_LOCATOR (src/workers.ts), which
 * locates the worker modules in dist/src/ from whichever file of dist/ it is in.
 */
async function bundlePrice() {
  const entry = join(root, 'dist', 'commands', 'price', 'index.js')
  const result = await esbuild.build({
    ...bundleOptions(),
    allowOverwrite: true,
    chunkNames: 'bundle/[name]-[hash]',
    // src/store/db.ts then loads the PostgreSQL adapter (a chunk of its own) for a postgres:// store only.
    define: {PRICECTL_POSTGRES_ON_FIRST_USE: 'true'},
    entryPoints: {'commands/price/index': entry},
    external: ['@oclif/core', '@oclif/core/*', 'better-sqlite3'],
    // schemasOnFirstUse before unusedSchemasDropped: both load dist/src/schemas/on-first-use.js, the first plugin's onLoad wins.
    plugins: [zodEnglishOnly(), schemasOnFirstUse(), unusedSchemasDropped()],
    splitting: true,
  })
  const schemas = await bundleSchemasOnFirstUse()
  const inputs = [...Object.keys(result.metafile.inputs), ...Object.keys(schemas.metafile.inputs)]
  const located = inputs
    .filter((f) => f.startsWith('dist/') && f !== WORKER_LOCATOR)
    .filter((f) => readFileSync(join(root, f), 'utf8').replaceAll('createRequire(import.meta.url)', '').includes('import.meta'))
  if (located.length > 0) fail([], `the price bundle would move import.meta.url of ${located.join(', ')}: leave that file out of the bundle (scripts/build.mjs bundlePrice) or resolve it through createRequire`)
  const locales = inputs
    .filter((f) => f.startsWith('dist/'))
    .filter((f) => /\.locales\b|\blocales\b[^;]*from\s*['"]zod|['"]zod\/[^'"]*locales/.test(readFileSync(join(root, f), 'utf8')))
  if (locales.length > 0) fail([], `${locales.join(', ')} may use zod's locales, which the price bundle leaves out: remove zodEnglishOnly from scripts/build.mjs bundlePrice`)
  for (const out of [...result.outputFiles, ...schemas.outputFiles]) write(out.path, out.contents)
}

/**
 * The esbuild options the price bundle and the price schemas' bundle share (bundlePrice,
 * bundleSchemasOnFirstUse): minified ES modules for this node, into dist/, kept in memory
 * (bundlePrice checks them before writing), with a metafile for those checks.
 */
function bundleOptions() {
  return {
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    // Names kept: errors and classes are told apart by name in places (err.name, constructor.name).
    keepNames: true,
    logLevel: 'error',
    metafile: true,
    minify: true,
    outdir: join(root, 'dist'),
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    write: false,
  }
}

/**
 * The schema modules (src/schemas/*) build every schema when they load, and the price command
 * uses few of them (0.085G instructions of a cold `price` saved; docs/performance.md "Cold
 * start"). Their top-level constants built by a call are marked pure for esbuild
 * (the initializer wrapped in an arrow function called at once, marked `@__PURE__`: the same
 * value at the same moment), so the bundle keeps only those something in it refers to; the
 * rest is dropped unbuilt. Only the bundle changes: dist/src keeps tsc's output.
 */
function unusedSchemasDropped() {
  return {
    name: 'unused-schemas-dropped',
    setup(build) {
      build.onLoad({filter: /[\\/]dist[\\/]src[\\/]schemas[\\/][^\\/]+\.js$/}, (args) => ({contents: pureSchemas(readFileSync(args.path, 'utf8'), args.path), loader: 'js'}))
    },
  }
}

/**
 * A cold `price` validates its request by hand (src/pricing/request.ts) and prints no schema,
 * yet loading zod and building the two price schemas was ~0.18G instructions of its start
 * (docs/performance.md "Cold start"). src/schemas/on-first-use.ts hands those
 * schemas out through functions. In the price bundle each function loads, on its first call,
 * a bundle of their module of its own (dist/bundle/price-schemas.js, bundleSchemasOnFirstUse)
 * with a synchronous `require` of that ES module (node's require(esm)). A node without
 * require(esm) (before 20.19, or 22 before 22.12) imports it at start instead, as before.
 * on-first-use.ts must stay `export function NAME() { return SCHEMA }` with SCHEMA imported
 * by name from one sibling module, or the build fails.
 *
 * Its own bundle and not a chunk shared with the command's: esbuild puts a whole file in one
 * chunk, so zod would be in a chunk the command imports at start as soon as any file the
 * command imports names zod or src/schemas/common.ts (the pricing engine's do). The schemas'
 * bundle has its own copy of the few modules they use (bundleSchemasOnFirstUse allows only
 * modules without state: a copy answers the same).
 */
function schemasOnFirstUse() {
  return {
    name: 'schemas-on-first-use',
    setup(build) {
      build.onLoad({filter: /[\\/]dist[\\/]src[\\/]schemas[\\/]on-first-use\.js$/}, (args) => ({contents: requiredOnFirstUse(readFileSync(args.path, 'utf8'), args.path).contents, loader: 'js'}))
    },
  }
}

/**
 * The module src/schemas/on-first-use.ts hands out, bundled alone into ON_FIRST_USE_ENTRY.
 * Modules of src/ other than the schemas are copies there: only those in SCHEMA_COPIES
 * (functions and constants, no state another module sets, no error class a caller tells
 * apart with instanceof) may be; anything else fails the build.
 */
async function bundleSchemasOnFirstUse() {
  const path = join(root, 'dist', 'src', 'schemas', 'on-first-use.js')
  const result = await esbuild.build({
    ...bundleOptions(),
    entryPoints: {[ON_FIRST_USE_ENTRY]: requiredOnFirstUse(readFileSync(path, 'utf8'), path).module},
    plugins: [zodEnglishOnly(), unusedSchemasDropped()],
  })
  const bundled = Object.values(result.metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([f]) => f))
  const copies = bundled.filter((f) => f.startsWith('dist/src/') && !f.startsWith('dist/src/schemas/') && !SCHEMA_COPIES.includes(f))
  if (copies.length > 0) fail([], `the price schemas' bundle (${ON_FIRST_USE_ENTRY}.js) would hold a copy of ${copies.join(', ')}: add it to SCHEMA_COPIES in scripts/build.mjs if a copy answers the same as the command's (no state, no error class), else keep it out of src/schemas/price.ts's imports`)
  return result
}

/** on-first-use.js with each `return SCHEMA` made a `require` of ON_FIRST_USE_ENTRY on first call, and the module it imports (schemasOnFirstUse). */
function requiredOnFirstUse(text, path) {
  const from = new Map()
  for (const m of text.matchAll(/^import \{([^}]*)\} from '(\.\/[\w-]+\.js)';$/gm)) for (const name of m[1].split(',')) from.set(name.trim(), m[2])
  const functions = [...text.matchAll(/^export function (\w+)\(\) \{\s*return (\w+);\s*\}$/gm)]
  const exported = text.match(/^export /gm)?.length ?? 0
  const modules = new Set(from.values())
  if (functions.length === 0 || functions.length !== exported || modules.size !== 1 || functions.some((f) => !from.has(f[2]))) {
    fail([], `${path}: expected only \`export function NAME() { return SCHEMA }\` with SCHEMA imported by name from one sibling module (scripts/build.mjs schemasOnFirstUse)`)
  }
  const loader = `import {createRequire} from 'node:module'
import {fileURLToPath} from 'node:url'
const url = import.meta.url.slice(0, import.meta.url.lastIndexOf('/dist/')) + ${JSON.stringify(`/dist/${ON_FIRST_USE_ENTRY}.js`)}
let loaded = process.features.require_module ? undefined : await import(url)
const load = () => (loaded ??= createRequire(import.meta.url)(fileURLToPath(url)))
`
  return {contents: loader + functions.map(([, name, schema]) => `export function ${name}() {\n  return load().${schema}\n}\n`).join(''), module: resolve(dirname(path), [...modules][0])}
}

/** `text` with each top-level const initializer that calls something wrapped in a pure IIFE. */
function pureSchemas(text, path) {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS)
  const edits = []
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer
      if (!init || ts.isArrowFunction(init) || ts.isFunctionExpression(init) || ts.isClassExpression(init) || !callsSomething(init)) continue
      edits.push([init.getStart(file), '/* @__PURE__ */ (() => ('], [init.getEnd(), '))()'])
    }
  }
  let out = text
  for (const [at, insert] of edits.sort((a, b) => b[0] - a[0])) out = out.slice(0, at) + insert + out.slice(at)
  return out
}

/** Whether evaluating `node` calls or constructs something (function bodies not counted). */
function callsSomething(node) {
  if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isTaggedTemplateExpression(node)) return true
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return false
  return ts.forEachChild(node, callsSomething) ?? false
}

/**
 * zod's index exports all its ~40 message locales (`z.locales`, a third of the bundle's
 * size); its schemas use English, which they import themselves. Nothing of pricectl selects a
 * locale (bundlePrice checks), so the bundle's `z.locales` holds English only.
 */
function zodEnglishOnly() {
  return {
    name: 'zod-english-only',
    setup(build) {
      build.onResolve({filter: /^\.\.\/locales\/index\.js$/}, (args) => (/[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? {namespace: 'zod-locales', path: 'en'} : undefined))
      build.onLoad({filter: /.*/, namespace: 'zod-locales'}, () => ({contents: "export {default as en} from 'zod/v4/locales/en.js'", resolveDir: root}))
    },
  }
}

/**
 * The root `--help` as oclif prints it to a pipe (80 columns, no colour), rendered here by
 * oclif itself in an environment that changes nothing (a home without user plugins or a
 * theme, no OCLIF_ or PRICECTL_ variables), for bin/run.js to print when its own environment
 * changes nothing either. The one line that depends on the running node (VERSION) is left
 * as a gap; the manifest's hash ties the text to the commands it lists.
 */
function renderRootHelp() {
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const home = mkdtempSync(join(tmpdir(), 'pricectl-build-'))
  try {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OCLIF_|PRICECTL_|XDG_|DEBUG$|FORCE_COLOR$|NO_COLOR$|NODE_ENV$)/.test(k)))
    const text = execFileSync(process.execPath, [join(root, 'bin', 'run.js'), '--help'], {cwd: home, encoding: 'utf8', env: {...env, HOME: home}, stdio: ['ignore', 'pipe', 'pipe']})
    const userAgent = `${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`
    const parts = text.split(`\n  ${userAgent}\n`)
    if (parts.length !== 2) return // not the expected layout: bin/run.js lets oclif answer
    const manifest = createHash('sha256').update(readFileSync(join(root, 'oclif.manifest.json'))).digest('hex')
    write(join(root, 'dist', 'root-help.json'), JSON.stringify({after: parts[1], before: parts[0], manifest}))
  } finally {
    rmSync(home, {force: true, recursive: true})
  }
}

function write(path, text) {
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, text)
}

function fail(diagnostics, message) {
  const host = {getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n'}
  if (diagnostics.length > 0) process.stderr.write(ts.formatDiagnostics(diagnostics, host))
  if (message) process.stderr.write(`build: ${message}\n`)
  process.exit(1)
}
