import Database from 'better-sqlite3'
import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {ROOT, run} from '../helpers/run.js'
import {type ChildResult, copyFixtureStore, fixtureExpected, paymentsCsv, startBin, startMany, subscriptionsCsv, tempDir, write} from './helpers.js'

/**
 * Concurrency (issue 7, item 2): two overlapping charges imports, a subscriptions import,
 * two streams of price calls over the same users (price --input), single price calls and
 * catalog writes, all against one store from separate processes at once. No SQLITE_BUSY
 * may reach the user, no row may be lost or doubled, and each user keeps one lock: both
 * streams quote a user the same (a Thompson-sampling experiment would tell them apart).
 */

const USERS = 3000
const BUSY = /busy|SQLITE_BUSY|SQLITE_LOCKED|database is locked/i

/** Holds the write lock of the store for 1.5 s (says "held" once it has it), then commits a setting. */
const HOLDER = `
const Database = require(require('node:module').createRequire(${JSON.stringify(join(ROOT, 'package.json'))}).resolve('better-sqlite3'))
const db = new Database(process.argv[1])
db.exec('BEGIN IMMEDIATE')
db.prepare("INSERT INTO settings (key, value) VALUES ('held', '1')").run()
process.stdout.write('held\\n')
setTimeout(() => { db.exec('COMMIT'); db.close() }, 1500)
`

function requests(order: number[]): string {
  return order.map((i) => JSON.stringify({country: ['US', 'DE', 'FR', 'JP', 'BR'][i % 5], integrations: ['gateway_a'], products: ['lifetime', 'pro_monthly'], user_id: `cu_${i}`})).join('\n') + '\n'
}

function rows<T>(db: string, sql: string): T[] {
  const d = new Database(db, {readonly: true})
  try {
    return d.prepare(sql).all() as T[]
  } finally {
    d.close()
  }
}

