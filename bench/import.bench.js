// Import benchmark (npm run bench): a generated 1,000,000-row gateway_a payments export
// imported by `node bin/run.js charges import FILE --db TMP --json` in a child process:
// wall time, rows/s, peak RSS, and the ratio to `sqlite3 .import` of the same file into a
// database file (and, shown only, into :memory:) when sqlite3 is installed, in interleaved
// rounds, best of each. Budget (DESIGN.md): at most 3x sqlite3, under 300 MB.
// Plain ESM; imports nothing from src/ (the store is prepared through the CLI and SQL).
import {execFileSync, spawn} from 'node:child_process'
import {createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000)
/** Each command runs this many times on a fresh store; the best time counts (less noise). */
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 3)

const HEADER = [
  'id', 'Created date (UTC)', 'Amount', 'Amount Refunded', 'Currency', 'Captured', 'Converted Amount',
  'Converted Amount Refunded', 'Converted Currency', 'Decline Reason', 'Description', 'Fee',
  'Refunded date (UTC)', 'Statement Descriptor', 'Status', 'Seller Message', 'Taxes On Fee', 'Card ID',
  'Customer ID', 'Customer Description', 'Customer Email', 'Invoice ID', 'Transfer', 'user_id (metadata)',
]

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Deterministic pseudo-random ids shaped like a gateway's (random, so index writes are too). */
function rng(seed) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s
  }
}

function id(next, prefix, length) {
  let out = prefix
  for (let i = 0; i < length; i++) out += ALPHABET[next() % 62]
  return out
}

function pad(n) {
  return n < 10 ? `0${n}` : String(n)
}

function stamp(seconds) {
  const d = new Date(seconds * 1000)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
}

/** Write a payments export of `rows` rows, newest first as the gateway exports them. */
export async function generatePayments(file, rows, seed = 42) {
  const next = rng(seed)
  const customers = Array.from({length: 200_000}, () => id(next, 'cus_', 14))
  const out = createWriteStream(file)
  let buf = HEADER.join(',') + '\n'
  const end = Date.UTC(2026, 5, 30) / 1000
  const prices = ['9.99', '19.99', '4.99', '99.00', '49.00', '14.50']
  for (let i = 0; i < rows; i++) {
    const created = end - i * 29 - (next() % 29)
    const r = next()
    const status = r % 20 === 0 ? 'Refunded' : r % 33 === 1 ? 'Failed' : 'Paid'
    const currency = r % 5 === 0 ? 'eur' : r % 7 === 0 ? 'gbp' : 'usd'
    const amount = prices[r % prices.length]
    const customer = customers[next() % customers.length]
    const refunded = status === 'Refunded'
    buf += [
      id(next, 'ch_3', 23),
      stamp(created),
      amount,
      refunded ? amount : '0.00',
      currency,
      status === 'Failed' ? 'false' : 'true',
      amount,
      refunded ? amount : '0.00',
      'usd',
      status === 'Failed' ? 'card_declined' : '',
      'Subscription update',
      '0.59',
      refunded ? stamp(created + 86_400) : '',
      'ACME SAAS',
      status,
      status === 'Failed' ? 'The bank did not return any further details with this decline.' : 'Payment complete.',
      '0.00',
      id(next, 'card_', 24),
      customer,
      '',
      `${customer.slice(4, 12).toLowerCase()}@example.com`,
      id(next, 'in_', 24),
      '',
      r % 2 === 0 ? `user_${customer.slice(4)}` : '',
    ].join(',') + '\n'
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await new Promise((res) => out.once('drain', res))
      buf = ''
    }
  }
  await new Promise((res, rej) => out.end(buf, (e) => (e ? rej(e) : res())))
}

/** Run a child process; peak RSS from /proc/PID/status (VmHWM), polled. */
function timed(cmd, args, options = {}) {
  return new Promise((resolveRun, reject) => {
    const started = performance.now()
    const child = spawn(cmd, args, {stdio: ['ignore', 'pipe', 'pipe'], ...options})
    let stdout = ''
    let stderr = ''
    let peakKb = 0
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
        if (m) peakKb = Math.max(peakKb, Number(m[1]))
      } catch {}
    }, 50)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearInterval(poll)
      resolveRun({code, peakMb: peakKb / 1024, seconds: (performance.now() - started) / 1000, stderr, stdout})
    })
  })
}

