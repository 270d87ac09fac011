import {strToU8, zipSync} from 'fflate'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eStore} from '../helpers/e2e.js'
import {run, runBin} from '../helpers/run.js'

const dir = mkdtempSync(join(tmpdir(), 'pricectl-fx-e2e-'))

/** fx and localization imports on either adapter, in-process (test/helpers/run.ts); stdin through bin/run.js. */
describe('fx and localization end to end', () => {
  it('imports the zipped ECB history and converts with it', async () => {
    const db = await e2eStore()
    const csv = 'Date,USD,JPY,CYP,\n2026-04-13,1.1684,186.75,N/A,\n2026-04-10,1.1711,186.43,N/A,\n1999-01-04,1.1789,133.73,0.58231,\n'
    const zip = join(dir, 'eurofxref-hist.zip')
    writeFileSync(zip, zipSync({'eurofxref-hist.csv': strToU8(csv)}))
    const r = await run(db, ['fx', 'import', zip, '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({dates: {count: 3, from: '1999-01-04', to: '2026-04-13'}, format: 'ecb', rates_written: 6, rows_read: 3, skipped: {codes: ['CYP'], values: 1}})
    const eur = await run(db, ['fx', 'list', '--currency', 'EUR', '--date', '1999-12-31', '--json'])
    expect(eur.json.rates).toEqual([{currency: 'EUR', date: '1999-01-04', kind: 'import', rate: 1 / 1.1789, source: 'ECB eurofxref (eurofxref-hist.zip:eurofxref-hist.csv)', status: 'past'}])
  })

  it('reads a rate file from stdin', async () => {
    // bin/run.js: the file is the child's stdin.
    const db = await e2eStore()
    const r = runBin(db, ['fx', 'import', '-', '--date', '2031-01-01'], {input: 'currency,rate\nEUR,0.9\n'})
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('wrote 1 rate (0 unchanged) for 1 currency, date 2031-01-01, from 1 row read (csv)')
  })

  it('a bad file exits 2 with the JSON error shape', async () => {
    const db = await e2eStore()
    const bad = join(dir, 'bad.csv')
    writeFileSync(bad, 'EUR,0.9\nEURO,1\n')
    const r = await run(db, ['fx', 'import', bad, '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: expect.stringContaining('line 2: unknown currency "EURO"'), success: false})
  })

  it('imports World Bank factors and lists them', async () => {
    const db = await e2eStore()
    const wide =
      '"Data Source","World Development Indicators",\n\n"Last Updated Date","2025-10-07",\n\n' +
      '"Country Name","Country Code","Indicator Name","Indicator Code","2023","2024",\n' +
      '"Brazil","BRA","Price level ratio","PA.NUS.PPPC.RF","0.49","0.47",\n' +
      '"Low income","LIC","Price level ratio","PA.NUS.PPPC.RF","0.3","0.3",\n'
    const file = join(dir, 'API_PA.NUS.PPPC.RF_DS2_en_csv_v2.csv')
    writeFileSync(file, wide)
    // BR's factor moves its prices by about -50%: --yes without a terminal.
    const r = await run(db, ['localization', 'import', file, '--yes'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('wrote 1 factor')
    const list = await run(db, ['localization', 'list', '--json'])
    expect(list.json.factors).toEqual([{country: 'BR', factor: 0.47, source: 'World Bank PA.NUS.PPPC.RF (API_PA.NUS.PPPC.RF_DS2_en_csv_v2.csv)', year: 2024}])
  })
})
