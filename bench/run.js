#!/usr/bin/env node
// npm run bench: runs every bench/*.bench.js (each exports `run()` returning results),
// prints each figure with its budget and ratio, and writes BENCHMARKS.md.
import {execFileSync} from 'node:child_process'
import {chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {cpus, tmpdir, totalmem} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
execFileSync('npm', ['run', 'build'], {cwd: root, stdio: ['ignore', 'ignore', 'inherit']})

const only = process.argv.slice(2)
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort()

/**
 * A result: {name, value, unit, budget?, budgetKind?: 'max'|'min', reference?, note?}.
 * ratio is value / budget for 'max' budgets (<= 1 passes) and budget / value for 'min'.
 */
const results = []
// Every temp file of the run (the benches' and their children's: TMPDIR is inherited) goes
// in one folder, removed at the end, also when a bench fails or the run is interrupted.
const runDir = mkdtempSync(join(tmpdir(), 'pricectl-bench-run-'))
// Traversable by others (not listable): the PostgreSQL bench's server runs as another user when root.
chmodSync(runDir, 0o711)
process.env.TMPDIR = runDir
const cleanup = () => rmSync(runDir, {force: true, maxRetries: 3, recursive: true})
process.once('SIGINT', () => {
  cleanup()
  process.exit(130)
})
try {
  for (const f of files) {
    process.stderr.write(`== ${f}\n`)
    const mod = await import(join(here, f))
    for (const r of await mod.run({root})) {
      results.push(r)
      process.stdout.write(line(r) + '\n')
    }
  }
} finally {
  cleanup()
}

function ratio(r) {
  if (r.budget === undefined) return undefined
  return r.budgetKind === 'min' ? r.budget / r.value : r.value / r.budget
}

function line(r) {
  const q = ratio(r)
  const verdict = q === undefined ? '' : q <= 1 ? 'ok' : 'OVER BUDGET'
  const budget = r.budget === undefined ? '' : ` (budget ${r.budgetKind === 'min' ? '>=' : '<='} ${r.budget} ${r.unit}, ratio ${q.toFixed(2)} ${verdict})`
  return `${r.name}: ${fmt(r.value)} ${r.unit}${budget}${r.note ? ` - ${r.note}` : ''}`
}

function fmt(v) {
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 3 : 1)
}

const failed = results.filter((r) => (ratio(r) ?? 0) > 1)
const md = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}.`,
  'Ratio is against the budget of each figure (at most 1.00 is within budget).',
  '',
  '| figure | value | budget | ratio | note |',
  '|---|---|---|---|---|',
  ...results.map((r) => {
    const q = ratio(r)
    return `| ${r.name} | ${fmt(r.value)} ${r.unit} | ${r.budget === undefined ? '' : `${r.budgetKind === 'min' ? '≥' : '≤'} ${r.budget} ${r.unit}`} | ${q === undefined ? '' : q.toFixed(2)} | ${r.note ?? ''} |`
  }),
  '',
]
if (only.length === 0) writeFileSync(join(root, 'BENCHMARKS.md'), md.join('\n'))
if (failed.length > 0) {
  process.stderr.write(`${failed.length} figure(s) over budget\n`)
  process.exitCode = 1
}
