import {type Column, csv, outputWidth, paragraph, recordTable, table} from '../render.js'
import {fromMinor} from '../../currency.js'
import type {ExperimentOutput, ExperimentResults, SimulationResult} from '../../schemas/experiments.js'
import {barChart, intervalChart, lineChart} from '../../experiments/chart.js'
import {armUsdMinor, describeArm} from '../../experiments/model.js'
import type {Experiment} from '../../experiments/store.js'

/** Tables and charts of the experiments commands (stdout without --json). */

const target = (e: Pick<Experiment, 'audience' | 'countries'>) =>
  `${e.audience ? `audience ${e.audience}` : 'every audience'}, ${e.countries.length ? e.countries.join(' ') : 'every country'}`

export function experimentDetail(e: Experiment): string {
  const head = recordTable([
    ['id', e.id],
    ['name', e.name],
    ['type', e.type],
    ['status', e.status],
    ['allocation', e.allocation],
    ['products', e.products.map((p) => p.api_id).join(', ')],
    ['target', target(e)],
    ['seed', e.seed],
    ['created', e.created_at],
    ['started', e.started_at ?? ''],
    ['stopped', e.stopped_at ?? ''],
  ])
  const arms = table(e.arms, [
    {header: 'arm', value: (a) => a.id},
    {header: 'definition', value: (a) => describeArm(e, a)},
    {
      header: e.type === 'price' ? 'USD (base x arm, before rounding and localization)' : 'shows',
      value: (a) =>
        e.type === 'price'
          ? e.products.map((p) => `${p.api_id} ${fromMinor(armUsdMinor(a, p) ?? p.base_px_minor, 'USD')}${bounds(p)}`).join('\n')
          : (a.products ?? e.products.map((p) => p.api_id)).join(', '),
    },
  ])
  return `${head}\n${arms}`
}

function bounds(p: {max_px_minor: null | number; min_px_minor: null | number}): string {
  if (p.min_px_minor === null && p.max_px_minor === null) return ''
  return ` [${p.min_px_minor === null ? '' : fromMinor(p.min_px_minor, 'USD')}..${p.max_px_minor === null ? '' : fromMinor(p.max_px_minor, 'USD')}]`
}

const listColumns: Column<ExperimentOutput>[] = [
  {header: 'id', value: (e) => e.id},
  {header: 'name', value: (e) => e.name},
  {header: 'type', value: (e) => e.type},
  {header: 'status', value: (e) => e.status},
  {header: 'allocation', value: (e) => e.allocation},
  {header: 'products', value: (e) => e.products.join(' ')},
  {header: 'arms', value: (e) => e.arms.map((a) => a.id).join(' ')},
  {header: 'target', value: (e) => target(e)},
  {header: 'started_at', value: (e) => e.started_at ?? ''},
]

export const experimentsTable = (es: ExperimentOutput[]) => table(es, listColumns)
export const experimentsCsv = (es: ExperimentOutput[]) => csv(es, listColumns)

