import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve, sep} from 'node:path'
import ts from 'typescript'

/**
 * A small import graph of the TypeScript sources, for test/architecture.test.ts. Paths are
 * relative to the repository root with forward slashes (`src/pricing/price.ts`); a package
 * is its name (`@oclif/core`, `node:fs`).
 */

export type Import = {
  /** A repository file (`src/x.ts`), or a package name for anything not relative. */
  target: string
  /** As written in the source. */
  specifier: string
  /** `import('...')`: loaded when called, not when the file is. */
  dynamic: boolean
  /** Erased when compiled: `import type`, or every name it brings is used only as a type. */
  typeOnly: boolean
}

export type SourceFile = {file: string; imports: Import[]; text: string}

/** Every .ts file under these folders (relative to root), sorted; declaration files left out. */
export function sourceFiles(root: string, folders: string[]): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), {withFileTypes: true})) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path)
    }
  }
  for (const folder of folders) walk(folder)
  return out.sort()
}

/** `import ... from`, `export ... from`, `import '...'` and `import('...')` of a source text. */
function specifiers(sf: ts.SourceFile): {dynamic: boolean; specifier: string; typeOnly: boolean}[] {
  const out: {dynamic: boolean; specifier: string; typeOnly: boolean}[] = []
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({dynamic: false, specifier: node.moduleSpecifier.text, typeOnly: Boolean(node.importClause?.isTypeOnly)})
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({dynamic: false, specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly})
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      out.push({dynamic: true, specifier: node.arguments[0].text, typeOnly: false})
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({dynamic: false, specifier: node.argument.literal.text, typeOnly: true})
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}

/**
 * The static imports that survive compilation: TypeScript drops an import whose names are
 * only used as types even without `type`, so the compiled JavaScript is what runs.
 */
function runtimeSpecifiers(file: string, text: string): Set<string> {
  const js = ts.transpileModule(text, {
    compilerOptions: {module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false},
    fileName: file,
  }).outputText
  const sf = ts.createSourceFile(`${file}.js`, js, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS)
  return new Set(specifiers(sf).filter((s) => !s.dynamic).map((s) => s.specifier))
}

/** A specifier's target: the repository file of a relative one (`./x.js` is `x.ts`), else the package name. */
function resolveTarget(root: string, file: string, specifier: string): string {
  if (!specifier.startsWith('.')) {
    if (specifier.startsWith('node:')) return specifier
    const parts = specifier.split('/')
    return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
  }
  const abs = resolve(root, dirname(file), specifier).replace(/\.js$/, '.ts')
  return relative(root, abs).split(sep).join('/')
}

/** Parse each file and list its imports. */
export function readSources(root: string, files: string[]): SourceFile[] {
  return files.map((file) => {
    const text = readFileSync(join(root, file), 'utf8')
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS)
    const runtime = runtimeSpecifiers(file, text)
    const imports = specifiers(sf).map((s) => ({
      dynamic: s.dynamic,
      specifier: s.specifier,
      target: resolveTarget(root, file, s.specifier),
      typeOnly: s.typeOnly || (!s.dynamic && !runtime.has(s.specifier)),
    }))
    return {file, imports, text}
  })
}

/**
 * Cycles of edges between the given files (Tarjan's strongly connected components): each
 * component of more than one file, or a file importing itself, as one sorted list.
 */
export function cycles(edges: Map<string, string[]>): string[][] {
  let index = 0
  const indexOf = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const strong = (v: string) => {
    indexOf.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        strong(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!))
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(component.sort())
    }
  }
  for (const v of [...edges.keys()].sort()) if (!indexOf.has(v)) strong(v)
  return out
}

/** One path around a cycle, for a message: a -> b -> ... -> a. */
export function cyclePath(edges: Map<string, string[]>, component: string[]): string {
  const members = new Set(component)
  const start = component[0]
  const seen = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of edges.get(v) ?? []) {
      if (!members.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let at: string | undefined = v; at !== undefined && at !== start; at = seen.get(at)) path.splice(1, 0, at)
        return [...path, start].join(' -> ')
      }
      if (!seen.has(w)) {
        seen.set(w, v)
        queue.push(w)
      }
    }
  }
  return component.join(', ')
}

/**
 * Statement shapes of SQL in a string: pricectl writes SQL keywords in capitals, which
 * messages and help text do not (`'Delete a coupon'` is not a statement).
 */
const SQL =
  /\bSELECT\s+(DISTINCT\s+)?[\w*(]|\bINSERT\s+(OR\s+[A-Z]+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|\bREPLACE\s+INTO\b|\b(CREATE|DROP)\s+(UNIQUE\s+|TEMP\s+|VIRTUAL\s+)?(TABLE|INDEX|VIEW|TRIGGER)\b|\bALTER\s+TABLE\b|\bPRAGMA\s+\w|\bWITH\s+(RECURSIVE\s+)?\w+(\s*\([^)]*\))?\s+AS\s*\(|^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|VACUUM|ANALYZE)\b/

/**
 * Where a source holds SQL: a string or template literal shaped like a statement, a
 * `prepare` of literal text, or a `pragma` call. Each finding is `line: text`.
 */
export function sqlIn(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS)
  const out: string[] = []
  const at = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1
  const visit = (node: ts.Node) => {
    let literal: string | undefined
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text
    else if (ts.isTemplateExpression(node)) literal = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ? ')
    if (literal !== undefined && SQL.test(literal)) {
      out.push(`${at(node)}: ${literal.replace(/\s+/g, ' ').trim().slice(0, 60)}`)
      return
    }
    // A statement prepared from literal text, or any pragma (`coupons.prepare(request)` is not SQL).
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text
      const arg = node.arguments[0]
      const literal = arg !== undefined && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg) || ts.isTemplateExpression(arg))
      if (name === 'pragma' || (name === 'prepare' && literal)) out.push(`${at(node)}: .${name}(...)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}
