import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {checkJsonDepth, MAX_JSON_DEPTH, parseJson} from '../../src/cli/input.js'
import {CATALOG, createProducts} from '../helpers/catalog.js'
import {dump} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * docs/hardening.md "JSON nesting": every JSON input of the commands refuses
 * nesting deeper than 64 levels with exit 2, before anything recurses over it (5,000
 * levels used to overflow the stack: exit 1, "Maximum call stack size exceeded").
 */

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`
const MESSAGE = /JSON nested more than 64 levels deep \(line \d+\); no pricectl input needs more than a few levels/

describe('JSON nested too deep is invalid input (#13.6)', () => {
  let db: string
  let dir: string
  const file = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }
  beforeAll(async () => {
    db = tempStore()
    dir = dirname(db)
    await createProducts(db, CATALOG)
  })

  it('--body of price and of revenue writes: exit 2 with one line, nothing written', async () => {
    const before = dump(db)
    const body = file('deep-body.json', `{"user_id": "u1", "products": ["pro_monthly"], "features": ${deep(5000)}}`)
    const price = await run(db, ['price', '--body', body])
    expect(price.code).toBe(2)
    expect(price.stderr.trim().split('\n')).toHaveLength(1)
    expect(price.stderr).toMatch(MESSAGE)
    expect(price.stderr).toContain('--body: JSON nested')
    const json = await run(db, ['price', '--body', body, '--json'])
    expect(json.code).toBe(2)
    expect(json.json).toEqual({message: expect.stringMatching(MESSAGE), success: false})
    const sub = await run(db, ['subscriptions', 'create', '--body', file('deep-sub.json', `{"metadata": ${deep(10_000)}}`)])
    expect(sub.code).toBe(2)
    expect(sub.stderr).toMatch(MESSAGE)
    expect(dump(db)).toEqual(before)
  })

  it('files read whole: products import, fx import, experiments simulate --demand-file', async () => {
    const before = dump(db)
    const products = await run(db, ['products', 'import', file('deep-products.json', `[{"api_id": "p", "features": ${deep(5000)}}]`)])
    expect(products.code).toBe(2)
    expect(products.stderr).toMatch(MESSAGE)
    const fx = await run(db, ['fx', 'import', file('deep-rates.json', `{"date": "2026-01-02", "usd": {"eur": ${deep(5000)}}}`)])
    expect(fx.code).toBe(2)
    expect(fx.stderr).toMatch(MESSAGE)
    const demand = await run(db, ['experiments', 'simulate', '--arm', 'x0.8', '--demand-file', file('deep-demand.json', deep(5000)), '--visitors', '10'])
    expect(demand.code).toBe(2)
    expect(demand.stderr).toMatch(MESSAGE)
    const csv = file('charges.csv', 'id,amount\nc1,5\n')
    const mapping = await run(db, ['charges', 'import', csv, '--mapping', file('deep-mapping.json', `{"columns": ${deep(5000)}}`)])
    expect(mapping.code).toBe(2)
    expect(mapping.stderr).toMatch(MESSAGE)
    expect(dump(db)).toEqual(before)
  })

  it('JSON flag values', async () => {
    const before = dump(db)
    const r = await run(db, ['products', 'update', 'pro_monthly', '--feature', `{"api_id": "f", "value": ${deep(5000)}}`])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--feature: JSON nested more than 64 levels deep/)
    expect(dump(db)).toEqual(before)
  })

  it('price --input: a line nested too deep is one bad line, the others are priced', async () => {
    const input = file('deep.jsonl', [JSON.stringify({country: 'US', products: ['pro_monthly'], user_id: 'ok-1'}), `{"user_id": "deep", "products": ["pro_monthly"], "features": ${deep(5000)}}`, JSON.stringify({country: 'US', products: ['pro_monthly'], user_id: 'ok-2'})].join('\n'))
    const r = await run(db, ['price', '--input', input])
    const lines = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(lines.map((l) => l.user_id ?? l.success)).toEqual(['ok-1', false, 'ok-2'])
    // The failure names the input's line (2); the message does not name another (#32.21: it said "(line 1)").
    expect(lines[1]).toEqual({line: 2, message: 'JSON nested more than 64 levels deep; no pricectl input needs more than a few levels', success: false})
    // A CSV cell likewise: the row's line, no line of the cell's own.
    const csv = file('deep.csv', ['user_id,country,products,features', 'ok-3,US,pro_monthly,', `deep,US,pro_monthly,"{""a"": ${deep(100)}}"`].join('\n'))
    const c = await run(db, ['price', '--input', csv, '--output', 'jsonl'])
    const rows = c.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(rows[1]).toEqual({line: 3, message: 'features: JSON nested more than 64 levels deep; no pricectl input needs more than a few levels', success: false})
  })

  it('the limit is 64 levels, counted outside strings', () => {
    expect(MAX_JSON_DEPTH).toBe(64)
    expect(() => checkJsonDepth(deep(64))).not.toThrow()
    expect(() => checkJsonDepth(deep(65), 'x')).toThrow(/^x: JSON nested more than 64 levels deep \(line 1\)/)
    expect(() => checkJsonDepth(`{"a": "${'['.repeat(500)}", "b": "\\"[[["}`)).not.toThrow()
    expect(() => checkJsonDepth(`{\n"a":\n${deep(200)}}`)).toThrow(/\(line 3\)/)
    expect(parseJson(`{"a": ${deep(63)}}`)).toBeTruthy()
    expect(() => parseJson('{"a": ', 'f')).toThrow(/^f: malformed JSON/)
  })
})
