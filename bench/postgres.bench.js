// PostgreSQL benchmarks (issue 18, docs/postgres.md). New figures, recorded without budgets:
// - 1M payments (the import bench's generated gateway_a export) imported by `charges import
//   FILE --db postgres://...` into a fresh migrated database, against `psql \copy` of the same
//   file into a plain table of 24 text columns (pg-copy-streams from Node when psql is not
//   installed). The aim is at most 1.5x; best of BENCH_PG_IMPORT_RUNS, interleaved rounds.
// - `pricectl serve` as 2 instances on one PostgreSQL database, POST /v1/prices driven by
//   load.js against both at once: requests/s (both together) and p99 (the worse of the two),
//   for locked users and for new users (each request computes and writes a lock), each after a
//   warm-up (serve.bench.js WARM_SECONDS) and the best of BENCH_PG_SERVE_TRIALS runs (the speed
//   of a shared machine swings within minutes), with the CPU per new user of the servers, the
//   database and the load generator (/proc, Linux: steadier than requests/s on a shared
//   machine; the load generator's measures the machine); then
//   one instance alone with the same 10 connections; then new users again on both instances
//   with a price experiment running (each new lock also writes an exposure).
// The server: PRICECTL_BENCH_PG_URL, else a throwaway cluster (postgres-server.js).
// BENCH_PG_PARTS=import (or serve) runs one part by hand, e.g. for an A/B of the import at
// BENCH_IMPORT_ROWS=200000 (docs/postgres.md, "Import performance").
// Plain ESM; imports nothing from src/.
import {execFileSync, spawn} from 'node:child_process'
import {createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pipeline} from 'node:stream/promises'

import {generatePayments} from './import.bench.js'
import {databaseUrl, startPostgres} from './postgres-server.js'
import {body, check, loadPrices, startServer, stopServer, WARM_SECONDS} from './serve.bench.js'

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_PG_IMPORT_RUNS ?? 2)
const SERVE_SECONDS = Number(process.env.BENCH_PG_SERVE_SECONDS ?? 10)
/** Runs of the two-instance figures, the best kept. */
const TRIALS = Number(process.env.BENCH_PG_SERVE_TRIALS ?? 3)
const PARTS = (process.env.BENCH_PG_PARTS ?? 'import,serve').split(',')
const USERS = 1000
const CONNECTIONS = 5 // per instance
const PRODUCTS = [
  {api_id: 'pro_monthly', base_px: 9.99, country_prices: [{amount: 8.99, country: 'DE', currency: 'EUR'}], interval: 'month', interval_count: 1, name: 'Pro monthly'},
  {api_id: 'pro_yearly', base_px: 99, interval: 'year', interval_count: 1, name: 'Pro yearly'},
]

function hasPsql() {
  try {
    execFileSync('psql', ['--version'], {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

async function timed(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(cmd, args, {stdio: ['ignore', 'pipe', 'pipe'], ...options})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code) => resolve({code, seconds: (performance.now() - started) / 1000, stderr, stdout}))
  })
}

export async function run({root}) {
  const pg = createRequire(join(root, 'package.json'))('pg')
  const server = await startPostgres()
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-bench-pg-'))
  const admin = new pg.Client({connectionString: server.url})
  await admin.connect()
  let n = 0
  const freshDb = async () => {
    const name = `pricectl_bench_${process.pid}_${++n}`
    await admin.query(`DROP DATABASE IF EXISTS ${name}`)
    await admin.query(`CREATE DATABASE ${name}`)
    return {drop: () => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), url: databaseUrl(server.url, name)}
  }
  try {
    const imported = PARTS.includes('import') ? await importBench(root, pg, dir, freshDb) : []
    // The import's WAL is written out now, not by a checkpoint spread over the serve part's
    // run (a server's user without the right to checkpoint measures with it).
    if (imported.length > 0) await admin.query('CHECKPOINT').catch(() => {})
    return [...imported, ...(PARTS.includes('serve') ? await serveBench(root, dir, freshDb, server.pid) : [])]
  } finally {
    await admin.end()
    await server.stop()
    rmSync(dir, {force: true, recursive: true})
  }
}

/** CHECKPOINT, when the server's user may (PRICECTL_BENCH_PG_URL's may not: then each side takes its chances alike). */
async function checkpoint(client) {
  await client.query('CHECKPOINT').catch(() => {})
}

