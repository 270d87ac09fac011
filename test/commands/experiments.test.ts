import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'

import {createExperimentBody, experimentStore, exposures, insertSubscription, withDb} from '../helpers/experiment-fixtures.js'
import {run, tempStore} from '../helpers/run.js'

const count = (db: string, table: string) => withDb(db, (d) => (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as {n: number}).n)

describe('experiments create | update | list | show | start | stop', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
  })

  it('creates a draft with a baseline arm and numbered arms, from flags', async () => {
    const r = await run(db, ['experiments', 'create', '--name', 'Pro price', '-p', 'pro_monthly,team_monthly', '--arm', 'x0.8', '--arm', 'usd:12.99', '--arm', 'high=x1.3', '--seed', '7', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({message: expect.stringContaining('created experiment 1'), success: true})
    expect(r.json.experiment).toMatchObject({
      allocation: 'thompson',
      audience: null,
      countries: [],
      id: 1,
      name: 'Pro price',
      products: ['pro_monthly', 'team_monthly'],
      seed: 7,
      started_at: null,
      status: 'draft',
      type: 'price',
    })
    expect(r.json.experiment.arms).toEqual([
      {id: 'baseline', multiplier: null, products: null, usd_price: null},
      {id: 1, multiplier: 0.8, products: null, usd_price: null},
      {id: 2, multiplier: null, products: null, usd_price: 12.99},
      {id: 'high', multiplier: 1.3, products: null, usd_price: null},
    ])
  })

  it('refuses an arm outside a product\'s [min_px, max_px] with exit 2, naming arm, product, price and what fits; writes nothing', async () => {
    const r = await run(db, ['experiments', 'create', '--name', 'too high', '-p', 'pro_monthly', '--arm', 'x0.9', '--arm', 'x1.5', '--json'])
    expect(r.code).toBe(2)
    expect(r.json.success).toBe(false)
    expect(r.json.message).toContain('arm 2 (x1.5): pro_monthly would cost 15 USD (base 10 USD x 1.5), above its max_px 14 USD; a multiplier from 0.7 to 1.4 fits')
    const low = await run(db, ['experiments', 'create', '--name', 'too low', '-p', 'pro_monthly', '--arm', 'usd:5', '--json'])
    expect(low.code).toBe(2)
    expect(low.json.message).toContain('pro_monthly would cost 5 USD (its usd_price), below its min_px 7 USD')
    expect(count(db, 'experiments')).toBe(0)
  })

  it.each([
    [['--arm', 'cheap'], '--arm #1: expected [ID=]x0.8 (multiplier), [ID=]usd:12.99 (USD price) or [ID=]products:a,b (packaging), got "cheap"'],
    [['--arm', 'x0'], 'arms[0].multiplier: must be above 0, got 0'],
    [['--arm', 'usd:9.999'], 'arms[0].usd_price: 9.999 has more decimals than USD allows (2)'],
    [['--arm', '0=x0.9'], 'arm id must be'],
    [['--arm', 'x0.9', '--arm', 'products:pro_yearly'], 'product sets belong to packaging experiments'],
    [['--arm', 'x0.9', '--allocation', 'greedy'], 'Expected --allocation=greedy to be one of: thompson, uniform'],
    [['--arm', 'x0.9', '--country', 'XX'], 'countries[0]: unknown country "XX"'],
    [['--arm', 'x0.9', '--seed', '-1'], 'seed: expected a whole number, got "-1"'],
  ])('bad flags %j exit 2 and name the field and value', async (args, message) => {
    const r = await run(db, ['experiments', 'create', '--name', 'bad', '-p', 'pro_monthly', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain(message)
    expect(count(db, 'experiments')).toBe(0)
  })

  it('refuses unknown products and audiences (exit 1), and a missing name without a terminal (exit 2)', async () => {
    const unknown = await run(db, ['experiments', 'create', '--name', 'x', '-p', 'nope', '--arm', 'x0.9', '--json'])
    expect(unknown.code).toBe(1)
    expect(unknown.json.message).toBe('unknown product "nope" (see "pricectl products list")')
    const audience = await run(db, ['experiments', 'create', '--name', 'x', '-p', 'pro_monthly', '--arm', 'x0.9', '--audience', 'students', '--json'])
    expect(audience.code).toBe(1)
    expect(audience.json.message).toContain('audience: unknown audience "students" (see "pricectl audiences list")')
    const nameless = await run(db, ['experiments', 'create', '-p', 'pro_monthly', '--arm', 'x0.9', '--json'])
    expect(nameless.code).toBe(2)
    expect(nameless.json.message).toContain('missing required flag: --name')
    const priceless = await run(db, ['experiments', 'create', '--name', 'x', '--arm', 'x0.9', '--json'])
    expect(priceless.code).toBe(2)
    expect(priceless.json.message).toContain('products: a price experiment needs the products it prices (--product)')
  })

  it('takes the spec-like body from --body, flags override it', async () => {
    const r = await createExperimentBody(db, {allocation: 'uniform', arms: [{id: 'cheap', multiplier: 0.8}], countries: ['DE', 'FR'], name: 'from body', products: ['pro_monthly']}, ['--name', 'renamed'])
    expect(r.code).toBe(0)
    expect(r.json.experiment).toMatchObject({allocation: 'uniform', countries: ['DE', 'FR'], name: 'renamed'})
    expect(r.json.experiment.arms.map((a: {id: unknown}) => a.id)).toEqual(['baseline', 'cheap'])
    const typo = await createExperimentBody(db, {arms: [{multiplier: 0.8}], name: 'typo', product: ['pro_monthly']})
    expect(typo.code).toBe(2)
    expect(typo.json.message).toContain('unknown field "product"')
  })

  it('updates anything while a draft; once running only name, allocation and seed', async () => {
    await run(db, ['experiments', 'create', '--name', 'e', '-p', 'pro_monthly', '--arm', 'x0.8'])
    const draft = await run(db, ['experiments', 'update', '1', '--arm', 'x0.9', '--arm', 'x1.1', '--country', 'US', '--json'])
    expect(draft.code).toBe(0)
    expect(draft.json.experiment.arms.map((a: {multiplier: number}) => a.multiplier)).toEqual([null, 0.9, 1.1])
    expect(draft.json.experiment.countries).toEqual(['US'])
    expect((await run(db, ['experiments', 'update', '1', '--arm', 'x2', '--json'])).code).toBe(2)
    expect((await run(db, ['experiments', 'start', '1'])).code).toBe(0)
    const locked = await run(db, ['experiments', 'update', '1', '--arm', 'x0.95', '--json'])
    expect(locked.code).toBe(2)
    expect(locked.json.message).toContain('experiment 1 is running: arms can only change while it is a draft')
    const renamed = await run(db, ['experiments', 'update', '1', '--name', 'renamed', '--allocation', 'uniform', '--json'])
    expect(renamed.json.experiment).toMatchObject({allocation: 'uniform', name: 'renamed', status: 'running'})
    const same = await run(db, ['experiments', 'update', '1', '--name', 'renamed', '--json'])
    expect(same.json.message).toBe('experiment 1 unchanged')
    const missing = await run(db, ['experiments', 'update', '9', '--name', 'x', '--json'])
    expect(missing.code).toBe(1)
    expect(missing.json.message).toBe('no experiment 9 (see "pricectl experiments list")')
    expect((await run(db, ['experiments', 'show', 'abc', '--json'])).code).toBe(2)
  })

  it('starts and stops; refuses a second running experiment on the same product and visitors', async () => {
    await run(db, ['experiments', 'create', '--name', 'one', '-p', 'pro_monthly', '--arm', 'x0.8'])
    await run(db, ['experiments', 'create', '--name', 'two', '-p', 'pro_monthly', '--arm', 'x1.2'])
    await run(db, ['experiments', 'create', '--name', 'german', '-p', 'pro_monthly', '--arm', 'x1.2', '--country', 'DE'])
    const started = await run(db, ['experiments', 'start', '1', '--json'])
    expect(started.json.experiment).toMatchObject({status: 'running'})
    expect(started.json.experiment.started_at).toEqual(expect.any(String))
    const again = await run(db, ['experiments', 'start', '1', '--json'])
    expect(again.json.message).toBe('experiment 1 is already running')
    const clash = await run(db, ['experiments', 'start', '2', '--json'])
    expect(clash.code).toBe(1)
    expect(clash.json.message).toContain('experiment 1 ("one") already runs on pro_monthly for the same visitors: stop it first ("pricectl experiments stop 1")')
    // Restricted to DE while the first targets every country: still the same visitors.
    expect((await run(db, ['experiments', 'start', '3'])).code).toBe(1)
    const stopped = await run(db, ['experiments', 'stop', '1', '--json'])
    expect(stopped.json.experiment).toMatchObject({status: 'stopped'})
    expect((await run(db, ['experiments', 'start', '3'])).code).toBe(0)
    expect((await run(db, ['experiments', 'start', '2'])).code).toBe(1)
    const list = await run(db, ['experiments', 'list', '--status', 'running', '--json'])
    expect(list.json.experiments.map((e: {id: number}) => e.id)).toEqual([3])
  })

  it('lists as a table, CSV or JSON and shows one experiment with its arms', async () => {
    expect((await run(db, ['experiments', 'list'])).stdout).toContain('no experiments yet')
    await run(db, ['experiments', 'create', '--name', '=cmd', '-p', 'pro_monthly', '--arm', 'x0.8', '--country', 'DE,AT'])
    const table = await run(db, ['experiments', 'list'])
    expect(table.stdout).toMatch(/│ 1 +│ =cmd +│ price +│ draft +│ thompson +│ pro_monthly +│ baseline 1 +│ every audience, DE AT/)
    const csv = await run(db, ['experiments', 'list', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('id,name,type,status,allocation,products,arms,target,started_at')
    // A name starting with = is not a spreadsheet formula.
    expect(csv.stdout).toContain("1,'=cmd,price,draft")
    const show = await run(db, ['experiments', 'show', '1'])
    expect(show.stdout).toMatch(/│ 1 +│ x0\.8 +│ pro_monthly 8 \[7\.\.14\]/)
    const json = await run(db, ['experiments', 'show', '1', '--json'])
    expect(json.json.experiment.countries).toEqual(['DE', 'AT'])
  })
})

describe('experiments create --start | delete', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
  })

  it('create --start whose start is refused (another experiment runs on the same visitors) leaves no draft', async () => {
    expect((await run(db, ['experiments', 'create', '--name', 'one', '-p', 'pro_monthly', '--arm', 'x0.8', '--start'])).code).toBe(0)
    const r = await run(db, ['experiments', 'create', '--name', 'two', '-p', 'pro_monthly', '--arm', 'x1.2', '--start', '--json'])
    expect(r.code).toBe(1)
    expect(r.json.message).toContain('experiment 1 ("one") already runs on pro_monthly for the same visitors')
    expect(count(db, 'experiments')).toBe(1)
    expect(count(db, 'arms')).toBe(2)
    expect(count(db, 'experiment_products')).toBe(1)
    // Without --start the draft is made, as before.
    const draft = await run(db, ['experiments', 'create', '--name', 'two', '-p', 'pro_monthly', '--arm', 'x1.2', '--json'])
    expect(draft.json.experiment).toMatchObject({id: 2, status: 'draft'})
  })

  it('deletes a draft with its arms (--yes without a terminal; --json envelope); refuses without --yes', async () => {
    await run(db, ['experiments', 'create', '--name', 'draft', '-p', 'pro_monthly', '--arm', 'x0.8'])
    const ask = await run(db, ['experiments', 'delete', '1', '--json'])
    expect(ask.code).toBe(2)
    expect(ask.json.message).toBe('refusing to delete draft experiment 1 "draft" without --yes (no terminal to confirm on)')
    expect(count(db, 'experiments')).toBe(1)
    const r = await run(db, ['experiments', 'delete', '1', '--yes', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toEqual({id: 1, message: 'deleted experiment 1 "draft"', success: true})
    expect(count(db, 'experiments')).toBe(0)
    expect(count(db, 'arms')).toBe(0)
    expect(count(db, 'experiment_products')).toBe(0)
    const missing = await run(db, ['experiments', 'delete', '1', '--yes', '--json'])
    expect(missing.code).toBe(1)
    expect(missing.json.message).toBe('no experiment 1 (see "pricectl experiments list")')
  })

  it('refuses to delete a running or stopped experiment (exit 2), even with --yes, and keeps it', async () => {
    await run(db, ['experiments', 'create', '--name', 'live', '-p', 'pro_monthly', '--arm', 'x0.8', '--start'])
    const running = await run(db, ['experiments', 'delete', '1', '--yes', '--json'])
    expect(running.code).toBe(2)
    expect(running.json.message).toContain('experiment 1 is running: only drafts can be deleted; stop it instead ("pricectl experiments stop 1")')
    await run(db, ['experiments', 'stop', '1'])
    const stopped = await run(db, ['experiments', 'delete', '1', '--yes'])
    expect(stopped.code).toBe(2)
    expect(stopped.stderr).toContain('experiment 1 is stopped: only drafts can be deleted; a started experiment keeps its exposures, the locks that hold its arms and its results ("pricectl experiments results 1")')
    expect(count(db, 'experiments')).toBe(1)
  })
})

describe('price with a running experiment', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
  })

  async function price(args: string[]) {
    const r = await run(db, ['price', ...args, '--json'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    return r.json
  }

  it('gives new locks an arm; variants follow the spec; run_experiment false runs none', async () => {
    await run(db, ['experiments', 'create', '--name', 'e', '-p', 'pro_monthly', '--arm', 'x0.8', '--start'])
    const q = await price(['-u', 'u1', '-p', 'pro_monthly', '--country', 'US'])
    expect(q.variants).toMatchObject({experiment_id: 1, experiment_type: 'price', experimented_on: true, products_to_select: [], treatment_group: null})
    expect(['baseline', 1]).toContain(q.variants.arm_id)
    const off = await price(['-u', 'u2', '-p', 'pro_monthly', '--country', 'US', '--no-run-experiment'])
    expect(off.variants).toEqual({arm_id: 0, experiment_id: 0, experiment_type: null, experimented_on: false, products_to_select: [], treatment_group: null})
    expect(off.products.pro_monthly.price).toBe(10)
    const other = await price(['-u', 'u3', '-p', 'team_monthly', '--country', 'US'])
    expect(other.variants.experiment_id).toBe(0)
    withDb(db, (d) => expect(exposures(d, 1)).toEqual({u1: String(q.variants.arm_id)}))
  })

  it('prices the arm: lower struck through with a positive discount; higher with a negative discount (spec formula)', async () => {
    await run(db, ['experiments', 'create', '--name', 'low', '-p', 'pro_monthly', '--arm', 'x0.8', '--allocation', 'uniform', '--seed', '1', '--start'])
    const seen = new Map<string, any>()
    for (let i = 0; seen.size < 2 && i < 40; i++) {
      const q = await price(['-u', `low-${i}`, '-p', 'pro_monthly', '--country', 'US'])
      seen.set(String(q.variants.arm_id), q.products.pro_monthly)
    }
    expect(seen.get('baseline')).toMatchObject({display: {discount_to_baseline: 0, price: '$10', price_with_baseline_strike: '$10'}, price: 10})
    // 10 x 0.8 = 8, rounded by the USD rule (.99 endings) to 7.99; the control price is the baseline.
    expect(seen.get('1')).toMatchObject({display: {discount_to_baseline: 20.1, price: '$7.99', price_with_baseline_strike: '$̶1̶0̶ $7.99', reference_interval_price: '$10'}, price: 7.99, price_usd: 7.99})
    await run(db, ['experiments', 'stop', '1'])
    await run(db, ['experiments', 'create', '--name', 'high', '-p', 'pro_monthly', '--arm', 'x1.25', '--allocation', 'uniform', '--seed', '1', '--start'])
    let high
    for (let i = 0; !high && i < 40; i++) {
      const q = await price(['-u', `high-${i}`, '-p', 'pro_monthly', '--country', 'US'])
      if (q.variants.arm_id === 1) high = q.products.pro_monthly
    }
    // 12.50 rounds to 12.99 (USD rule), inside [7, 14]; dearer than the control: nothing struck, discount negative.
    expect(high).toMatchObject({display: {discount_to_baseline: -29.9, price: '$12.99', price_with_baseline_strike: '$12.99'}, price: 12.99})
  })

  it('localizes the arm: a multiplier of the country price, in its currency, kept inside the bounds through FX', async () => {
    await run(db, ['experiments', 'create', '--name', 'de', '-p', 'pro_monthly', '--arm', 'x1.4', '--arm', 'x0.7', '--allocation', 'uniform', '--start'])
    const byArm = new Map<string, any>()
    for (let i = 0; byArm.size < 3 && i < 60; i++) {
      const q = await price(['-u', `de-${i}`, '-p', 'pro_monthly', '--country', 'DE'])
      expect(q.currency).toBe('EUR')
      byArm.set(String(q.variants.arm_id), q.products.pro_monthly)
    }
    expect(byArm.get('baseline').price).toBe(9)
    for (const p of byArm.values()) {
      expect(p.price_usd).toBeGreaterThanOrEqual(7)
      expect(p.price_usd).toBeLessThanOrEqual(14)
    }
    const explain = await run(db, ['price', 'explain', '-u', 'de-new', '-p', 'pro_monthly', '--country', 'DE', '--json'])
    const details = explain.json.steps.map((s: {detail: string}) => s.detail).join('\n')
    expect(details).toMatch(/experiment 1 "de" \(price, uniform\): arm (baseline|1|2)/)
  })

  it('keeps the arm of the lock across calls, prices a product the lock lacks under the same arm, and re-assigns only on --override', async () => {
    await run(db, ['experiments', 'create', '--name', 'both', '-p', 'pro_monthly,pro_yearly', '--arm', 'x0.8', '--allocation', 'uniform', '--seed', '3', '--start'])
    let user = ''
    let first
    for (let i = 0; !first && i < 40; i++) {
      const q = await price(['-u', `s-${i}`, '-p', 'pro_monthly', '--country', 'US'])
      if (q.variants.arm_id === 1) {
        first = q
        user = `s-${i}`
      }
    }
    for (let k = 0; k < 3; k++) expect(await price(['-u', user, '-p', 'pro_monthly'])).toEqual(first)
    const yearly = await price(['-u', user, '-p', 'pro_yearly'])
    expect(yearly.variants.arm_id).toBe(1)
    // 100 x 0.8 = 80, by the USD rule 79.99.
    expect(yearly.products.pro_yearly.price).toBe(79.99)
    await run(db, ['experiments', 'stop', '1'])
    expect((await price(['-u', user, '-p', 'pro_monthly'])).variants.arm_id).toBe(1)
    const fresh = await price(['-u', user, '-p', 'pro_monthly', '--override'])
    expect(fresh.variants).toMatchObject({arm_id: 0, experiment_id: 0, experimented_on: false})
    expect(fresh.products.pro_monthly.price).toBe(10)
  })

  it('targets countries: other countries get no experiment', async () => {
    await run(db, ['experiments', 'create', '--name', 'de only', '-p', 'pro_monthly', '--arm', 'x0.8', '--country', 'DE', '--start'])
    expect((await price(['-u', 'us', '-p', 'pro_monthly', '--country', 'US'])).variants.experiment_id).toBe(0)
    expect((await price(['-u', 'de', '-p', 'pro_monthly', '--country', 'DE'])).variants.experiment_id).toBe(1)
    const explain = await run(db, ['price', 'explain', '-u', 'fr', '-p', 'pro_monthly', '--country', 'FR', '--json'])
    expect(explain.json.steps.map((s: {detail: string}) => s.detail)).toContain('experiment 1: targets DE, not FR')
  })

  it('packaging: products_to_select is the arm\'s set among the priced products; prices stay', async () => {
    const r = await run(db, ['experiments', 'create', '--name', 'tiers', '--type', 'packaging', '--arm', 'products:pro_monthly', '--arm', 'products:pro_monthly,team_monthly', '--allocation', 'uniform', '--start', '--json'])
    expect(r.code).toBe(0)
    expect(r.json.experiment.products).toEqual(['pro_monthly', 'team_monthly'])
    const selections = new Set<string>()
    for (let i = 0; i < 30; i++) {
      const q = await price(['-u', `p-${i}`, '-p', 'pro_monthly,team_monthly,pro_yearly', '--country', 'US'])
      expect(q.variants.experiment_type).toBe('packaging')
      expect(q.products.pro_monthly.price).toBe(10)
      const expected = q.variants.arm_id === 'baseline' ? ['pro_monthly', 'team_monthly', 'pro_yearly'] : q.variants.arm_id === 1 ? ['pro_monthly'] : ['pro_monthly', 'team_monthly']
      expect(q.variants.products_to_select).toEqual(expected)
      selections.add(String(q.variants.arm_id))
    }
    expect(selections).toEqual(new Set(['baseline', '1', '2']))
    // Without every product of the experiment in the request, there is nothing to choose among.
    expect((await price(['-u', 'single', '-p', 'pro_monthly', '--country', 'US'])).variants.experiment_id).toBe(0)
  })

  it('batches price many users (price --input) with arms in the CSV output', async () => {
    await run(db, ['experiments', 'create', '--name', 'batch', '-p', 'pro_monthly', '--arm', 'x0.8', '--start'])
    const file = join(dirname(db), 'requests.jsonl')
    writeFileSync(file, Array.from({length: 50}, (_, i) => JSON.stringify({country: 'US', products: ['pro_monthly'], user_id: `b${i}`})).join('\n'))
    const r = await run(db, ['price', '--input', file, '--output', 'csv'])
    expect(r.code).toBe(0)
    const rows = r.stdout.trim().split('\n').slice(1).map((l) => l.split(','))
    expect(rows).toHaveLength(50)
    for (const row of rows) {
      expect(row[10]).toBe('1')
      expect(['baseline', '1']).toContain(row[11])
    }
    expect(count(db, 'exposures')).toBe(50)
  })
})

describe('experiments results', () => {
  let db: string
  beforeEach(async () => {
    db = tempStore()
    await experimentStore(db)
  })

  it('reports visitors, conversions, rates with intervals, revenue and the probability of being best', async () => {
    await run(db, ['experiments', 'create', '--name', 'r', '-p', 'pro_monthly', '--arm', 'x0.8', '--allocation', 'uniform', '--seed', '11', '--start'])
    // The 40 visitors priced in one batch (price --input, one result line per request in order):
    // what is tested is the results, the single price path is tested above.
    const arms: Record<string, string[]> = {}
    const requests = join(dirname(db), 'visitors.jsonl')
    writeFileSync(requests, Array.from({length: 40}, (_, i) => JSON.stringify({country: 'US', products: ['pro_monthly'], user_id: `r${i}`})).join('\n'))
    const batch = await run(db, ['price', '--input', requests])
    expect(batch.code, batch.stderr).toBe(0)
    const quotes = batch.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(quotes).toHaveLength(40)
    for (const [i, q] of quotes.entries()) {
      expect(q.user_id).toBe(`r${i}`)
      ;(arms[String(q.variants.arm_id)] ??= []).push(`r${i}`)
    }
    // Every baseline visitor buys at 10 USD; one of the x0.8 visitors buys at 7.99.
    withDb(db, (d) => {
      for (const u of arms.baseline) insertSubscription(d, {amount_usd: 10, product: 'pro_monthly', user_id: u})
      insertSubscription(d, {amount_usd: 7.99, product: 'pro_monthly', user_id: arms['1'][0]})
    })
    const r = await run(db, ['experiments', 'results', '1', '--json'])
    expect(r.code).toBe(0)
    const [baseline, cheap] = r.json.arms
    expect(baseline).toMatchObject({arm_id: 'baseline', conversion_rate: 1, conversions: arms.baseline.length, revenue: 10 * arms.baseline.length, revenue_per_visitor: 10, visitors: arms.baseline.length})
    expect(cheap).toMatchObject({arm_id: 1, conversions: 1, revenue: 7.99, visitors: arms['1'].length})
    expect(cheap.conversion_rate).toBeCloseTo(1 / arms['1'].length, 6)
    expect(baseline.conversion_rate_ci[0]).toBeGreaterThan(0.8)
    expect(cheap.conversion_rate_ci[0]).toBeLessThan(cheap.conversion_rate)
    expect(cheap.conversion_rate_ci[1]).toBeGreaterThan(cheap.conversion_rate)
    expect(baseline.probability_best + cheap.probability_best).toBeCloseTo(1, 2)
    expect(baseline.probability_best).toBeGreaterThan(0.99)
    expect(r.json).toMatchObject({best_arm: 'baseline', conversions: arms.baseline.length + 1, draws: 20_000, seed: 11, success: true, visitors: 40})
    // Seeded: the same figures every time.
    expect((await run(db, ['experiments', 'results', '1', '--json'])).json).toEqual(r.json)
    const table = await run(db, ['experiments', 'results', '1'])
    expect(table.stdout).toContain('probability of being best')
    expect(table.stdout).toContain('revenue per visitor (● observed, ├─┤ 95% credible interval)')
    expect(table.stdout).toContain('best so far: arm baseline')
    const csv = await run(db, ['experiments', 'results', '1', '--output', 'csv'])
    expect(csv.stdout.split('\n')[0]).toBe('arm,visitors,conversions,conversion rate,95% interval,revenue USD,revenue/visitor,rev/visitor 95%,P(best),price')
  })

  it('says so when nobody was exposed yet', async () => {
    await run(db, ['experiments', 'create', '--name', 'empty', '-p', 'pro_monthly', '--arm', 'x0.8'])
    const r = await run(db, ['experiments', 'results', '1', '--json'])
    expect(r.json).toMatchObject({best_arm: null, conversions: 0, visitors: 0})
    expect((await run(db, ['experiments', 'results', '1'])).stdout).toContain('no visitors yet')
    expect((await run(db, ['experiments', 'results', '1', '--draws', '5', '--json'])).code).toBe(2)
  })
})

describe('experiments simulate', () => {
  it('runs on a copy of --db and leaves the store as it was', async () => {
    const db = tempStore()
    await experimentStore(db)
    await run(db, ['experiments', 'create', '--name', 'mine', '-p', 'pro_monthly', '--arm', 'x0.8', '--arm', 'x1.3', '--start'])
    const before = {exp: count(db, 'experiments'), locks: count(db, 'locks'), subs: count(db, 'subscriptions')}
    const r = await run(db, ['experiments', 'simulate', '1', '--demand', '7.99=0.2,10=0.2,12.99=0.1', '--visitors', '600', '--seed', '2', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({best_arm: 'baseline', product: 'pro_monthly', seed: 2, store: null, visitors: 600})
    expect(Object.keys(r.json.policies).sort()).toEqual(['oracle', 'thompson', 'uniform'])
    expect(r.json.policies.thompson.series.at(-1)).toMatchObject({visitors: 600})
    expect({exp: count(db, 'experiments'), locks: count(db, 'locks'), subs: count(db, 'subscriptions')}).toEqual(before)
    const text = await run(db, ['experiments', 'simulate', '--arm', 'x0.8', '--demand', '8=0.3,10=0.2', '--visitors', '200', '--policy', 'uniform'])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('cumulative revenue per visitor (USD)')
    expect(text.stdout).toContain('oracle (best fixed arm)')
  })

  it.each([
    [['--arm', 'x0.8'], 'missing demand curve: pass --demand'],
    [['--arm', 'x0.8', '--demand', '10'], '--demand: expected PRICE=PROBABILITY, got "10"'],
    [['--demand', '10=0.1'], 'missing arms: pass --arm'],
    [['--arm', 'x0.8', '--demand', '10=0.1', '--visitors', '0'], '--visitors: expected a whole number from 1'],
  ])('bad input %j exits 2', async (args, message) => {
    const db = tempStore()
    await experimentStore(db)
    const r = await run(db, ['experiments', 'simulate', ...args, '--json'])
    expect(r.code).toBe(2)
    expect(r.json.message).toContain(message)
  })

  it('an unknown --product is not found: exit 1', async () => {
    const db = tempStore()
    await experimentStore(db)
    const r = await run(db, ['experiments', 'simulate', '--arm', 'x0.8', '--demand', '10=0.1', '-p', 'nope', '--json'])
    expect(r.code).toBe(1)
    const message = 'unknown product "nope"'
    expect(r.json.message).toContain(message)
  })
})
