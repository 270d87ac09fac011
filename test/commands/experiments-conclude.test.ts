import {beforeEach, describe, expect, it} from 'vitest'

import {dump} from '../helpers/dump.js'
import {experimentStore, insertSubscription, withDb} from '../helpers/experiment-fixtures.js'
import {run, tempStore} from '../helpers/run.js'

describe('experiments results (labels, verdict, minimum sample)', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
    await run(db, ['experiments', 'create', '--name', 'labels', '-p', 'pro_monthly', '--arm', 'x0.8', '--arm', 'usd:12.99', '--allocation', 'uniform', '--seed', '4', '--start'])
  })

  it('labels each arm with its price, says "no winner yet" before data, and warns on stderr below the minimum sample', async () => {
    const r = await run(db, ['experiments', 'results', '1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('x0.8 (-20%): e.g. pro_monthly 7.99 USD (-20.1%) in US')
    expect(r.stdout).toContain('12.99 USD (+29.9%)')
    expect(r.stdout).toContain('no winner yet: no visitors yet')
    expect(r.stderr).toContain('Warning: experiment 1: below the minimum sample of 100 visitors and 10 conversions per arm')
    expect(r.stdout).not.toContain('Warning')
  })

  it('--json: best_arm null with visitors but no conversion, the sample block, and the warning on stderr', async () => {
    for (let i = 0; i < 6; i++) await run(db, ['price', '-u', `v${i}`, '-p', 'pro_monthly', '--country', 'US', '--json'])
    const r = await run(db, ['experiments', 'results', '1', '--json'])
    expect(r.json).toMatchObject({best_arm: null, conversions: 0, sample: {enough: false, min_conversions: 10, min_visitors: 100}, success: true, visitors: 6})
    expect(r.json.sample.warning).toContain('below the minimum sample')
    expect(r.json.arms.map((a: {label: string}) => a.label)[0]).toBe('control price: pro_monthly 10 USD in US')
    expect(r.stderr).toContain('below the minimum sample')
    const human = await run(db, ['experiments', 'results', '1'])
    expect(human.stdout).toContain('no winner yet: no conversions recorded')
    // One sale makes a leader, still below the minimum sample.
    const buyer = withDb(db, (d) => (d.prepare("SELECT user_id FROM exposures WHERE arm_id = '1' LIMIT 1").get() as {user_id: string} | undefined)?.user_id)
    expect(buyer).toBeDefined()
    withDb(db, (d) => insertSubscription(d, {amount_usd: 7.99, product: 'pro_monthly', user_id: buyer!}))
    const after = await run(db, ['experiments', 'results', '1'])
    expect(after.stdout).toMatch(/best so far: arm 1 .*below the minimum sample \(100 visitors, 10 conversions per arm\): not a winner yet/)
  })
})

