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
/**
 * The modules that locate a file of dist/src/ by the dist/ folder they are in, bundled or
 * not: the worker modules (src/workers.ts workerUrl) and the price schemas required on first
 * use (src/schemas/on-first-use.ts). Bundled, their import.meta.url is the bundle's file, in
 * dist/bundle/ or dist/commands/price/; bundlePrice lets them use import.meta.
 */
const LOCATORS = ['dist/src/workers.js', 'dist/src/schemas/on-first-use.js']

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
 * pricing, the price impact, geoip, prompts, the PostgreSQL adapter) as chunks in
 * dist/bundle/ (outside dist/commands, where oclif looks for commands): esbuild's own tree
 * shaking and code splitting, no plugin. A cold `price` otherwise loads ~100 compiled files
 * of src/ (docs/performance.md "Speed mechanisms"). better-sqlite3 (native) and oclif stay
 * where they are: the command must extend the Command class the rest of oclif knows. A
 * `price` process loads nothing else of dist/src, so no module exists twice. The price
 * schemas are a second entry (dist/bundle/price-schemas.js), which src/schemas/on-first-use.ts
 * requires when a request needs them.
 *
 * A bundled file's import.meta.url is the bundle's: only createRequire(import.meta.url) (which
 * resolves packages, the same from any folder of the package) may use it, so a file that
 * locates a sibling (`new URL('worker.js', import.meta.url)`) fails the build here rather
 * than the command at run time. The exceptions are the LOCATORS, which find dist/src/ from
 * whichever file of dist/ they are in.
 */
async function bundlePrice() {
  const entry = join(root, 'dist', 'commands', 'price', 'index.js')
  const result = await esbuild.build({
    absWorkingDir: root,
    allowOverwrite: true,
    bundle: true,
    chunkNames: 'bundle/[name]-[hash]',
    // src/store/db.ts then loads the PostgreSQL adapter (a chunk of its own) for a postgres:// store only.
    define: {PRICECTL_POSTGRES_ON_FIRST_USE: 'true'},
    // The price schemas, which src/schemas/on-first-use.ts requires on first use: an entry of the same build, so they share its modules.
    entryPoints: {'bundle/price-schemas': join(root, 'dist', 'src', 'schemas', 'price.js'), 'commands/price/index': entry},
    external: ['@oclif/core', '@oclif/core/*', 'better-sqlite3', 'pg', 'pg-copy-streams'],
    format: 'esm',
    // Names kept: errors and classes are told apart by name in places (err.name, constructor.name).
    keepNames: true,
    logLevel: 'error',
    metafile: true,
    minify: true,
    outdir: join(root, 'dist'),
    platform: 'node',
    splitting: true,
    target: `node${process.versions.node.split('.')[0]}`,
    // Kept in memory until checked.
    write: false,
  })
  const located = Object.keys(result.metafile.inputs)
    .filter((f) => f.startsWith('dist/') && !LOCATORS.includes(f))
    .filter((f) => readFileSync(join(root, f), 'utf8').replaceAll('createRequire(import.meta.url)', '').includes('import.meta'))
  if (located.length > 0) fail([], `the price bundle would move import.meta.url of ${located.join(', ')}: leave that file out of the bundle (scripts/build.mjs bundlePrice) or resolve it through createRequire`)
  for (const out of result.outputFiles) write(out.path, out.contents)
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
