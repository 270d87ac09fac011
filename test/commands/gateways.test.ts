import Database from 'better-sqlite3'
import {existsSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {GatewaysListOutput, GatewaysSetOutput} from '../../src/schemas/gateways.js'
import {run, runBin, tempStore} from '../helpers/run.js'

function storedGateways(db: string): unknown[] {
  if (!existsSync(db)) return []
  const sqlite = new Database(db, {readonly: true})
  try {
    return sqlite.prepare('SELECT * FROM gateways ORDER BY gateway').all()
  } finally {
    sqlite.close()
  }
}

const DEFAULTS = [
  {accepted_currencies: ['*'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_a', source: 'default'},
  {accepted_currencies: ['*'], amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_b', source: 'default'},
  {accepted_currencies: ['*'], amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_c', source: 'default'},
  {accepted_currencies: ['*'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_d', source: 'default'},
]

describe('gateways list', () => {
  it('shows the defaults of all four gateways', async () => {
    const r = await run(tempStore(), ['gateways', 'list', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({gateways: DEFAULTS, message: '4 gateways (0 configured, 4 on defaults)', success: true})
  })

  it('prints a table and CSV', async () => {
    const db = tempStore()
    const t = await run(db, ['gateways', 'list'])
    expect(t.stdout).toMatch(/gateway\s*│\s*accepted currencies\s*│\s*fallback\s*│\s*amount format\s*│\s*source/)
    expect(t.stdout).toMatch(/gateway_b\s*│\s*\*\s*│\s*USD\s*│\s*decimal\s*│\s*default/)
    const c = await run(db, ['gateways', 'list', '--output', 'csv'])
    expect(c.stdout).toBe(
      'gateway,accepted currencies,fallback,amount format,source\ngateway_a,*,USD,minor,default\ngateway_b,*,USD,decimal,default\ngateway_c,*,USD,decimal,default\ngateway_d,*,USD,minor,default\n',
    )
  })
})

describe('gateways set', () => {
  it('stores accepted currencies, fallback and amount format; unset fields keep their value', async () => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'set', 'gateway_b', '--accept', 'eur,USD,GBP', '--amount-format', 'minor', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      gateway: {accepted_currencies: ['EUR', 'USD', 'GBP'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_b', source: 'store'},
      message: 'gateway_b: accepts EUR,USD,GBP, falls back to USD, minor amounts',
      success: true,
    })
    const fallback = await run(db, ['gateways', 'set', 'gateway_b', '--fallback', 'EUR', '--json'])
    expect(fallback.json.gateway).toMatchObject({accepted_currencies: ['EUR', 'USD', 'GBP'], amount_format: 'minor', fallback_currency: 'EUR'})
    const list = await run(db, ['gateways', 'list', '--json'])
    expect(list.json.gateways[1]).toEqual({accepted_currencies: ['EUR', 'USD', 'GBP'], amount_format: 'minor', fallback_currency: 'EUR', gateway: 'gateway_b', source: 'store'})
    expect(list.json.message).toBe('4 gateways (1 configured, 3 on defaults)')
  })

  it("accepts '*' for any currency", async () => {
    const db = tempStore()
    await run(db, ['gateways', 'set', 'gateway_c', '--accept', 'EUR,USD'])
    const r = await run(db, ['gateways', 'set', 'gateway_c', '--accept', '*', '--json'])
    expect(r.json.gateway.accepted_currencies).toEqual(['*'])
    expect(storedGateways(db)).toEqual([{accepted_currencies: '*', amount_format: 'decimal', fallback_currency: 'USD', gateway: 'gateway_c'}])
  })

  it('drops back to the defaults with --default', async () => {
    const db = tempStore()
    await run(db, ['gateways', 'set', 'gateway_a', '--amount-format', 'decimal'])
    const r = await run(db, ['gateways', 'set', 'gateway_a', '--default', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.gateway).toEqual(DEFAULTS[0])
    expect(storedGateways(db)).toEqual([])
  })

  it('reads the settings from --body', async () => {
    const db = tempStore()
    const body = join(dirname(db), 'gateway.json')
    writeFileSync(body, JSON.stringify({accepted_currencies: ['JPY', 'USD'], amount_format: 'minor', fallback_currency: 'USD'}))
    const r = await run(db, ['gateways', 'set', 'gateway_d', '--body', body, '--fallback', 'JPY', '--json'])
    expect(r.json.gateway).toEqual({accepted_currencies: ['JPY', 'USD'], amount_format: 'minor', fallback_currency: 'JPY', gateway: 'gateway_d', source: 'store'})
  })

  it.each([
    [['gateway_x', '--accept', 'EUR'], 'unknown gateway "gateway_x" (expected one of gateway_a, gateway_b, gateway_c, gateway_d)'],
    [['gateway_a', '--accept', 'EUR'], 'fallback_currency: USD is not among the accepted currencies EUR: add it to --accept or pick another --fallback'],
    [['gateway_a', '--accept', 'EUR,EURO'], 'accepted_currencies[1]: unknown currency "EURO"'],
    [['gateway_a', '--fallback', 'ZZZ'], 'fallback_currency: unknown currency "ZZZ"'],
    [['gateway_a', '--amount-format', 'cents'], 'amount_format: unknown amount format "cents" (expected minor or decimal)'],
    [['gateway_a'], 'nothing to set for gateway_a: pass --accept, --fallback or --amount-format (or --default)'],
    [['gateway_a', '--default', '--accept', 'EUR'], '--default drops every setting of gateway_a; do not combine it with accepted_currencies'],
  ])('refuses %j with exit 2 and writes nothing', async (args, message) => {
    const db = tempStore()
    const r = await run(db, ['gateways', 'set', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain(message)
    expect(storedGateways(db)).toEqual([])
  })
})

describe('gateways --json matches the declared output schemas', () => {
  it('list and set print exactly their outputSchema fields', async () => {
    const db = tempStore()
    const set = await run(db, ['gateways', 'set', 'gateway_a', '--accept', 'USD', '--json'])
    const list = await run(db, ['gateways', 'list', '--json'])
    // parse() drops unknown fields: equality means nothing undeclared was printed.
    expect(GatewaysSetOutput.parse(set.json)).toEqual(set.json)
    expect(GatewaysListOutput.parse(list.json)).toEqual(list.json)
  })
})

describe('gateways end to end (bin/run.js)', () => {
  it('sets and lists', () => {
    const db = tempStore()
    const set = runBin(db, ['gateways', 'set', 'gateway_b', '--accept', 'EUR,USD', '--amount-format', 'minor'])
    expect(set.code).toBe(0)
    expect(set.stdout).toBe('gateway_b: accepts EUR,USD, falls back to USD, minor amounts\n')
    const list = runBin(db, ['gateways', 'list', '--json'])
    expect(list.json.gateways[1]).toEqual({accepted_currencies: ['EUR', 'USD'], amount_format: 'minor', fallback_currency: 'USD', gateway: 'gateway_b', source: 'store'})
    const bad = runBin(db, ['gateways', 'set', 'gateway_b', '--fallback', 'JPY'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('JPY is not among the accepted currencies EUR,USD')
  })
})
