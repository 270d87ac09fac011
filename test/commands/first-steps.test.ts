import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {runArgs, seedCatalog, withStore} from '../helpers/revenue-fixtures.js'
import {tempStore} from '../helpers/run.js'

/** Issue 32 items 12 and 13: what a new user meets first reads right and runs. */

describe('revenue for a new user (issue 32 item 13)', () => {
  let db: string
  beforeEach(() => {
    process.env.PRICECTL_NOW = '2026-03-01'
    db = tempStore()
    withStore(db, seedCatalog)
  })
  afterEach(() => {
    delete process.env.PRICECTL_NOW
  })
  const ok = async (args: string[]) => {
    const r = await runArgs(db, args)
    expect(r.code, r.stderr).toBe(0)
    return r
  }

  it('the summary line formats money as the tables do, exactly', async () => {
    for (const [user, id] of [['u1', 's1'], ['u2', 's2']]) {
      await ok(['subscriptions', 'create', '--user-id', user, '--origin', 'gateway_a', '--origin-id', id, '--product', 'pro_monthly', '--amount', '5307176.75', '--currency', 'USD', '--created', '2026-01-10T08:30:00Z', '--status', 'active', '--event-timestamp', '2026-01-10T08:30:05Z'])
    }
    const r = await ok(['revenue', 'report'])
    expect(r.stdout).toContain('│ $10,614,353.50')
    expect(r.stdout).toContain('by month: MRR $10,614,353.50, 2 active subscriptions, net charge revenue $0.00')
    expect(r.stdout).not.toContain('10614353.5')
    // A store with subscriptions gets no note.
    expect(r.stderr).not.toContain('no subscriptions')
  })

  it('a store with charges only says MRR and cohorts come from subscriptions (stderr; not with --json)', async () => {
    await ok(['charges', 'create', '--user-id', 'u1', '--origin', 'gateway_a', '--origin-id', 'c1', '--product', 'lifetime', '--amount', '199', '--currency', 'USD', '--created', '2026-02-01', '--status', 'succeeded'])
    const note = 'note: this store holds charges and no subscriptions: MRR, subscription counts and cohorts come from subscriptions only'
    for (const args of [['revenue', 'report'], ['revenue', 'cohorts'], ['revenue', 'report', '--output', 'csv']]) {
      const r = await ok(args)
      expect(r.stderr, args.join(' ')).toContain(note)
      expect(r.stdout).not.toContain(note)
    }
    for (const args of [['revenue', 'report', '--json'], ['revenue', 'cohorts', '--json']]) expect((await ok(args)).stderr).toBe('')
  })
})
