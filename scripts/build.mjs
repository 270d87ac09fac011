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
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import ts from 'typescript'

const root = resolve(import.meta.dirname, '..')
const ENTRY = 'src/index.ts'

const file = ts.readConfigFile(join(root, 'tsconfig.build.json'), ts.sys.readFile)
if (file.error) fail([file.error])
const parsed = ts.parseJsonConfigFileContent(file.config, ts.sys, root)
if (parsed.errors.length > 0) fail(parsed.errors)
const options = {...parsed.options, declaration: true}
const program = ts.createProgram({options, rootNames: parsed.fileNames})

const outDir = options.outDir ?? root
const rootDir = options.rootDir ?? root
const declarationOf = (source) => join(outDir, relative(rootDir, source)).replace(/\.ts$/, '.d.ts')

const declarations = new Map()
const emitted = program.emit(undefined, (path, text) => {
  if (path.endsWith('.d.ts')) declarations.set(resolve(path), text)
  else write(path, text)
})

// The entry's declaration and every declaration it reaches through relative imports.
const publicFiles = new Set()
const pending = [declarationOf(join(root, ENTRY))]
while (pending.length > 0) {
  const path = pending.pop()
  if (publicFiles.has(path)) continue
  const text = declarations.get(path)
  if (text === undefined) fail([], `${relative(root, path)}: no declaration was emitted for it`)
  publicFiles.add(path)
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    pending.push(resolve(dirname(path), m[1].replace(/\.js$/, '.d.ts')))
  }
}
for (const path of publicFiles) write(path, declarations.get(path))

// Type errors anywhere fail the build; declaration errors only where a declaration is published.
const errors = [
  ...program.getConfigFileParsingDiagnostics(),
  ...program.getOptionsDiagnostics(),
  ...program.getSyntacticDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...program.getSemanticDiagnostics(),
  ...emitted.diagnostics.filter((d) => !d.file || publicFiles.has(declarationOf(d.file.fileName))),
].filter((d) => d.category === ts.DiagnosticCategory.Error)
if (errors.length > 0) fail(errors)

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
