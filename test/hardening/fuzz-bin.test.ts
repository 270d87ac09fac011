import {copyFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {runBin} from '../helpers/run.js'
import {copyFixtureStore, expectUnchanged, paymentsCsv, STACK_LINE, tempDir, utf16, write} from './helpers.js'

/**
 * Bad input through bin/run.js (test/hardening/fuzz.test.ts runs the rest in-process): what
 * the process prints on stderr is what these check.
 */

let dir: string
let base: string

beforeAll(() => {
  dir = tempDir('pricectl-fuzz-bin-')
  base = copyFixtureStore(dir)
  expect(runBin(base, ['db', 'migrate', '--json'], {env: {CI: '1'}}).code).toBe(0)
})

let stores = 0
function freshStore(): string {
  const path = join(dir, `s${++stores}.db`)
  copyFileSync(base, path)
  return path
}

describe('bin/run.js: what a user sees on stderr', () => {
  it('a rejected value prints one line, no stack trace; DEBUG=1 adds the stack', () => {
    const db = freshStore()
    const args = ['products', 'create', '--api-id', 'x', '--name', 'X', '--base-px', 'NaN', '--interval', 'month', '--interval-count', '1']
    const r = runBin(db, args, {env: {CI: '1'}})
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^Error: invalid product: base_px: expected a number, got "NaN"/)
    const debug = runBin(db, args, {env: {CI: '1', DEBUG: '1'}})
    expect(debug.code).toBe(2)
    expect(debug.stderr).toMatch(STACK_LINE)
  })

  it('a UTF-16 --body from stdin, a latin-1 products file, a broken charges export: one line each, exit 2 or 1', () => {
    const db = freshStore()
    const before = dump(db)
    const body = runBin(db, ['products', 'create', '--body', '-'], {env: {CI: '1'}, input: utf16(JSON.stringify({api_id: 'x'})).toString('latin1')})
    expect(body.code).toBe(2)
    expect(body.stderr.trim().split('\n')).toHaveLength(1)
    const latin = write(dir, 'latin.csv', Buffer.from('api_id,name,base_px,interval,interval_count\nx,Caf\u00e9,1,month,1\n', 'latin1'))
    const products = runBin(db, ['products', 'import', latin], {env: {CI: '1'}})
    expect(products.code).toBe(2)
    expect(products.stderr).toMatch(/^Error: .*not UTF-8.*line 2/)
    expect(products.stderr.trim().split('\n')).toHaveLength(1)
    const broken = write(dir, 'broken.csv', `${paymentsCsv(1).split('\n')[0]}\n"unclosed,2026-01-01 10:00:00,9.99\n`)
    const charges = runBin(db, ['charges', 'import', broken], {env: {CI: '1'}})
    expect([1, 2]).toContain(charges.code)
    expect(charges.stderr).not.toMatch(STACK_LINE)
    expect(charges.stderr.trim().split('\n').filter((l) => l.startsWith('Error: '))).toHaveLength(1)
    expectUnchanged(db, before)
  })
})