describe('experiments conclude', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
    await run(db, ['experiments', 'create', '--name', 'cheaper', '-p', 'pro_monthly', '--arm', 'x0.8', '--seed', '4', '--start'])
  })

  it('--dry-run prints the price impact per product x country and writes nothing', async () => {
    const before = dump(db)
    const r = await run(db, ['experiments', 'conclude', '1', '1', '--dry-run'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('~ pro_monthly US: 10 -> 7.99 USD (-20.1%)')
    expect(r.stdout).toMatch(/~ pro_monthly DE: 9 -> \d+(\.\d+)? EUR \(-\d+(\.\d+)?%\)/)
    expect(r.stdout).toContain('would conclude experiment 1 "cheaper" with arm 1 (x0.8): would stop it; 2 of')
    expect(r.stdout).toContain('(dry run: nothing written)')
    expect(dump(db)).toEqual(before)
  })

  it('stops the experiment and applies the arm\'s prices; --json gives the impact as data', async () => {
    // The arm moves prices beyond --max-change-pct: --yes without a terminal.
    const r = await run(db, ['experiments', 'conclude', '1', '1', '--yes', '--json'])
    expect(r.code, r.stdout).toBe(0)
    expect(r.json).toMatchObject({arm_id: 1, dry_run: false, experiment: {id: 1, status: 'stopped'}, stopped: true, success: true})
    expect(r.json.changes).toContainEqual({
      after: 7.99,
      audience: 'default',
      before: 10,
      change: 'changed',
      country: 'US',
      currency_after: 'USD',
      currency_before: 'USD',
      pct_change: -20.1,
      product: 'pro_monthly',
    })
    expect(r.json.products[0]).toMatchObject({base_px_after: 7.99, base_px_before: 10, product: 'pro_monthly'})
    const q = await run(db, ['price', '-u', 'new', '-p', 'pro_monthly', '--country', 'US', '--json'])
    expect(q.json.products.pro_monthly.price).toBe(7.99)
    expect(q.json.variants.experiment_id).toBe(0)
  })

  it.each([
    [['1', 'nope'], 2, 'experiment 1 has no arm "nope": its arms are baseline (control price), 1 (x0.8)'],
    [['x', '1'], 2, 'experiment id must be a whole number from 1'],
    [['9', '1'], 1, 'no experiment 9'],
  ])('refuses %j with exit %i and writes nothing', async (args, code, message) => {
    const before = dump(db)
    const r = await run(db, ['experiments', 'conclude', ...args, '--json'])
    expect(r.code).toBe(code)
    expect(r.json).toMatchObject({success: false})
    expect(r.json.message).toContain(message)
    expect(dump(db)).toEqual(before)
  })

  it('--max-changes N (the shared price-impact flags): more changed prices than N is refused with exit 1 and nothing written; N proceeds', async () => {
    const dry = await run(db, ['experiments', 'conclude', '1', '1', '--dry-run', '--json'])
    expect(dry.json).toMatchObject({dry_run: true, stopped: true})
    const n = dry.json.impact.changed as number
    expect(n).toBeGreaterThanOrEqual(2)
    const before = dump(db)
    // --yes does not lift --max-changes.
    const r = await run(db, ['experiments', 'conclude', '1', '1', '--max-changes', String(n - 1), '--yes', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.message).toContain(`${n} prices would change, more than --max-changes ${n - 1}: nothing written`)
    expect(dump(db)).toEqual(before)
    const ok = await run(db, ['experiments', 'conclude', '1', '1', '--max-changes', String(n), '--yes', '--json'])
    expect(ok.code).toBe(0)
    expect(ok.json.impact.changed).toBe(n)
    expect(ok.json.changes).toHaveLength(2)
  })

  it('refuses a draft (exit 2) and a second conclusion (exit 1)', async () => {
    await run(db, ['experiments', 'create', '--name', 'draft', '-p', 'team_monthly', '--arm', 'x0.8'])
    const draft = await run(db, ['experiments', 'conclude', '2', '1'])
    expect(draft.code).toBe(2)
    expect(draft.stderr).toContain('experiment 2 is a draft')
    expect((await run(db, ['experiments', 'conclude', '1', 'baseline'])).code).toBe(0)
    const again = await run(db, ['experiments', 'conclude', '1', '1'])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('experiment 1 was already concluded with arm baseline')
  })
})

describe('price preview --experiment / --arm / --audience (x arms, x audiences)', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
    await run(db, ['experiments', 'create', '--name', 'two arms', '-p', 'pro_monthly', '--arm', 'x0.8', '--arm', 'usd:12.99', '--seed', '4'])
    await run(db, ['audiences', 'create', '--api-id', 'students', '--name', 'Students', '--priority', '5', '--rule', 'feature student eq 1', '--price', 'pro_monthly=x0.5'])
  })

  it('prices every arm of a draft without writing: a row per arm, the arm named, the experiment layer', async () => {
    const before = dump(db)
    const r = await run(db, ['price', 'preview', '--experiment', '1', '--country', 'US', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.rows.map((x: {arm: unknown; layer: string; price: number}) => [x.arm, x.price, x.layer])).toEqual([
      [1, 7.99, 'experiment'],
      [2, 12.99, 'experiment'],
      ['baseline', 10, 'base'],
    ])
    const one = await run(db, ['price', 'preview', '--experiment', '1', '--arm', '2', '--country', 'US'])
    expect(one.stdout).toMatch(/│ pro_monthly │ US\s+│ default\s+│ 2\s+│ USD\s+│ 12\.99/)
    expect(dump(db)).toEqual(before)
  })

  it('prices as each audience with --audience all, and refuses unknown arms and audiences (exit 2)', async () => {
    const r = await run(db, ['price', 'preview', '-p', 'pro_monthly', '--audience', 'all', '--country', 'US', '--json'])
    expect(r.json.rows.map((x: {audience: string; price: number}) => [x.audience, x.price])).toEqual([
      ['default', 10],
      ['students', 4.99],
    ])
    const arm = await run(db, ['price', 'preview', '--experiment', '1', '--arm', '9', '--json'])
    expect(arm.code).toBe(2)
    expect(arm.json.message).toContain('experiment 1 has no arm "9" (its arms: baseline, 1, 2; or "all")')
    const noExp = await run(db, ['price', 'preview', '--arm', '1', '--json'])
    expect(noExp.code).toBe(2)
    expect(noExp.json.message).toContain('add --experiment ID')
    const aud = await run(db, ['price', 'preview', '--audience', 'teachers', '--json'])
    expect(aud.code).toBe(1)
    expect(aud.json.message).toContain('unknown audience "teachers" (known: students, default')
  })

  it('a snapshot of arms compares arm by arm with --against', async () => {
    const file = `${db}.arms.json`
    const snap = await run(db, ['price', 'preview', '--experiment', '1', '--country', 'US', '--output', 'json'])
    const {writeFileSync} = await import('node:fs')
    writeFileSync(file, snap.stdout)
    expect((await run(db, ['price', 'preview', '--experiment', '1', '--country', 'US', '--against', file])).code).toBe(0)
    await run(db, ['products', 'update', 'pro_monthly', '--base-px', '11'])
    const moved = await run(db, ['price', 'preview', '--experiment', '1', '--country', 'US', '--against', file])
    expect(moved.code).toBe(1)
    expect(moved.stdout).toContain('~ pro_monthly US arm baseline: 10 -> 11 USD (+10%)')
    // The USD-price arm does not depend on base_px: unchanged, not listed.
    expect(moved.stdout).not.toContain('arm 2:')
  })
})
