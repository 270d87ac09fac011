import {describe, expect, it} from 'vitest'

import {e2eSeeded} from '../helpers/e2e.js'
import {run, runBin} from '../helpers/run.js'
import {onTerminal} from '../helpers/terminal.js'

const env = {PRICECTL_NOW: '2026-04-20'}

describe('revenue report: the MRR trend chart is for terminals only', () => {
  it('draws it on a terminal, never when piped or with --json', async () => {
    // The subscriptions are written by the commands once, on SQLite, and copied (test/helpers/e2e.ts e2eSeeded).
    const db = await e2eSeeded('three subscriptions', async (file) => {
      expect((await run(file, ['products', 'create', '--api-id', 'pro', '--name', 'Pro', '--base-px', '10', '--interval', 'month', '--interval-count', '1'])).code).toBe(0)
      const subs: [string, string, string][] = [
        ['s1', '100', '2026-01-10'],
        ['s2', '50', '2026-02-10'],
        ['s3', '80', '2026-03-10'],
      ]
      for (const [id, amount, created] of subs) {
        const r = await run(file, ['subscriptions', 'create', '--user-id', id, '--origin', 'gateway_b', '--origin-id', id, '--product', 'pro', '--amount', amount, '--currency', 'USD', '--created', created, '--status', 'active'])
        expect(r.code, r.stderr).toBe(0)
      }
    })
    const window = ['--since', '2026-01-01', '--until', '2026-04-30', '--db', db]
    const tty = await onTerminal(['revenue', 'report', ...window], [], {env})
    expect(tty.code, tty.output).toBe(0)
    expect(tty.output).toContain('MRR trend (USD), 2026-01 .. 2026-04')
    expect(tty.output).toMatch(/\$230\.00 ┤/) // the axis in formatted currency, up to the last MRR
    expect(tty.output).toMatch(/[╭╯─]/)
    expect(tty.output).toMatch(/\n +2026-01 +2026-02 +2026-03 +2026-04\r?\n/) // the periods under the line
    const piped = runBin(db, ['revenue', 'report', ...window.slice(0, 4)])
    expect(piped.code).toBe(0)
    expect(piped.stdout).toContain('MRR movements')
    expect(piped.stdout).not.toContain('MRR trend')
    const json = await onTerminal(['revenue', 'report', ...window, '--json'], [], {env})
    expect(json.output).not.toContain('MRR trend')
    expect(JSON.parse(json.output.replaceAll('\r', '')).totals.mrr).toBe(230)
  })
})
