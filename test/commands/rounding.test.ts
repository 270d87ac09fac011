import Database from 'better-sqlite3'
import {existsSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {RoundingListOutput, RoundingSetOutput, RoundingTestOutput} from '../../src/schemas/rounding.js'
import {initStore, run, runBin, tempStore} from '../helpers/run.js'


/** Rows of rounding_rules; a store that was never opened (input refused first) has none. */
function storedRules(db: string): {currency: string; rule: string}[] {
  if (!existsSync(db)) return []
  const sqlite = new Database(db, {readonly: true})
  try {
    return sqlite.prepare('SELECT currency, rule FROM rounding_rules ORDER BY currency').all() as {currency: string; rule: string}[]
  } finally {
    sqlite.close()
  }
}

const DEFAULTS = [
  {currency: '*', digits: 0, rule: '0-1000: multiple 10 nearest; 1000-100000: multiple 100 nearest; 100000+: sigfig 3 nearest', source: 'default'},
  {currency: '*', digits: 2, rule: '0-100: end .99 nearest; 100-1000: end 9.99 nearest; 1000+: end 9 nearest', source: 'default'},
  {currency: '*', digits: 3, rule: '0-10: multiple 0.050 nearest; 10-100: end .990 nearest; 100+: multiple 1 nearest', source: 'default'},
]

describe('rounding list', () => {
  it('lists the built-in defaults on a new store', async () => {
    const r = await run(await initStore(), ['rounding', 'list', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({message: '0 stored rules; other currencies use the default for their minor digits', rules: DEFAULTS, success: true})
  })

  it('prints a table, or CSV', async () => {
    const db = await initStore()
    const table = await run(db, ['rounding', 'list'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/currency\s*│\s*digits\s*│\s*source\s*│\s*rule/)
    expect(table.stdout).toContain('0-100: end .99 nearest')
    const csv = await run(db, ['rounding', 'list', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('currency,digits,source,rule')
    expect(csv.stdout).toContain('*,2,default,0-100: end .99 nearest; 100-1000: end 9.99 nearest; 1000+: end 9 nearest')
  })
})

describe('rounding set', () => {
  it('stores a validated rule in canonical form and lists it before the defaults', async () => {
    const db = tempStore()
    const r = await run(db, ['rounding', 'set', 'eur', '<10: ending .49,.99 up; *: end 9.99 nearest', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      currency: 'EUR',
      dry_run: false,
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: 'EUR rounding rule set: 0-10: end .49,.99 up; 10+: end 9.99 nearest',
      rule: '0-10: end .49,.99 up; 10+: end 9.99 nearest',
      source: 'store',
      success: true,
    })
    const list = await run(db, ['rounding', 'list', '--json'])
    expect(list.json.rules).toEqual([{currency: 'EUR', digits: 2, rule: '0-10: end .49,.99 up; 10+: end 9.99 nearest', source: 'store'}, ...DEFAULTS])
    const plain = await run(db, ['rounding', 'set', 'JPY', '0+: multiple 100 up'])
    expect(plain.stdout).toBe('JPY rounding rule set: 0+: multiple 100 up\n')
    expect(storedRules(db).map((x) => x.currency)).toEqual(['EUR', 'JPY'])
  })

  it('refuses a bad rule with exit 2, naming the token and position, and stores nothing', async () => {
    const db = tempStore()
    const r = await run(db, ['rounding', 'set', 'USD', '0-10: end .99 upward; 10+: keep', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain('position 15: unexpected "upward": expected a direction: up, down or nearest')
    const text = await run(db, ['rounding', 'set', 'JPY', '0+: end .99 up'])
    expect(text.code).toBe(2)
    expect(text.stderr).toContain('ending .99 has 2 decimals but JPY has 0')
    expect(storedRules(db)).toEqual([])
  })

  it('prints the whole message of an overlapping range, quoted values and all (issue 29 item 7)', async () => {
    const db = tempStore()
    const r = await run(db, ['rounding', 'set', 'EUR', '0-10: end .99 up; 5+: keep', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toBe(
      'invalid rounding rule: rule: invalid rounding rule "0-10: end .99 up; 5+: keep": position 19: range starts at 5 but the previous range ends at 10: ranges must be contiguous (see "pricectl rounding set --help")',
    )
    const text = await run(db, ['rounding', 'set', 'EUR', '0-10: end .99 up; 5+: keep'])
    expect(text.stderr).toContain('ranges must be contiguous (see "pricectl rounding set --help")')
    expect(text.stderr).not.toContain('characters)')
    expect(storedRules(db)).toEqual([])
  })

  it('refuses an unknown currency with exit 2', async () => {
    const db = tempStore()
    const r = await run(db, ['rounding', 'set', 'XYZ', '0+: keep', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain('currency: unknown currency "XYZ"')
    expect(storedRules(db)).toEqual([])
  })

  it('drops back to the default with --default', async () => {
    const db = tempStore()
    await run(db, ['rounding', 'set', 'JPY', '0+: multiple 100 up'])
    const r = await run(db, ['rounding', 'set', 'JPY', '--default', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      currency: 'JPY',
      dry_run: false,
      impact: {added: 0, changed: 0, changes: [], compared: 0, countries: 0, dropped: [], largest: null, products: 0, summary: 'no price changes'},
      message: 'JPY uses the default rule again: 0-1000: multiple 10 nearest; 1000-100000: multiple 100 nearest; 100000+: sigfig 3 nearest',
      rule: '0-1000: multiple 10 nearest; 1000-100000: multiple 100 nearest; 100000+: sigfig 3 nearest',
      source: 'default',
      success: true,
    })
    expect(storedRules(db)).toEqual([])
    const again = await run(db, ['rounding', 'set', 'JPY', '--default'])
    expect(again.stdout).toContain('JPY had no stored rule')
  })

  it('wants RULE or --default, not both and not neither', async () => {
    const db = tempStore()
    const both = await run(db, ['rounding', 'set', 'USD', '0+: keep', '--default', '--json'])
    expect(both.code).toBe(2)
    expect(both.json.message).toContain('give either RULE or --default, not both')
    const neither = await run(db, ['rounding', 'set', 'USD', '--json'])
    expect(neither.code).toBe(2)
    expect(neither.json.message).toBe('missing required flag: RULE (or --default) (or pass --body FILE)')
    expect(storedRules(db)).toEqual([])
  })

  it('reads {currency, rule} from --body, flags override it', async () => {
    const db = tempStore()
    const body = join(dirname(db), 'rule.json')
    writeFileSync(body, JSON.stringify({currency: 'GBP', rule: '0+: end .99 up'}))
    const r = await run(db, ['rounding', 'set', '--body', body, '--json'])
    expect(r.json).toMatchObject({currency: 'GBP', rule: '0+: end .99 up', success: true})
    const over = await run(db, ['rounding', 'set', 'CHF', '--body', body, '--json'])
    expect(over.json).toMatchObject({currency: 'CHF', rule: '0+: end .99 up'})
  })
})

describe('rounding test', () => {
  it('shows amount -> rounded with the range and action, using the default rule', async () => {
    const r = await run(await initStore(), ['rounding', 'test', 'EUR', '0.20', '9.37', '9.5', '123.45', '1234.56', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({
      currency: 'EUR',
      message: 'EUR: 0-100: end .99 nearest; 100-1000: end 9.99 nearest; 1000+: end 9 nearest (built-in default)',
      results: [
        {action: 'end .99 nearest', amount: 0.2, range: '0-100', rounded: 0.99},
        {action: 'end .99 nearest', amount: 9.37, range: '0-100', rounded: 8.99},
        {action: 'end .99 nearest', amount: 9.5, range: '0-100', rounded: 9.99},
        {action: 'end 9.99 nearest', amount: 123.45, range: '100-1000', rounded: 119.99},
        {action: 'end 9 nearest', amount: 1234.56, range: '1000+', rounded: 1239},
      ],
      rule: '0-100: end .99 nearest; 100-1000: end 9.99 nearest; 1000+: end 9 nearest',
      source: 'default',
      success: true,
    })
  })

  it('uses the stored rule, or --rule without saving it', async () => {
    const db = tempStore()
    await run(db, ['rounding', 'set', 'JPY', '0+: multiple 100 up'])
    const stored = await run(db, ['rounding', 'test', 'JPY', '1201', '--json'])
    expect(stored.json).toMatchObject({results: [{amount: 1201, rounded: 1300}], source: 'store'})
    const tried = await run(db, ['rounding', 'test', 'JPY', '1201', '1234', '--rule', '0+: end 80 down', '--json'])
    expect(tried.json).toMatchObject({
      results: [
        {action: 'end 80 down', amount: 1201, range: '0+', rounded: 1180},
        {amount: 1234, rounded: 1180},
      ],
      rule: '0+: end 80 down',
      source: 'flag',
    })
    expect(storedRules(db)).toEqual([{currency: 'JPY', rule: '0+: multiple 100 up'}])
  })

  it('keeps every minor digit exact: KWD has three', async () => {
    const r = await run(await initStore(), ['rounding', 'test', 'KWD', '3.07', '4.5', '12.345', '--json'])
    expect(r.json.results.map((x: {rounded: number}) => x.rounded)).toEqual([3.05, 4.5, 11.99])
  })

  it('prints a table with every minor digit', async () => {
    const r = await run(await initStore(), ['rounding', 'test', 'USD', '9.5'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/amount\s*│\s*rounded\s*│\s*range\s*│\s*action/)
    expect(r.stdout).toMatch(/9\.50\s*│\s*9\.99\s*│\s*0-100\s*│\s*end \.99 nearest/)
  })

  it('refuses bad amounts and bad rules with exit 2', async () => {
    const db = await initStore()
    const word = await run(db, ['rounding', 'test', 'USD', '9.99', 'abc', '--json'])
    expect(word.code).toBe(2)
    expect(word.json.message).toContain('amount "abc" is not a non-negative number')
    const decimals = await run(db, ['rounding', 'test', 'JPY', '9.5', '--json'])
    expect(decimals.code).toBe(2)
    expect(decimals.json.message).toBe('amount: 9.5 has more decimals than JPY allows (0)')
    const rule = await run(db, ['rounding', 'test', 'USD', '9', '--rule', '0-10: end .99 up', '--json'])
    expect(rule.code).toBe(2)
    expect(rule.json.message).toContain('the last range must be open-ended')
    const none = await run(db, ['rounding', 'test', 'USD', '--json'])
    expect(none.code).toBe(2)
  })
})

describe('rounding --json matches the declared output schemas', () => {
  it('list, set and test print exactly their outputSchema fields', async () => {
    const db = tempStore()
    const set = await run(db, ['rounding', 'set', 'USD', '0+: end .99 up', '--json'])
    const list = await run(db, ['rounding', 'list', '--json'])
    const test = await run(db, ['rounding', 'test', 'USD', '1', '--json'])
    // parse() drops unknown fields: equality means nothing undeclared was printed.
    expect(RoundingSetOutput.parse(set.json)).toEqual(set.json)
    expect(RoundingListOutput.parse(list.json)).toEqual(list.json)
    expect(RoundingTestOutput.parse(test.json)).toEqual(test.json)
  })
})

describe('rounding end to end (bin/run.js)', () => {
  it('sets, tests and lists a rule', () => {
    const db = tempStore()
    const set = runBin(db, ['rounding', 'set', 'EUR', '0-10: end .49,.99 up; 10+: end 9 nearest'])
    expect(set.code).toBe(0)
    expect(set.stdout).toBe('EUR rounding rule set: 0-10: end .49,.99 up; 10+: end 9 nearest\n')
    const test = runBin(db, ['rounding', 'test', 'EUR', '1.10', '23.40', '--json'])
    expect(test.code).toBe(0)
    expect(test.json.results.map((x: {rounded: number}) => x.rounded)).toEqual([1.49, 19])
    const list = runBin(db, ['rounding', 'list', '--json'])
    expect(list.json.rules[0]).toEqual({currency: 'EUR', digits: 2, rule: '0-10: end .49,.99 up; 10+: end 9 nearest', source: 'store'})
  })

  it('exits 2 with the position of a bad token on stderr', () => {
    const r = runBin(tempStore(), ['rounding', 'set', 'EUR', '0-10: end .99 sideways; 10+: keep'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('position 15: unexpected "sideways"')
  })
})