describe('imports and price calls from separate processes at once', () => {
  it('no busy error reaches the user, no row is lost or doubled, one lock per user', async () => {
    const dir = tempDir('pricectl-concurrency-')
    const db = copyFixtureStore(dir)
    process.env.PRICECTL_NOW = fixtureExpected().now
    // A running Thompson-sampling experiment on lifetime: a second quote for a user would
    // likely land in another arm.
    const exp = await run(db, ['experiments', 'create', '--name', 'Lifetime price', '-p', 'lifetime', '--arm', 'x0.7', '--arm', 'x0.85', '--arm', 'x1.15', '--arm', 'x1.3', '--seed', '11', '--start', '--json'])
    expect(exp.code, exp.stdout + exp.stderr).toBe(0)
    delete process.env.PRICECTL_NOW
    const experimentId = exp.json.experiment.id as number

    const chargesA = write(dir, 'charges-a.csv', paymentsCsv(12_000, {prefix: 'a'}))
    // Overlaps the second half of A (same rows, same content) and adds 6,000 more.
    const chargesB = write(dir, 'charges-b.csv', paymentsCsv(12_000, {prefix: 'a', start: 6000}))
    const subs = write(dir, 'subscriptions.csv', subscriptionsCsv(10_000))
    const order = Array.from({length: USERS}, (_, i) => i)
    const forward = write(dir, 'forward.jsonl', requests(order))
    const backward = write(dir, 'backward.jsonl', requests([...order].reverse()))

    const env = {PRICECTL_DB: db}
    const jobs: {args: string[]; done: Promise<ChildResult>; name: string}[] = []
    const start = (name: string, args: string[]) => jobs.push({args, name, ...startBin(args, {env})})
    start('charges import A', ['charges', 'import', chargesA, '--batch-size', '500', '--json'])
    start('price stream forward', ['price', '--input', forward])
    start('charges import B', ['charges', 'import', chargesB, '--batch-size', '500', '--json'])
    start('subscriptions import', ['subscriptions', 'import', subs, '--batch-size', '500', '--json'])
    start('price stream backward', ['price', '--input', backward])
    // Single writes while the imports run: each is a read-then-write transaction, one after
    // the other in one more process (startMany: each as bin/run.js runs it).
    const steps: [string, string[]][] = [
        ['price (single)', ['price', '-u', 'cu_1', '-p', 'lifetime', '-p', 'pro_monthly', '--integration', 'gateway_a', '--json']],
        ['coupons create', ['coupons', 'create', '--api-id', 'CONC1', '--name', 'Concurrent 1', '--type', 'percentage', '--value', '5']],
        ['price (single, new user)', ['price', '-u', 'solo_1', '-p', 'lifetime', '--country', 'DE', '--json']],
        ['audiences create', ['audiences', 'create', '--api-id', 'conc_aud', '--name', 'Concurrent', '--rule', 'country in PL']],
        ['products update', ['products', 'update', 'pro_yearly', '--base-px', '98']],
        ['price (single, new user)', ['price', '-u', 'solo_2', '-p', 'lifetime', '--country', 'FR', '--json']],
    ]
    const sequence = startMany(steps.map(([, args]) => ({args})), env)

    const results = await Promise.all(jobs.map(async (j) => ({...j, result: await j.done})))
    const singles: {args: string[]; name: string; result: {code: null | number; stderr: string; stdout: string}}[] = (await sequence).map((result, i) => ({args: steps[i][1], name: steps[i][0], result}))
    for (const j of [...results, ...singles]) {
      const what = `${j.name}: exit ${j.result.code}\n${j.result.stderr.slice(0, 500)}\n${j.result.stdout.slice(0, 300)}`
      expect(j.result.code, what).toBe(0)
      expect(j.result.stderr, what).not.toMatch(BUSY)
      expect(j.result.stdout, what).not.toMatch(BUSY)
    }

    // Charges: the union of A and B, each once, each as the file has it.
    const charges = rows<{amount_minor: number; currency: string; n: number; origin_id: string}>(db, "SELECT origin_id, currency, amount_minor, count(*) AS n FROM charges WHERE origin_id LIKE 'ch_a%' GROUP BY user_id, origin, origin_id ORDER BY origin_id")
    expect(charges).toHaveLength(18_000)
    expect(charges.every((c) => c.n === 1)).toBe(true)
    expect(charges[0].origin_id).toBe('ch_a0000000')
    expect(charges.at(-1)!.origin_id).toBe('ch_a0017999')
    const [a, b] = await Promise.all([results[0].result, results[2].result]).then((r) => r.map((x) => JSON.parse(x.stdout)))
    expect(a.read + b.read).toBe(24_000)
    expect(a.inserted + b.inserted).toBe(18_000)
    expect(a.unchanged + b.unchanged).toBe(6000)
    // Subscriptions: every row once.
    expect(rows<{n: number}>(db, "SELECT count(*) AS n FROM subscriptions WHERE origin_id LIKE 'sub_%' AND user_id LIKE 'u_%'")[0].n).toBe(10_000)

    // Locks: one per user, and both streams quoted each user identically.
    expect(rows<{n: number}>(db, "SELECT count(*) AS n FROM locks WHERE lock_key LIKE 'cu_%'")[0].n).toBe(USERS)
    const quotes = (stdout: string) => new Map(stdout.trim().split('\n').map((l) => JSON.parse(l)).map((q) => [q.user_id as string, q]))
    const f = quotes(results[1].result.stdout)
    const r = quotes(results[4].result.stdout)
    expect(f.size).toBe(USERS)
    expect(r.size).toBe(USERS)
    const arms = new Set<unknown>()
    for (const [user, q] of f) {
      expect(r.get(user), user).toEqual(q)
      arms.add(q.variants.arm_id)
    }
    // The experiment really split users (so equal quotes are not a coincidence).
    expect(arms.size).toBeGreaterThan(2)
    // One exposure per user of the experiment, matching the lock's arm.
    const exposures = rows<{arm_id: string; n: number; user_id: string}>(db, `SELECT user_id, arm_id, count(*) AS n FROM exposures WHERE experiment_id = ${experimentId} GROUP BY user_id`)
    const locks = new Map(rows<{arm_id: string; lock_key: string}>(db, `SELECT lock_key, arm_id FROM locks WHERE experiment_id = ${experimentId}`).map((l) => [l.lock_key, l.arm_id]))
    expect(exposures.length).toBe(locks.size)
    for (const e of exposures) {
      expect(e.n).toBe(1)
      expect(locks.get(e.user_id)).toBe(e.arm_id)
    }
    // The single price call of cu_1 saw the stream's quote (or made the one the streams saw).
    const single = JSON.parse(singles[0].result.stdout)
    expect(single).toEqual(f.get('cu_1'))

    // The check in-process: the processes under test are the ones above.
    expect((await run(db, ['db', 'check', '--json'])).json).toMatchObject({integrity: 'ok', ok: true})
  }, 120_000)

  it('writes that start while another process holds the write lock wait for it instead of failing busy', async () => {
    const db = copyFixtureStore(tempDir('pricectl-concurrency-'))
    // Another writer holds the store's write lock for 1.5 s, then commits a change. A
    // deferred transaction that read before that commit could not write after it
    // (SQLITE_BUSY_SNAPSHOT, no retry): every write must take its lock up front.
    const holder = spawn(process.execPath, ['-e', HOLDER, db], {stdio: ['ignore', 'pipe', 'inherit']})
    const released = new Promise((resolve) => holder.once('close', resolve))
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()))
    const env = {PRICECTL_DB: db}
    const writes: string[][] = [
      ['coupons', 'create', '--api-id', 'HOLD1', '--name', 'Held 1', '--type', 'percentage', '--value', '5'],
      ['coupons', 'update', 'WELCOME10', '--value', '12'],
      ['products', 'create', '--api-id', 'held_p', '--name', 'Held product', '--base-px', '3', '--interval', 'week', '--interval-count', '1'],
      ['products', 'update', 'pro_yearly', '--base-px', '97'],
      ['audiences', 'create', '--api-id', 'held_aud', '--name', 'Held', '--rule', 'country in NL'],
      ['packages', 'create', '--api-id', 'held_pkg', '--name', 'Held package', '--product', 'lifetime', '--country', 'NL'],
      ['experiments', 'create', '--name', 'Held experiment', '-p', 'lifetime', '--arm', 'x0.9'],
      ['localization', 'import', '-', '--format', 'csv'],
      ['price', '-u', 'held_user', '-p', 'lifetime', '--country', 'NL'],
      ['subscriptions', 'create', '--user-id', 'held', '--origin', 'gateway_a', '--origin-id', 'held_s', '--product', 'pro_monthly', '--amount', '9.99', '--currency', 'USD', '--created', '1772323200', '--status', 'active'],
    ]
    const out = await Promise.all(writes.map((args) => startBin(args, {env, input: args[1] === 'import' ? 'country,factor\nNL,0.95\n' : ''}).done))
    await released
    for (const [i, o] of out.entries()) {
      const what = `${writes[i].join(' ')}: exit ${o.code} ${o.stderr}`
      expect(o.code, what).toBe(0)
      expect(o.stderr, what).not.toMatch(BUSY)
    }
    expect(rows<{n: number}>(db, "SELECT count(*) AS n FROM settings WHERE key = 'held'")[0].n).toBe(1)
  }, 60_000)

  it('many processes asking for the same new user at once get one quote', async () => {
    const dir = tempDir('pricectl-concurrency-')
    const db = copyFixtureStore(dir)
    const exp = await run(db, ['experiments', 'create', '--name', 'Same user', '-p', 'lifetime', '--arm', 'x0.7', '--arm', 'x0.8', '--arm', 'x0.9', '--arm', 'x1.1', '--arm', 'x1.2', '--arm', 'x1.3', '--seed', '5', '--start', '--json'])
    expect(exp.code).toBe(0)
    const env = {PRICECTL_DB: db}
    const users = ['same_1', 'same_2', 'same_3']
    const calls = users.flatMap((u) => Array.from({length: 3}, () => startBin(['price', '-u', u, '-p', 'lifetime', '--country', 'GB', '--json'], {env}).done))
    const out = await Promise.all(calls)
    for (const o of out) {
      expect(o.code, o.stderr).toBe(0)
      expect(o.stderr).not.toMatch(BUSY)
    }
    for (const [i, u] of users.entries()) {
      const quotes = out.slice(i * 3, i * 3 + 3).map((o) => JSON.parse(o.stdout))
      expect(quotes[1], u).toEqual(quotes[0])
      expect(quotes[2], u).toEqual(quotes[0])
    }
    expect(rows<{n: number}>(db, "SELECT count(*) AS n FROM locks WHERE lock_key LIKE 'same_%'")[0].n).toBe(3)
    expect(rows<{n: number}>(db, "SELECT count(*) AS n FROM exposures WHERE user_id LIKE 'same_%'")[0].n).toBe(3)
  }, 60_000)
})
