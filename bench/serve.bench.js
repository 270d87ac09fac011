// pricectl serve: POST /v1/prices driven by load.js from this process against
// `node bin/run.js serve` (a second process) on loopback. Budget (issue 8): 2,000
// requests/s and p99 under 20 ms for locked users, over 10 s. New users (each request
// computes and writes a lock) are reported without a budget. Each kind of request is measured
// after WARM_SECONDS of it.
import {execFileSync, spawn} from 'node:child_process'
import {closeSync, openSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'

import {load as drive} from './load.js'
import {makeStore} from './price.bench.js'

const USERS = 1000
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'KR', 'MX', 'CA', 'AU', 'ES', 'IT', 'PL', 'TR']
const CONNECTIONS = 10
/**
 * Seconds of each kind of request before it is measured, as a server in use runs warm: every
 * process spends more CPU per request in its first seconds of a kind (V8 optimizes a function
 * only after it has run a while; a database fills its caches). postgres.bench.js's two servers
 * spent 1.28-1.46 ms of CPU per new user over 5 s after 1 s of new users, 0.67-0.87 ms after
 * 10 to 60 s; the database 0.25-0.27 against 0.21-0.25 ms. postgres.bench.js warms its servers
 * as long.
 */
export const WARM_SECONDS = 10

/** A request body of user `user`, the i-th of the run: two products, gateway_a, a country in turn. */
export const body = (user, i) => JSON.stringify({country: COUNTRIES[i % COUNTRIES.length], integrations: ['gateway_a'], products: ['pro_monthly', 'pro_yearly'], user_id: user})

/** `node bin/run.js serve` of `root` on a free port of loopback, its stderr in DIR/serve-NAME.log: {child, url}. */
export async function startServer(root, db, dir, name = 'a') {
  const logPath = join(dir, `serve-${name}.log`)
  const log = openSync(logPath, 'w')
  // The access log stays on (as operators run it), written to a file rather than a pipe
  // this process would have to drain while it drives the load.
  const child = spawn(process.execPath, [join(root, 'bin/run.js'), 'serve', '--port', '0', '--db', db], {stdio: ['ignore', 'ignore', log]})
  closeSync(log)
  const until = Date.now() + 30_000
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(readFileSync(logPath, 'utf8'))
    if (m) return {child, url: m[1]}
    if (child.exitCode !== null || Date.now() > until) throw new Error(`serve did not start: ${readFileSync(logPath, 'utf8').slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** SIGTERM, and wait for the exit. */
export async function stopServer(server) {
  server.child.kill('SIGTERM')
  await new Promise((r) => (server.child.exitCode === null ? server.child.once('exit', r) : r()))
}

/** POST /v1/prices with key `key`: load.js with its options (connections, and amount or duration), the body of each request from nextBody(). */
export function loadPrices(url, key, options, nextBody) {
  return drive({...options, headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'}, nextBody, path: '/v1/prices', url})
}

/** Throws on any run that had a non-2xx answer or a failed request. */
export function check(runs, what) {
  for (const r of runs) if (r.non2xx > 0 || r.errors > 0) throw new Error(`${what}: ${r.non2xx} non-2xx responses, ${r.errors} errors`)
}

export async function run({root}) {
  const {db, dir} = makeStore(root)
  try {
    return await measure(root, db, dir)
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
}

const load = (url, key, limit, nextBody) => loadPrices(url, key, {connections: CONNECTIONS, ...limit}, nextBody)

async function measure(root, db, dir) {
  const key = JSON.parse(execFileSync(process.execPath, [join(root, 'bin/run.js'), 'keys', 'create', '--name', 'bench', '--json', '--db', db], {encoding: 'utf8'})).api_key
  const server = await startServer(root, db, dir)
  try {
    // Lock USERS users (first calls), then warm up on them.
    let i = 0
    check([await load(server.url, key, {amount: USERS}, () => body(`bench-${i}`, i++))], 'locking users')
    let j = 0
    const locked = () => body(`bench-${j % USERS}`, j++ % USERS)
    check([await load(server.url, key, {duration: WARM_SECONDS}, locked)], 'warm-up')
    const lockedRun = await load(server.url, key, {duration: 10}, locked)
    check([lockedRun], 'locked users')

    let n = 0
    const fresh = () => body(`new-${n}`, n++)
    check([await load(server.url, key, {duration: WARM_SECONDS}, fresh)], 'warm-up, new users')
    const freshRun = await load(server.url, key, {duration: 5}, fresh)
    check([freshRun], 'new users')

    const note = (r, s) => `${r.requests.total} requests in ${s} s over ${CONNECTIONS} connections, p50 ${r.latency.p50} ms`
    return [
      {budget: 2000, budgetKind: 'min', name: 'serve POST /v1/prices, locked users', note: note(lockedRun, 10), unit: 'requests/s', value: Math.round(lockedRun.requests.average)},
      {budget: 20, name: 'serve POST /v1/prices, locked users, p99 latency', note: `p50 ${lockedRun.latency.p50} ms, p99 ${lockedRun.latency.p99} ms`, unit: 'ms', value: lockedRun.latency.p99},
      {name: 'serve POST /v1/prices, new users (computes and writes each lock)', note: `${note(freshRun, 5)}, p99 ${freshRun.latency.p99} ms`, unit: 'requests/s', value: Math.round(freshRun.requests.average)},
    ]
  } finally {
    await stopServer(server)
  }
}
