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
import {existsSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import ts from 'typescript'

const root = resolve(import.meta.dirname, '..')
// A clean dist/: a moved or deleted source file must not leave a stale .js that oclif loads or npm packs.
rmSync(join(root, 'dist'), {force: true, recursive: true})
const ENTRY = 'src/index.ts'

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
