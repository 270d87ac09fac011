import {beforeAll, describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {e2eSeeded} from '../helpers/e2e.js'
import {run, runBin} from '../helpers/run.js'

/**
 * price on either adapter, in-process (test/helpers/run.ts): the lock a command writes is
 * in the store; a separate process (bin/run.js) reads it back where "across processes" is
 * the point, and stdin is the process's own.
 */
describe('price end to end', () => {
  let db: string
  beforeAll(async () => {
    db = await e2eSeeded('catalog', (file) => createProducts(file, CATALOG))
  })

  it('a lock made by one process is returned by the next, until --override', async () => {
    const first = await run(db, ['price', '-u', 'e2e', '-p', 'pro_yearly', '--country', 'GB', '--json'])
    expect(first.code).toBe(0)
    expect(first.json.currency).toBe('GBP')
    expect((await run(db, ['products', 'update', 'pro_yearly', '--base-px', '10', '--yes'])).code).toBe(0)
    const second = runBin(db, ['price', '-u', 'e2e', '-p', 'pro_yearly', '--json'])
    expect(second.json).toEqual(first.json)
    const third = await run(db, ['price', '-u', 'e2e', '-p', 'pro_yearly', '--override', '--country', 'US', '--json'])
    expect(third.json.products.pro_yearly.price).toBe(10)
  })

  it('adopts an anonymous lock and overrides the currency across processes', async () => {
    const anon = await run(db, ['price', '--ip', '2001:4860:4860::8888', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    expect(anon.json).toMatchObject({country: 'DE', currency: 'EUR', user_id: '2001:4860:4860::8888'})
    const adopted = runBin(db, ['price', '-u', 'bob', '--ip', '2001:4860:4860::8888', '-p', 'pro_monthly', '--json'])
    expect(adopted.json).toMatchObject({country: 'DE', currency: 'EUR', user_id: 'bob'})
    const swapped = await run(db, ['price', '-u', 'bob', '-p', 'pro_monthly', '--currency', 'CHF', '--override-currency', '--json'])
    expect(swapped.json.currency).toBe('CHF')
    expect(swapped.json.products.pro_monthly.price).toBe(8.99)
    expect((await run(db, ['user', 'get', 'bob', '--json'])).json).toEqual({user: {country: 'DE'}})
  })

  it('prints a table for people and writes nothing on bad input', async () => {
    const r = await run(db, ['price', '-u', 'tbl', '-p', 'pro_monthly', '--country', 'JP'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('tbl: JP, JPY')
    expect(r.stdout).toContain('￥1,200')
    const bad = await run(db, ['price', '-u', 'tbl2', '-p', 'pro_monthly', '--currency', 'EURO'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('unknown currency "EURO"')
    expect(bad.stderr).not.toMatch(/\n\s+at /)
    expect((await run(db, ['user', 'get', 'tbl2', '--json'])).code).toBe(1)
  })

  it('batch prices stdin JSONL', () => {
    // bin/run.js: the requests are the child's stdin.
    const input = Array.from({length: 50}, (_, i) => JSON.stringify({country: i % 2 ? 'IN' : 'BR', products: ['pro_monthly'], user_id: `batch-${i}`})).join('\n')
    const r = runBin(db, ['price', '--input', '-'], {input})
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toHaveLength(50)
    expect(lines[0]).toMatchObject({country: 'BR', currency: 'BRL'})
    expect(lines[1]).toMatchObject({country: 'IN', currency: 'INR'})
    expect(r.stderr).toMatch(/priced 50 of 50 requests/)
  })
})
