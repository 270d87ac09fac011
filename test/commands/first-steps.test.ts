import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {runArgs, seedCatalog, withStore} from '../helpers/revenue-fixtures.js'
import {ROOT, run, tempStore} from '../helpers/run.js'

/** Issue 32 items 12 and 13: what a new user meets first reads right and runs. */

describe('revenue for a new user (issue 32 item 13)', () => {
  let db: string
  beforeEach(async () => {
    process.env.PRICECTL_NOW = '2026-03-01'
    db = tempStore()
    await withStore(db, seedCatalog)
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

describe('first steps (issue 32 item 12)', () => {
  afterEach(() => {
    delete process.env.PRICECTL_NOW
  })

  it('every command the demo suggests, and the README tour lines that need no file, run on the demo store', async () => {
    const db = tempStore()
    const demo = await run(db, ['demo'])
    expect(demo.code, demo.stderr).toBe(0)
    const steps = demo.stdout.split('What to try next:\n')[1].split('\n').map((l) => l.trim()).filter((l) => l.startsWith('pricectl '))
    expect(steps.length).toBeGreaterThan(3)
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const tour = readme.split('## A short tour')[1].split('```')[1].split('\n').map((l) => l.replace(/\s+#.*$/, '').trim())
    // Lines reading a file of the user's (and localize, which needs the imported factors) or writing one are not run here.
    const runnable = tour.filter((l) => l.startsWith('pricectl ') && !/[<>&|]|import|localize|--input|serve|^pricectl demo/.test(l))
    expect(runnable.length).toBeGreaterThan(10)
    for (const line of [...steps, ...runnable]) {
      const args = [...line.slice('pricectl '.length).matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3])
      const r = await run(db, args)
      expect(r.code, `${line}\n${r.stderr}`).toBe(0)
    }
  })

  it('the demo coupons are dated from today (PRICECTL_NOW): the tour SPRING25 is current; the list shows a window that has ended', async () => {
    const db = tempStore()
    process.env.PRICECTL_NOW = '2027-01-15'
    expect((await run(db, ['demo'])).code).toBe(0)
    const spring = (await run(db, ['coupons', 'get', 'SPRING25', '--json'])).json.coupon
    expect([spring.active_from, spring.active_till]).toEqual(['2027-01-01', '2027-03-31'])
    const quote = await run(db, ['price', '-u', 'carol', '-p', 'pro_monthly', '--coupon', 'pro_monthly=SPRING25', '--country', 'FR', '--json'])
    expect(quote.code, quote.stderr).toBe(0)
    expect((await run(db, ['coupons', 'list', '--name', 'spring'])).stdout).toMatch(/│ ACTIVE\s+│/)
    process.env.PRICECTL_NOW = '2027-06-01'
    const later = await run(db, ['coupons', 'list', '--name', 'spring'])
    expect(later.stdout).toContain('ACTIVE, expired 2027-03-31')
    // --json and CSV keep the stored status (the spec's field).
    expect((await run(db, ['coupons', 'list', '--name', 'spring', '--json'])).json.coupons[0].status).toBe('ACTIVE')
    expect((await run(db, ['coupons', 'list', '--name', 'spring', '--output', 'csv'])).stdout).not.toContain('expired')
    process.env.PRICECTL_NOW = '2026-12-01'
    expect((await run(db, ['coupons', 'get', 'SPRING25'])).stdout).toContain('ACTIVE, from 2027-01-01')
  })

  it('experiments results on a running experiment with no visitors does not advise starting it', async () => {
    const db = tempStore()
    expect((await run(db, ['demo'])).code).toBe(0)
    await run(db, ['experiments', 'create', '--name', 'r', '-p', 'pro_monthly', '--arm', 'x0.8', '--start'])
    const running = await run(db, ['experiments', 'results', '1'])
    expect(running.stdout).toContain('no visitors yet (it is running')
    expect(running.stdout).not.toContain('experiments start')
    await run(db, ['experiments', 'create', '--name', 'd', '-p', 'pro_yearly', '--arm', 'x0.8'])
    expect((await run(db, ['experiments', 'results', '2'])).stdout).toContain('start the experiment, then price some users: "pricectl experiments start 2"')
  })

  it('user help holds no developer text, the autocomplete topic is not the fish command, counts agree in number', async () => {
    const help = await run(undefined, ['--help'])
    expect(help.stdout).not.toContain('npm ci')
    expect(help.stdout).not.toMatch(/autocomplete\s+Print the fish completion script/)
    const db = tempStore()
    const created = await run(db, ['products', 'create', '--api-id', 'one', '--name', 'One', '--base-px', '3', '--interval', 'month', '--interval-count', '1', '--country-price', 'DE=2.99:EUR', '--integration', 'gateway_a:prod_one'])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toContain('1 country price, 1 integration')
  })
})
