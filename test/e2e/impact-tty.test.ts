import {describe, expect, it} from 'vitest'

import {e2eSeeded} from '../helpers/e2e.js'
import {run, runBin} from '../helpers/run.js'
import {onTerminal} from '../helpers/terminal.js'

/**
 * Setup and read-backs run in-process; the command on the terminal (or without one) is a
 * process. The store with the product is made once and copied (test/helpers/e2e.ts e2eSeeded).
 */
const storeWithProduct = () =>
  e2eSeeded('product pro', async (db) => {
    expect((await run(db, ['products', 'create', '--api-id', 'pro', '--name', 'Pro', '--base-px', '9.99', '--interval', 'month', '--interval-count', '1'])).code).toBe(0)
  })

const EUR_RULE = '0+: end .49 nearest'
const storedEur = async (db: string) => ((await run(db, ['rounding', 'list', '--json'])).json.rules.some((r: {currency: string; source: string}) => r.currency === 'EUR' && r.source === 'store') ? 'store' : 'default')

describe('a change of many prices asks on a terminal', () => {
  it('shows the summary and writes nothing when not confirmed', async () => {
    const db = await storeWithProduct()
    const r = await onTerminal(['rounding', 'set', 'EUR', EUR_RULE, '--db', db], [{after: 'Apply this change', text: 'n'}])
    expect(r.output).toMatch(/price impact: largest moves [^;]+; \d+ prices change in 1 product x \d+ countries/)
    expect(r.output).toMatch(/Apply this change \(\d+ prices change(, \d+ by more than 25%)?\)\?/)
    expect(r.output).toContain('not confirmed: nothing written')
    expect(r.code).toBe(1)
    expect(await storedEur(db)).toBe('default')
  })

  it('writes when confirmed; --yes does not ask', async () => {
    const db = await storeWithProduct()
    const r = await onTerminal(['rounding', 'set', 'EUR', EUR_RULE, '--db', db], [{after: 'Apply this change', text: 'y'}])
    expect(r.output).toContain('Apply this change')
    expect(r.code).toBe(0)
    expect(await storedEur(db)).toBe('store')
    const yes = await onTerminal(['rounding', 'set', 'EUR', '0+: end .99 nearest', '--yes', '--db', db], [])
    expect(yes.output).not.toContain('Apply this change')
    expect(yes.code).toBe(0)
  })

  it('a change of a handful of prices does not ask; without a terminal nothing asks', async () => {
    const db = await storeWithProduct()
    const few = await onTerminal(['localization', 'set', 'FR', '0.8', '--db', db], [])
    expect(few.output).not.toContain('Apply this change')
    expect(few.output).toMatch(/price impact: largest move -\d+(\.\d+)?% FR pro; 1 price changes in 1 product x 1 country/)
    expect(few.code).toBe(0)
    const many = runBin(db, ['rounding', 'set', 'EUR', EUR_RULE])
    expect(many.code).toBe(0)
    expect(many.stderr).toMatch(/price impact: largest moves [^;]+; \d+ prices change/)
  })
})
