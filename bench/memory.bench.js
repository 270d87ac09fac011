// Memory benchmark (npm run bench): peak RSS of `charges import` at 100,000 and at
// 1,000,000 rows of the same generated payments export (bench/import.bench.js), each in
// its own process. A streaming import holds a bounded number of rows at a time, so its
// peak stays flat as the file grows: budget at most 1.5x from 100k to 1M rows.
// Plain ESM; imports nothing from src/ (the store is prepared through the CLI and SQL).
import {execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {generatePayments} from './import.bench.js'

const SIZES = (process.env.BENCH_MEMORY_ROWS ?? '100000,1000000').split(',').map(Number)
const BUDGET = 1.5

/** Run a child to its end; peak RSS is its VmHWM from /proc (polled; it only grows). */
function peak(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(cmd, args, {stdio: ['ignore', 'pipe', 'pipe'], ...options})
    let stdout = ''
    let stderr = ''
    let hwmKb = 0
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const read = () => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
        if (m) hwmKb = Math.max(hwmKb, Number(m[1]))
      } catch {}
    }
    const poll = setInterval(read, 20)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearInterval(poll)
      resolve({code, peakMb: hwmKb / 1024, seconds: (performance.now() - started) / 1000, stderr, stdout})
    })
  })
}

/** A fresh store with the product the export's rows are filed under. */
function store(root, dir, name) {
  const db = join(dir, `${name}.db`)
  execFileSync(process.execPath, [join(root, 'bin', 'run.js'), 'db', 'migrate', '--db', db], {stdio: 'ignore'})
  const Database = createRequire(join(root, 'package.json'))('better-sqlite3')
  const sql = new Database(db)
  sql.prepare("INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES ('bench_monthly', 'Bench Monthly', 999, 'month', 1, '2026-01-01', '2026-01-01')").run()
  sql.close()
  return db
}

export async function run({root}) {
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-bench-memory-'))
  try {
    const figures = []
    for (const rows of SIZES) {
      const file = join(dir, `payments-${rows}.csv`)
      process.stderr.write(`memory: generating ${rows} rows...\n`)
      await generatePayments(file, rows)
      const db = store(root, dir, `store-${rows}`)
      process.stderr.write(`memory: importing ${rows} rows...\n`)
      const r = await peak(process.execPath, [join(root, 'bin', 'run.js'), 'charges', 'import', file, '--db', db, '--product', 'bench_monthly', '--json'], {cwd: root})
      if (r.code !== 0) throw new Error(`import of ${rows} rows failed (exit ${r.code}): ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`)
      const summary = JSON.parse(r.stdout)
      if (summary.inserted !== rows) throw new Error(`expected ${rows} rows inserted, got ${summary.inserted}`)
      figures.push({mb: statSync(file).size / 2 ** 20, peakMb: r.peakMb, rows, seconds: r.seconds})
      rmSync(file, {force: true})
    }
    const results = figures.map((f) => ({
      name: `import ${f.rows.toLocaleString('en-US')} payments: peak RSS`,
      note: `${f.mb.toFixed(0)} MB CSV, ${f.seconds.toFixed(1)} s`,
      unit: 'MB',
      value: Math.round(f.peakMb),
    }))
    if (figures.length >= 2) {
      const [small, large] = [figures[0], figures.at(-1)]
      results.push({
        budget: BUDGET,
        budgetKind: 'max',
        name: `import peak RSS, ${large.rows.toLocaleString('en-US')} vs ${small.rows.toLocaleString('en-US')} rows`,
        note: `${Math.round(large.peakMb)} MB / ${Math.round(small.peakMb)} MB: flat means streaming (the file is ${(large.rows / small.rows).toFixed(0)}x bigger)`,
        unit: 'x',
        value: Math.round((large.peakMb / small.peakMb) * 100) / 100,
      })
    }
    return results
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
}

// `node bench/memory.bench.js` on its own prints the figures.
if (import.meta.url === `file://${process.argv[1]}` && existsSync(join(import.meta.dirname, '..', 'bin', 'run.js'))) {
  for (const r of await run({root: join(import.meta.dirname, '..')})) console.log(r)
}
