// Experiment benchmarks: batch pricing (`price --input`) with a running Thompson experiment
// on both products against the same batch without one (budget: at most 1.5x slower), and
// `experiments results` on the exposures that batch made.
import {execFileSync, spawnSync} from 'node:child_process'
import {rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {makeStore} from './price.bench.js'

const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'KR', 'MX', 'CA', 'AU', 'ES', 'IT', 'PL', 'TR']

function batch(bin, db, file, n) {
  const t = process.hrtime.bigint()
  const r = spawnSync(process.execPath, [bin, 'price', '--input', file, '--db', db], {encoding: 'utf8', maxBuffer: 1 << 30})
  const seconds = Number(process.hrtime.bigint() - t) / 1e9
  if (r.status !== 0) throw new Error(`price --input failed: ${r.stderr.slice(0, 500)}`)
  return {qps: n / seconds, seconds, stdout: r.stdout}
}

export async function run({root}) {
  const stores = []
  try {
    stores.push(makeStore(root))
    stores.push(makeStore(root))
    return measure(root, ...stores)
  } finally {
    for (const s of stores) rmSync(s.dir, {force: true, recursive: true})
  }
}

function measure(root, plain, experiment) {
  const bin = join(root, 'bin/run.js')
  const n = 100_000
  execFileSync(process.execPath, [bin, 'experiments', 'create', '--name', 'bench', '-p', 'pro_monthly,pro_yearly', '--arm', 'x0.8', '--arm', 'x1.2', '--seed', '1', '--start', '--db', experiment.db], {stdio: 'ignore'})
  const lines = []
  for (let i = 0; i < n; i++) {
    lines.push(JSON.stringify({country: COUNTRIES[i % COUNTRIES.length], integrations: ['gateway_a'], products: ['pro_monthly', 'pro_yearly'], user_id: `user-${i}`}))
  }
  const text = lines.join('\n') + '\n'
  writeFileSync(join(plain.dir, 'requests.jsonl'), text)
  writeFileSync(join(experiment.dir, 'requests.jsonl'), text)
  // Alternate the two runs (twice each) so a busy machine slows both alike; keep the best of each.
  const without = []
  const withExp = []
  for (let round = 0; round < 2; round++) {
    const suffix = `-${round}`
    for (const [s, out] of [
      [plain, without],
      [experiment, withExp],
    ]) {
      const file = join(s.dir, `requests${suffix}.jsonl`)
      writeFileSync(file, text.replaceAll('"user-', `"r${round}-user-`))
      out.push(batch(bin, s.db, file, n))
    }
  }
  const best = (xs) => xs.reduce((a, b) => (b.qps > a.qps ? b : a))
  const w = best(without)
  const e = best(withExp)
  const arms = new Set(
    e.stdout
      .split('\n')
      .filter(Boolean)
      .slice(0, 1000)
      .map((l) => JSON.parse(l).variants.arm_id),
  )
  if (arms.size < 2) throw new Error(`the experiment bench assigned only ${[...arms].join(', ')}`)

  const t = process.hrtime.bigint()
  const r = spawnSync(process.execPath, [bin, 'experiments', 'results', '1', '--json', '--db', experiment.db], {encoding: 'utf8'})
  const resultsMs = Number(process.hrtime.bigint() - t) / 1e6
  if (r.status !== 0) throw new Error(`experiments results failed: ${r.stderr}`)
  const visitors = JSON.parse(r.stdout).visitors

  return [
    {name: 'price --input, 100,000 new users, running experiment', note: `${e.seconds.toFixed(2)} s wall (best of 2), arms ${[...arms].join(' ')}`, unit: 'requests/s', value: Math.round(n / e.seconds)},
    {budget: 1.5, name: 'batch pricing: no experiment / running experiment', note: `${Math.round(w.qps)} vs ${Math.round(e.qps)} requests/s`, unit: 'x', value: w.qps / e.qps},
    {name: 'experiments results on the bench exposures', note: `${visitors} visitors`, unit: 'ms', value: resultsMs},
  ]
}
