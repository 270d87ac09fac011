// Pricing benchmarks: batch quotes/s through `price --input`, and the wall time of one
// cold `price` call, `--version` and `--help` next to a bare `node -e 0`.
import {execFileSync, spawnSync} from 'node:child_process'
import {closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

const PRODUCTS = [
  {api_id: 'pro_monthly', base_px: 9.99, interval: 'month', interval_count: 1, name: 'Pro monthly', country_prices: [{country: 'DE', amount: 8.99, currency: 'EUR'}]},
  {api_id: 'pro_yearly', base_px: 99, interval: 'year', interval_count: 1, name: 'Pro yearly'},
]
/** Batch runs; the best counts (BENCH_PRICE_RUNS). */
const RUNS = Number(process.env.BENCH_PRICE_RUNS ?? 3)
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'KR', 'MX', 'CA', 'AU', 'ES', 'IT', 'PL', 'TR']

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/**
 * Median wall times of several commands, run in rounds of one each (after one round not
 * counted, for a warm disk), so a machine whose speed drifts slows them all alike.
 */
function walls(commands, rounds) {
  const times = commands.map(() => [])
  for (let round = -1; round < rounds; round++) {
    for (const [i, [cmd, args]] of commands.entries()) {
      const t = process.hrtime.bigint()
      const r = spawnSync(cmd, args, {encoding: 'utf8'})
      if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`)
      if (round >= 0) times[i].push(Number(process.hrtime.bigint() - t) / 1e6)
    }
  }
  return times.map((t) => median(t))
}

/** A store with the bench catalog in a temp folder the caller removes; rates come from the default snapshot. */
export function makeStore(root) {
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-bench-'))
  const db = join(dir, 'bench.db')
  try {
    for (const p of PRODUCTS) {
      const file = join(dir, `${p.api_id}.json`)
      writeFileSync(file, JSON.stringify(p))
      execFileSync(process.execPath, [join(root, 'bin/run.js'), 'products', 'create', '--body', file, '--db', db], {stdio: 'ignore'})
    }
  } catch (error) {
    rmSync(dir, {force: true, recursive: true})
    throw error
  }
  return {db, dir}
}

export async function run({root}) {
  const {db, dir} = makeStore(root)
  try {
    return measure(root, db, dir)
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
}

function measure(root, db, dir) {
  const bin = join(root, 'bin/run.js')
  const n = 100_000
  const file = join(dir, 'requests.jsonl')
  const lines = []
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({country: COUNTRIES[i % COUNTRIES.length], integrations: ['gateway_a'], products: ['pro_monthly', 'pro_yearly'], user_id: `user-${i}`}))
  }
  writeFileSync(file, lines.join('\n') + '\n')
  // Results go to a file, as `price --input requests.jsonl > quotes.jsonl` would: the
  // figure is pricectl's, not this harness's reading of a 100 MB pipe.
  const batch = (label) => {
    const out = join(dir, `${label}.jsonl`)
    const fd = openSync(out, 'w')
    const t = process.hrtime.bigint()
    const r = spawnSync(process.execPath, [bin, 'price', '--input', file, '--db', db], {encoding: 'utf8', stdio: ['ignore', fd, 'pipe']})
    const seconds = Number(process.hrtime.bigint() - t) / 1e9
    closeSync(fd)
    if (r.status !== 0) throw new Error(`price --input (${label}) failed: ${r.stderr.slice(0, 500)}`)
    const printed = readFileSync(out, 'utf8').split('\n').filter(Boolean).length
    if (printed !== n) throw new Error(`price --input (${label}) printed ${printed} results for ${n} requests`)
    return seconds
  }
  // Best of RUNS, each on a copy of the fresh store (new users), then the same file again
  // on that store (locked users): one shared 2-core machine is noisy.
  const pristine = join(dir, 'pristine.db')
  copyFileSync(db, pristine)
  let seconds = Infinity
  let seconds2 = Infinity
  for (let i = 0; i < RUNS; i++) {
    for (const suffix of ['-wal', '-shm']) rmSync(db + suffix, {force: true})
    copyFileSync(pristine, db)
    seconds = Math.min(seconds, batch('new'))
    seconds2 = Math.min(seconds2, batch('locked'))
  }
  const qps = n / seconds

  const [node, version, help, cold] = walls(
    [
      [process.execPath, ['-e', '0']],
      [process.execPath, [bin, '--version']],
      [process.execPath, [bin, '--help']],
      [process.execPath, [bin, 'price', '-u', 'cold-user', '-p', 'pro_monthly', '--country', 'DE', '--override', '--db', db]],
    ],
    15,
  )
  return [
    {budget: 50_000, budgetKind: 'min', name: 'price --input, 100,000 new users (2 products each)', note: `${seconds.toFixed(2)} s wall, including process start, best of ${RUNS}`, unit: 'quotes/s', value: Math.round(qps)},
    {budget: 50_000, budgetKind: 'min', name: 'price --input, 100,000 locked users', note: `${seconds2.toFixed(2)} s wall, best of ${RUNS}`, unit: 'quotes/s', value: Math.round(n / seconds2)},
    {name: 'node -e 0', unit: 'ms', value: node},
    {budget: 3, name: 'pricectl --version / node -e 0', note: `${version.toFixed(0)} ms vs ${node.toFixed(0)} ms`, unit: 'x', value: version / node},
    {budget: 3, name: 'pricectl --help / node -e 0', note: `${help.toFixed(0)} ms vs ${node.toFixed(0)} ms`, unit: 'x', value: help / node},
    {budget: 5, name: 'one cold price call / node -e 0', note: `${cold.toFixed(0)} ms vs ${node.toFixed(0)} ms (median of 15 interleaved rounds)`, unit: 'x', value: cold / node},
  ]
}