async function importBench(root, pg, dir, freshDb) {
  const file = join(dir, 'payments.csv')
  process.stderr.write(`generating ${ROWS} rows...\n`)
  await generatePayments(file, ROWS)
  const mb = statSync(file).size / 2 ** 20
  const psql = hasPsql()
  const columns = Array.from({length: 24}, (_, i) => `c${i + 1} text`).join(', ')
  const bin = join(root, 'bin', 'run.js')
  const reference = []
  const imports = []
  for (let i = 0; i < RUNS; i++) {
    // The reference: the same file into a plain table, no pricectl.
    const plain = await freshDb()
    const client = new pg.Client({connectionString: plain.url})
    await client.connect()
    await client.query(`CREATE TABLE t (${columns})`)
    // Each timed load starts with the WAL of what came before written out (the database just
    // made, an earlier run's load), so no checkpoint lands inside one side's time only.
    await checkpoint(client)
    if (psql) {
      const r = await timed('psql', [plain.url, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy t FROM '${file}' WITH (FORMAT csv, HEADER true)`])
      if (r.code !== 0) throw new Error(`psql \\copy failed: ${r.stderr}`)
      reference.push(r.seconds)
    } else {
      const {from} = createRequire(join(root, 'package.json'))('pg-copy-streams')
      const started = performance.now()
      await pipeline(createReadStream(file), client.query(from("COPY t FROM STDIN WITH (FORMAT csv, HEADER true)")))
      reference.push((performance.now() - started) / 1000)
    }
    const [{count}] = (await client.query('SELECT count(*)::int AS count FROM t')).rows
    if (count !== ROWS) throw new Error(`reference copied ${count} rows, expected ${ROWS}`)
    await client.end()
    await plain.drop()

    // pricectl: a fresh migrated store with one product for the rows (the export names none).
    const store = await freshDb()
    execFileSync(process.execPath, [bin, 'db', 'migrate', '--db', store.url], {stdio: 'ignore'})
    const c = new pg.Client({connectionString: store.url})
    await c.connect()
    await c.query("INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES ('bench_monthly', 'Bench Monthly', 999, 'month', 1, '2026-01-01', '2026-01-01')")
    await checkpoint(c)
    await c.end()
    process.stderr.write(`importing into PostgreSQL (run ${i + 1} of ${RUNS})...\n`)
    const r = await timed(process.execPath, [bin, 'charges', 'import', file, '--db', store.url, '--product', 'bench_monthly', '--json'], {cwd: root})
    if (r.code !== 0) throw new Error(`import failed (exit ${r.code}): ${r.stdout.slice(0, 500)} ${r.stderr.slice(0, 500)}`)
    const summary = JSON.parse(r.stdout)
    if (summary.inserted !== ROWS) throw new Error(`expected ${ROWS} rows inserted, got ${summary.inserted}`)
    imports.push(r.seconds)
    await store.drop()
  }
  const best = (xs) => Math.min(...xs)
  const ours = best(imports)
  const ref = best(reference)
  const how = psql ? 'psql \\copy' : 'COPY FROM STDIN through pg-copy-streams (no psql installed)'
  return [
    {name: 'PostgreSQL: import 1M payments: wall time', note: `${ROWS} rows, ${mb.toFixed(0)} MB CSV, best of ${RUNS}`, unit: 's', value: Math.round(ours * 100) / 100},
    {name: 'PostgreSQL: import 1M payments: rows/s', note: 'read, validated, written through COPY', unit: 'rows/s', value: Math.round(ROWS / ours)},
    {
      name: `PostgreSQL: import 1M payments: time vs ${psql ? 'psql \\copy' : 'plain COPY'} into a table`,
      note: `pricectl ${ours.toFixed(2)} s / ${how} ${ref.toFixed(2)} s into a plain 24-column text table (aim: at most 1.5x; no budget)`,
      unit: 'x',
      value: Math.round((ours / ref) * 100) / 100,
    },
  ]
}

const load = (url, key, options, nextBody) => loadPrices(url, key, {connections: CONNECTIONS, ...options}, nextBody)

/** The fields of /proc/PID/stat after the command's name: [1] the parent's id, [11..14] utime, stime, cutime, cstime (ticks). */
function procStat(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
}

/** CPU seconds a process used so far (/proc; undefined where there is none). */
function cpuSeconds(pid) {
  try {
    const fields = procStat(pid)
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/**
 * CPU seconds the database's processes used so far: the postmaster, its live backends, and
 * the ones that ended (the postmaster's children's time). Undefined without the postmaster's
 * id (a server of PRICECTL_BENCH_PG_URL) or /proc.
 */
function databaseCpuSeconds(postmaster) {
  if (postmaster === undefined) return undefined
  try {
    const own = procStat(postmaster)
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue
      let f
      try {
        f = procStat(pid)
      } catch {
        continue // ended meanwhile
      }
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12])
    }
    return ticks / 100
  } catch {
    return undefined
  }
}

/** Requests/s of runs side by side (one per server): their sum. */
const rps = (runs) => Math.round(runs.reduce((sum, r) => sum + r.requests.average, 0))

/** The trial ({runs}: the servers' runs side by side) with the most requests/s. */
const bestTrial = (trials) => trials.reduce((a, b) => (rps(b.runs) > rps(a.runs) ? b : a))

async function serveBench(root, dir, freshDb, postmaster) {
  const store = await freshDb()
  const bin = join(root, 'bin/run.js')
  for (const p of PRODUCTS) {
    const file = join(dir, `${p.api_id}.json`)
    writeFileSync(file, JSON.stringify(p))
    execFileSync(process.execPath, [bin, 'products', 'create', '--body', file, '--db', store.url], {stdio: 'ignore'})
  }
  const key = JSON.parse(execFileSync(process.execPath, [bin, 'keys', 'create', '--name', 'bench', '--json', '--db', store.url], {encoding: 'utf8'})).api_key
  const servers = [await startServer(root, store.url, dir, 'a'), await startServer(root, store.url, dir, 'b')]
  try {
    let i = 0
    check([await load(servers[0].url, key, {amount: USERS}, () => body(`bench-${i}`, i++))], 'locking users')
    let j = 0
    const locked = () => body(`bench-${j % USERS}`, j++ % USERS)
    check(await Promise.all(servers.map((s) => load(s.url, key, {duration: WARM_SECONDS}, locked))), 'warm-up')
    // Best of TRIALS runs, as the other benches keep the best of theirs: the machine's speed
    // swings within minutes, and interference only ever slows a run.
    const lockedTrials = []
    for (let t = 0; t < TRIALS; t++) {
      const runs = await Promise.all(servers.map((s) => load(s.url, key, {duration: SERVE_SECONDS}, locked)))
      check(runs, 'locked users')
      lockedTrials.push({runs})
    }
    const {runs: lockedRuns} = bestTrial(lockedTrials)
    let k = 0
    const fresh = () => body(`new-${k}`, k++)
    check(await Promise.all(servers.map((s) => load(s.url, key, {duration: WARM_SECONDS}, fresh))), 'warm-up, new users')
    // Each run's requests with the CPU the servers, the database and the load generator spent on them.
    const freshTrials = []
    for (let t = 0; t < TRIALS; t++) {
      const cpuBefore = servers.map((s) => cpuSeconds(s.child.pid))
      const databaseBefore = databaseCpuSeconds(postmaster)
      const loadBefore = process.cpuUsage()
      const runs = await Promise.all(servers.map((s) => load(s.url, key, {duration: 5}, fresh)))
      const loadUsed = process.cpuUsage(loadBefore)
      const databaseUsed = databaseCpuSeconds(postmaster) - databaseBefore
      const cpuUsed = servers.map((s, i) => cpuSeconds(s.child.pid) - cpuBefore[i]).reduce((a, b) => a + b, 0)
      check(runs, 'new users')
      freshTrials.push({cpuUsed, databaseUsed, loadUsed, runs})
    }
    const {cpuUsed, databaseUsed, loadUsed, runs: freshRuns} = bestTrial(freshTrials)
    // One instance with the same 10 connections.
    const alone = (next, seconds) => load(servers[0].url, key, {connections: 2 * CONNECTIONS, duration: seconds}, next)
    const oneLocked = [await alone(locked, SERVE_SECONDS)]
    check(oneLocked, 'one instance, locked users')
    const oneFresh = [await alone(fresh, 5)]
    check(oneFresh, 'one instance, new users')
    // New users again, with a Thompson experiment running on both products: each new lock gets an arm and an exposure.
    execFileSync(process.execPath, [bin, 'experiments', 'create', '--name', 'bench', '-p', 'pro_monthly,pro_yearly', '--arm', 'x0.8', '--arm', 'x1.2', '--seed', '1', '--start', '--db', store.url], {stdio: 'ignore'})
    check(await Promise.all(servers.map((s) => load(s.url, key, {duration: WARM_SECONDS}, fresh))), 'warm-up, running experiment')
    const experimentRuns = await Promise.all(servers.map((s) => load(s.url, key, {duration: 5}, fresh)))
    check(experimentRuns, 'new users, running experiment')
    const p99 = (runs) => Math.max(...runs.map((r) => r.latency.p99))
    const total = (runs) => runs.reduce((sum, r) => sum + r.requests.total, 0)
    const where = `2 instances on one database, ${CONNECTIONS} connections each`
    const perRequest = (seconds) => Math.round((seconds * 1e6) / total(freshRuns)) / 1000
    // The servers', the database's and the load generator's CPU share the 2 cores: the load
    // generator runs the same code in every run, so its CPU per request measures the machine.
    const cpu = [
      ...(Number.isNaN(cpuUsed) ? [] : [{name: 'PostgreSQL: serve x2, new users: serve CPU per request', note: `both servers' CPU (/proc) over the ${total(freshRuns)} requests`, unit: 'ms', value: perRequest(cpuUsed)}]),
      ...(Number.isNaN(databaseUsed) ? [] : [{name: 'PostgreSQL: serve x2, new users: database CPU per request', note: 'the postmaster and its backends (/proc) over the same requests', unit: 'ms', value: perRequest(databaseUsed)}]),
      {name: 'PostgreSQL: serve x2, new users: load generator CPU per request', note: 'this process (load.js) over the same requests: the same code in every run, so it measures the machine', unit: 'ms', value: perRequest((loadUsed.user + loadUsed.system) / 1e6)},
    ]
    return [
      {name: 'PostgreSQL: serve x2 POST /v1/prices, locked users', note: `${total(lockedRuns)} requests in ${SERVE_SECONDS} s, ${where}; best of ${TRIALS} runs (${lockedTrials.map((t) => rps(t.runs)).join(', ')})`, unit: 'requests/s', value: rps(lockedRuns)},
      {name: 'PostgreSQL: serve x2 POST /v1/prices, locked users, p99 latency', note: `the worse instance's p99; p50 ${lockedRuns.map((r) => r.latency.p50).join(' / ')} ms`, unit: 'ms', value: p99(lockedRuns)},
      {name: 'PostgreSQL: serve x2 POST /v1/prices, new users (computes and writes each lock)', note: `${total(freshRuns)} requests in 5 s, ${where}; best of ${TRIALS} runs (${freshTrials.map((t) => rps(t.runs)).join(', ')})`, unit: 'requests/s', value: rps(freshRuns)},
      {name: 'PostgreSQL: serve x2 POST /v1/prices, new users, p99 latency', note: "the worse instance's p99", unit: 'ms', value: p99(freshRuns)},
      ...cpu,
      {name: 'PostgreSQL: serve x2 POST /v1/prices, new users in a running experiment', note: `${total(experimentRuns)} requests in 5 s, ${where}; p99 ${p99(experimentRuns)} ms`, unit: 'requests/s', value: rps(experimentRuns)},
      {name: 'PostgreSQL: serve x1 POST /v1/prices, locked users', note: `${total(oneLocked)} requests in ${SERVE_SECONDS} s, one instance, ${2 * CONNECTIONS} connections; p99 ${p99(oneLocked)} ms`, unit: 'requests/s', value: rps(oneLocked)},
      {name: 'PostgreSQL: serve x1 POST /v1/prices, new users', note: `${total(oneFresh)} requests in 5 s, one instance, ${2 * CONNECTIONS} connections; p99 ${p99(oneFresh)} ms`, unit: 'requests/s', value: rps(oneFresh)},
    ]
  } finally {
    for (const s of servers) await stopServer(s)
    await store.drop()
  }
}

// `node bench/postgres.bench.js` on its own prints the figures.
if (import.meta.url === `file://${process.argv[1]}` && existsSync(join(import.meta.dirname, '..', 'bin', 'run.js'))) {
  for (const r of await run({root: join(import.meta.dirname, '..')})) console.log(r)
}