const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`
const money = (x: number) => x.toFixed(4)

type ArmRow = ExperimentResults['arms'][number]

const resultColumns: Column<ArmRow>[] = [
  {header: 'arm', value: (a) => a.arm_id},
  {header: 'price', value: (a) => a.label},
  {header: 'visitors', value: (a) => a.visitors},
  {header: 'conversions', value: (a) => a.conversions},
  {header: 'conversion rate', value: (a) => pct(a.conversion_rate, 2)},
  {header: '95% interval', value: (a) => `${pct(a.conversion_rate_ci[0], 2)} – ${pct(a.conversion_rate_ci[1], 2)}`},
  {header: 'revenue USD', value: (a) => a.revenue.toFixed(2)},
  {header: 'revenue/visitor', value: (a) => money(a.revenue_per_visitor)},
  {header: 'rev/visitor 95%', value: (a) => `${money(a.revenue_per_visitor_ci[0])} – ${money(a.revenue_per_visitor_ci[1])}`},
  {header: 'P(best)', value: (a) => pct(a.probability_best)},
]

// CSV: the price label last, so scripts reading the earlier columns by position keep working.
export const resultsCsv = (r: ExperimentResults) => csv(r.arms, [...resultColumns.filter((c) => c.header !== 'price'), resultColumns.find((c) => c.header === 'price')!])

export function resultsReport(r: ExperimentResults): string {
  const e = r.experiment
  const head = `experiment ${e.id} "${e.name}" (${e.type}, ${e.allocation}, ${e.status}): ${r.visitors} visitors, ${r.conversions} conversions, ${r.revenue.toFixed(2)} USD`
  const body = table(r.arms, resultColumns)
  const chart = intervalChart(
    r.arms.map((a) => ({hi: a.revenue_per_visitor_ci[1], label: String(a.arm_id), lo: a.revenue_per_visitor_ci[0], point: a.revenue_per_visitor, text: `${money(a.revenue_per_visitor)} USD`})),
    {maxLine: outputWidth(), title: paragraph('revenue per visitor (● observed, ├─┤ 95% credible interval)')},
  )
  const best = barChart(
    r.arms.map((a) => ({label: String(a.arm_id), text: pct(a.probability_best), value: a.probability_best})),
    {max: 1, maxLine: outputWidth(), title: 'probability of being best'},
  )
  const verdict =
    r.visitors === 0
      ? e.status === 'running'
        ? 'no winner yet: no visitors yet (it is running: users priced from now on are exposed, e.g. "pricectl price --product PRODUCT --user-id USER")'
        : `no winner yet: no visitors yet (start the experiment, then price some users: "pricectl experiments start ${e.id}")`
      : r.best_arm === null
        ? 'no winner yet: no conversions recorded (record subscriptions or charges of exposed users)'
        : `best so far: arm ${r.best_arm} (${pct(r.arms.find((a) => a.arm_id === r.best_arm)!.probability_best)} likely; ${r.draws} draws, seed ${r.seed})` +
          (r.sample.enough
            ? `; apply it with "pricectl experiments conclude ${e.id} ${r.best_arm} --dry-run"`
            : `; below the minimum sample (${r.sample.min_visitors} visitors, ${r.sample.min_conversions} conversions per arm): not a winner yet`)
  return [paragraph(head), body, chart, '', best, '', paragraph(verdict)].join('\n')
}

export function simulationReport(r: SimulationResult): string {
  const arms = table(r.arms, [
    {header: 'arm', value: (a) => (a.arm_id === r.best_arm ? `${a.arm_id} (best)` : a.arm_id)},
    {header: 'price USD', value: (a) => a.price_usd},
    {header: 'conversion', value: (a) => pct(a.conversion_probability, 2)},
    {header: 'true revenue/visitor', value: (a) => money(a.true_revenue_per_visitor)},
  ])
  const policies = Object.entries(r.policies) as [string, NonNullable<SimulationResult['policies']['oracle']>][]
  const summary = table(policies, [
    {header: 'policy', value: ([name]) => (name === 'oracle' ? 'oracle (best fixed arm)' : name)},
    {header: 'revenue/visitor', value: ([, p]) => money(p.revenue_per_visitor)},
    {header: 'revenue USD', value: ([, p]) => p.revenue.toFixed(2)},
    {header: 'conversions', value: ([, p]) => p.conversions},
    {header: `best arm, last ${r.last}`, value: ([, p]) => pct(p.best_arm_share_last)},
    {header: 'visitors per arm', value: ([, p]) => Object.entries(p.allocation).map(([a, n]) => `${a}: ${n}`).join(', ')},
  ])
  const symbols: Record<string, string> = {oracle: '·', thompson: '●', uniform: '○'}
  const chart = lineChart(
    policies.map(([name, p]) => ({name, points: p.series.map((s) => ({x: s.visitors, y: s.revenue_per_visitor})), symbol: symbols[name] ?? '*'})),
    {title: 'cumulative revenue per visitor (USD)', xLabel: 'visitors'},
  )
  return [`${r.visitors} visitors per policy, product ${r.product}, seed ${r.seed}${r.store ? `, store ${r.store}` : ''}`, arms, summary, chart].join('\n')
}
