/**
 * The type check's second half (`npm run typecheck`): promises nobody waits for. The storage
 * port returns promises, and TypeScript accepts a call whose promise is dropped; a dropped
 * write runs late or never reports its error. Fails on:
 * - a statement that is only a promise (`store.pricing.saveQuotes(locks)`): await it, return
 *   it, or mark a deliberate fire-and-forget with `void`;
 * - an async function passed where a callback returning void is expected (`forEach(async ...)`,
 *   an event handler): nothing waits for it, and its error is unhandled.
 */
import path from 'node:path'
import ts from 'typescript'

const root = path.resolve(import.meta.dirname, '..')
const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile).config
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root)
const program = ts.createProgram(parsed.fileNames, parsed.options)
const checker = program.getTypeChecker()

const isPromise = (type) => (type.isUnion() ? type.types.some(isPromise) : type.symbol?.name === 'Promise')
// `p.catch(...)` handles the rejection; an assignment keeps the promise for later.
const handled = (e) =>
  (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && (e.expression.name.text === 'catch' || (e.expression.name.text === 'then' && e.arguments.length === 2))) ||
  (ts.isBinaryExpression(e) && e.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && e.operatorToken.kind <= ts.SyntaxKind.LastAssignment)
const returnsVoid = (signature) => {
  const r = checker.getReturnTypeOfSignature(signature)
  return (r.flags & ts.TypeFlags.Void) !== 0
}

const problems = []
for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || !sf.fileName.startsWith(root + '/') || sf.fileName.includes('/node_modules/')) continue
  const where = (n) => `${path.relative(root, sf.fileName)}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`
  const visit = (n) => {
    if (ts.isExpressionStatement(n)) {
      const e = n.expression
      if (!ts.isAwaitExpression(e) && !ts.isVoidExpression(e) && !handled(e) && isPromise(checker.getTypeAtLocation(e))) problems.push(`${where(n)}: a promise nobody awaits: ${e.getText(sf).slice(0, 80)}`)
    }
    if ((ts.isArrowFunction(n) || ts.isFunctionExpression(n)) && n.modifiers?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword)) {
      const contextual = checker.getContextualType(n) && checker.getNonNullableType(checker.getContextualType(n))
      const signatures = contextual?.getCallSignatures() ?? []
      if (signatures.length > 0 && signatures.every(returnsVoid)) problems.push(`${where(n)}: an async callback where nothing waits for it (its caller expects void)`)
    }
    ts.forEachChild(n, visit)
  }
  visit(sf)
}
if (problems.length > 0) {
  console.error(problems.join('\n'))
  console.error(`${problems.length} unawaited promise${problems.length === 1 ? '' : 's'} (scripts/check-promises.mjs)`)
  process.exitCode = 1
}
