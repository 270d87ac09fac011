import {describe, expect, it} from 'vitest'

import {createProducts} from '../helpers/catalog.js'
import {e2eSeeded} from '../helpers/e2e.js'
import {run} from '../helpers/run.js'
import {onTerminal} from '../helpers/terminal.js'

describe('experiments conclude on a terminal', () => {
  it('shows the impact of more than a handful of price changes and asks first; "no" writes nothing, "yes" concludes', async () => {
    const countries = [['DE', 9, 'EUR'], ['FR', 9, 'EUR'], ['IT', 9, 'EUR'], ['ES', 9, 'EUR'], ['GB', 8, 'GBP'], ['JP', 1500, 'JPY']] as const
    // The setup, made on SQLite and copied (test/helpers/e2e.ts e2eSeeded): the conclusions on a terminal are the test.
    const db = await e2eSeeded('running experiment', async (file) => {
      await createProducts(file, [
        {api_id: 'pro', base_px: 10, country_prices: countries.map(([country, amount, currency]) => ({amount, country, currency})), interval: 'month', interval_count: 1, name: 'Pro'},
      ])
      expect((await run(file, ['experiments', 'create', '--name', 'cheap', '-p', 'pro', '--arm', 'x0.8', '--start'])).code).toBe(0)
    })
    const no = await onTerminal(['experiments', 'conclude', '1', '1', '--db', db], [{after: 'Apply this change', text: 'n'}])
    // The shared impact table (products x countries) comes before the question.
    // Largest moves first: the rows shown are the countries whose price moves most.
    expect(no.output).toMatch(/│ pro\s+│ [A-Z]{2}\s+│ default/)
    expect(no.output).toMatch(/Apply this change \(\d+ prices change(, \d+ by more than 25%)?\)\?/)
    expect(no.output).toContain('not confirmed: nothing written')
    expect(no.code).toBe(1)
    expect((await run(db, ['experiments', 'show', '1', '--json'])).json.experiment.status).toBe('running')
    const yes = await onTerminal(['experiments', 'conclude', '1', '1', '--db', db], [{after: 'Apply this change', text: 'y'}])
    expect(yes.code, yes.output).toBe(0)
    expect(yes.output).toContain('concluded experiment 1 "cheap" with arm 1 (x0.8): stopped it; 7 of 7 prices change')
    expect((await run(db, ['products', 'get', 'pro', '--json'])).json.base_px).toBe(7.99)
  }, 60_000)
})
