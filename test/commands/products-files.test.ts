import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {dump, fileDigest} from '../helpers/dump.js'
import {run, tempStore} from '../helpers/run.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-files-'))

describe('products export / import', () => {
  it('export then import changes nothing, in JSON and in CSV', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    await run(db, ['products', 'create', '--api-id', 'formula', '--name', '=HYPERLINK("http://evil","click")', '--base-px', '1', '--interval', 'one_time', '--interval-count', '1'])
    for (const ext of ['json', 'csv']) {
      const file = join(dir, `catalog-${ext}.${ext}`)
      const e = await run(db, ['products', 'export', file, '--json'])
      expect(e.json).toEqual({count: 8, format: ext, message: `exported 8 products to ${file} (${ext})`, path: file, success: true})
      const before = dump(db)
      const digest = fileDigest(db)
      const i = await run(db, ['products', 'import', file, '--json'])
      expect(i.json).toEqual({dry_run: false, impact: expect.objectContaining({added: 0, changed: 0, changes: [], dropped: [], summary: 'no price changes'}), inserted: 0, message: expect.stringContaining('0 inserted, 0 updated, 8 unchanged'), path: file, read: 8, success: true, unchanged: 8, updated: 0})
      expect(dump(db)).toEqual(before)
      expect(fileDigest(db)).toBe(digest)
    }
    // The CSV neutralises the formula; the product keeps its name.
    expect(readFileSync(join(dir, 'catalog-csv.csv'), 'utf8')).toContain(`formula,"'=HYPERLINK(""http://evil"",""click"")"`)
  })

  it('an exported catalog imports into an empty store as the same catalog', async () => {
    const a = tempStore()
    await run(a, ['demo'])
    const file = join(dir, 'copy.csv')
    await run(a, ['products', 'export', '--output', 'csv', file])
    const b = tempStore()
    const r = await run(b, ['products', 'import', file])
    expect(r.stdout).toContain('imported 7 products from')
    expect(r.stdout).toContain('7 inserted, 0 updated, 0 unchanged')
    const listA = (await run(a, ['products', 'export', '--json'])).json.products
    const listB = (await run(b, ['products', 'export', '--json'])).json.products
    expect(listB).toEqual(listA)
  })

  it('export to stdout writes the file content; an existing FILE needs --force', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const csv = await run(db, ['products', 'export', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('api_id,name,base_px,interval,interval_count,min_px,max_px,baseline,country_prices,integrations,features,product_trials')
    const json = await run(db, ['products', 'export'])
    expect(JSON.parse(json.stdout).products).toHaveLength(7)
    const file = join(dir, 'exists.json')
    writeFileSync(file, 'keep me')
    const r = await run(db, ['products', 'export', file, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe(`${file} exists: pass --force to overwrite it`)
    expect(readFileSync(file, 'utf8')).toBe('keep me')
    expect((await run(db, ['products', 'export', file, '--force'])).code).toBe(0)
  })

  it('import lists every failing row, exits 2 and writes nothing', async () => {
    const db = tempStore()
    await run(db, ['demo'])
    const file = join(dir, 'bad.json')
    writeFileSync(file, JSON.stringify([
      {api_id: 'ok', base_px: 1, interval: 'month', interval_count: 1, name: 'Ok'},
      {api_id: 'bad1', base_px: 1, interval: 'fortnight', interval_count: 1, name: 'Bad 1'},
      {api_id: 'bad2', base_px: 1, country_prices: [{amount: 5, country: 'DE', currency: 'XXY'}], interval: 'month', interval_count: 1, name: 'Pro Monthly'},
    ]))
    const before = dump(db)
    const r = await run(db, ['products', 'import', file])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('Error: 2 of 3 rows are invalid; nothing was written:')
    expect(r.stderr).toContain('row 2 (api_id "bad1"): interval: unknown interval "fortnight"')
    expect(r.stderr).toContain('row 3 (api_id "bad2"): country_prices[0].currency: unknown currency "XXY"')
    expect(dump(db)).toEqual(before)
    // --dry-run validates and counts without writing.
    const good = join(dir, 'good.json')
    writeFileSync(good, JSON.stringify([{api_id: 'ok', base_px: 1, interval: 'month', interval_count: 1, name: 'Ok'}]))
    const dry = await run(db, ['products', 'import', good, '--dry-run', '--json'])
    expect(dry.json).toMatchObject({inserted: 1, read: 1, success: true})
    expect(dump(db)).toEqual(before)
  })

  it('import detects the format from the content when the extension says nothing', async () => {
    const db = tempStore()
    const csv = join(dir, 'noext')
    writeFileSync(csv, 'api_id,name,base_px,interval,interval_count\nx,X,2.5,week,2\n')
    expect((await run(db, ['products', 'import', csv, '--json'])).json).toMatchObject({inserted: 1})
    const json = join(dir, 'noext2')
    writeFileSync(json, '  [{"api_id":"y","name":"Y","base_px":3,"interval":"day","interval_count":1}]')
    expect((await run(db, ['products', 'import', json, '--json'])).json).toMatchObject({inserted: 1})
    const missing = await run(db, ['products', 'import', join(dir, 'missing.csv'), '--json'])
    expect(missing.code).toBe(2)
    expect(missing.json.message).toMatch(/cannot read .*missing\.csv/)
  })
})