function hasSqlite3() {
  try {
    execFileSync('sqlite3', ['-version'], {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

export async function run({root}) {
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-bench-import-'))
  try {
    const file = join(dir, 'payments.csv')
    process.stderr.write(`generating ${ROWS} rows...\n`)
    await generatePayments(file, ROWS)
    const mb = statSync(file).size / 2 ** 20

    // Let the generated file reach the disk, so its write-back does not slow the runs.
    try {
      execFileSync('sync')
    } catch {}

    // Rounds of sqlite3 then pricectl, so a machine whose speed drifts (a shared VM) slows
    // both alike; the best of each counts. sqlite3 reads the file first in each round, which
    // also brings it into the page cache for pricectl.
    // Two references: sqlite3 importing into a database file (what pricectl does: a durable
    // store), which carries the budget, and into :memory:, shown for comparison.
    const reference = []
    const memoryReference = []
    const sqlite3 = hasSqlite3()
    const Database = createRequire(join(root, 'package.json'))('better-sqlite3')
    let best
    let peakMb = 0
    for (let i = 0; i < RUNS; i++) {
      if (sqlite3) {
        const target = join(dir, `sqlite3-${i}.db`)
        reference.push(await timed('sqlite3', [target, '-cmd', '.mode csv', `.import ${file} t`, 'SELECT count(*) FROM t']))
        rmSync(target, {force: true})
        memoryReference.push(await timed('sqlite3', [':memory:', '-cmd', '.mode csv', `.import ${file} t`, 'SELECT count(*) FROM t']))
      }
      // A fresh store with one product for the rows (the export names none: --product).
      const db = join(dir, `store-${i}.db`)
      execFileSync(process.execPath, [join(root, 'bin', 'run.js'), 'db', 'migrate', '--db', db], {stdio: 'ignore'})
      const sql = new Database(db)
      sql.prepare("INSERT INTO products (api_id, name, base_px_minor, interval, interval_count, created_at, updated_at) VALUES ('bench_monthly', 'Bench Monthly', 999, 'month', 1, '2026-01-01', '2026-01-01')").run()
      sql.close()
      process.stderr.write(`importing (run ${i + 1} of ${RUNS})...\n`)
      const r = await timed(process.execPath, [join(root, 'bin', 'run.js'), 'charges', 'import', file, '--db', db, '--product', 'bench_monthly', '--json'], {cwd: root})
      if (r.code !== 0) throw new Error(`import failed (exit ${r.code}): ${r.stdout.slice(0, 500)} ${r.stderr.slice(0, 500)}`)
      const summary = JSON.parse(r.stdout)
      if (summary.inserted !== ROWS) throw new Error(`expected ${ROWS} rows inserted, got ${summary.inserted}`)
      peakMb = Math.max(peakMb, r.peakMb)
      if (!best || r.seconds < best.seconds) best = r
      for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, {force: true})
    }
    const r = best

    const results = []
    let note = `${ROWS} rows, ${mb.toFixed(0)} MB CSV, best of ${RUNS}`
    if (reference.length > 0) {
      const best = (xs) => xs.reduce((a, b) => (b.seconds < a.seconds ? b : a))
      const ref = best(reference)
      const mem = best(memoryReference)
      note += `; sqlite3 .import ${ref.seconds.toFixed(2)} s into a file, ${mem.seconds.toFixed(2)} s into :memory:`
      results.push(
        {budget: 3, budgetKind: 'max', name: 'import 1M payments: time vs sqlite3 .import (into a database file)', note: `pricectl ${r.seconds.toFixed(2)} s / sqlite3 ${ref.seconds.toFixed(2)} s`, unit: 'x', value: Math.round((r.seconds / ref.seconds) * 100) / 100},
        {name: 'import 1M payments: time vs sqlite3 .import (into :memory:)', note: `pricectl ${r.seconds.toFixed(2)} s / sqlite3 ${mem.seconds.toFixed(2)} s (no budget: no durable store)`, unit: 'x', value: Math.round((r.seconds / mem.seconds) * 100) / 100},
      )
    } else {
      note += '; sqlite3 not installed, no ratio'
    }
    results.unshift(
      {name: 'import 1M payments: wall time', note, unit: 's', value: Math.round(r.seconds * 100) / 100},
      {name: 'import 1M payments: rows/s', note: 'read, validated, written', unit: 'rows/s', value: Math.round(ROWS / r.seconds)},
      {budget: 300, budgetKind: 'max', name: 'import 1M payments: peak RSS', note: `VmHWM of the import process (highest of ${RUNS} runs)`, unit: 'MB', value: Math.round(peakMb)},
    )
    return results
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
}

// `node bench/import.bench.js` on its own prints the figures.
if (import.meta.url === `file://${process.argv[1]}` && existsSync(join(import.meta.dirname, '..', 'bin', 'run.js'))) {
  for (const r of await run({root: join(import.meta.dirname, '..')})) console.log(r)
}
