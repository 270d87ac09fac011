import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eStore} from '../helpers/e2e.js'
import {ROOT, runBin} from '../helpers/run.js'

/** The files the price bundle imports at start (its static imports, followed). */
function startFiles(): Set<string> {
  const imported = new Set<string>()
  const walk = (file: string) => {
    if (imported.has(file)) return
    imported.add(file)
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|[;\s}])import\s*(?:[\w{},\s$*]*from\s*)?"(\.{1,2}\/[^"]+)"/g)) walk(join(file, '..', m[1]))
  }
  walk(join(ROOT, 'dist', 'commands', 'price', 'index.js'))
  return imported
}

// docs/performance.md "Cold start": a cold `price` validates by hand, so zod and the price schemas load on first use.
describe('the price bundle', () => {
  it('loads no zod at start: the schemas are a bundle of their own', () => {
    const files = startFiles()
    expect(files.size).toBeGreaterThan(1)
    for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toContain('"ZodObject"')
    expect(readFileSync(join(ROOT, 'dist', 'bundle', 'price-schemas.js'), 'utf8')).toContain('"ZodObject"')
  })

  it.each([
    ['loaded on first use', {}],
    ['loaded at start by a node without require(esm)', {NODE_OPTIONS: '--no-experimental-require-module'}],
  ])('gives the schema errors of a request the fast path does not take (%s)', (_, env) => {
    const r = runBin(e2eStore(), ['price', '-u', 'u1', '-p', 'pro_monthly', '--coupon', 'pro_monthly= bad', '--json'], {env})
    expect(r.code).toBe(2)
    expect(r.json).toMatchObject({success: false})
    expect(r.json.message).toContain('coupons.pro_monthly: expected "coupon1,coupon2"')
  })
})
