import {Flags} from '@oclif/core'
import {writeFileSync} from 'node:fs'

import {BaseCommand} from '../../src/cli/base.js'
import {csv, table} from '../../src/cli/render.js'
import {InvalidInputError} from '../../src/errors.js'
import {reservedKeyProblem} from '../../src/schemas/no-zod.js'
import {parseExperimentId} from '../../src/experiments/manage.js'
import {comparePrices, describeChange, gateComparison, githubAnnotations, junitReport, rowKey, parseTolerance, type PreviewError, type PreviewScope, previewPrices, readSnapshot, rowWhere, scopeFlags, snapshotJson} from '../../src/pricing/preview.js'
import {type PreviewRow, PricePreviewOutput} from '../../src/schemas/price.js'

export default class PricePreview extends BaseCommand<typeof PricePreview> {
  static override readsOnly = true
  static override summary = 'Lock-free prices of products x countries; the price gate for CI'
  static override description = `Lock-free prices of products x countries; with --against, the price gate for CI

Prices every product (or each -p) in every country (or each --country) as a new user would
be quoted them, without an experiment arm, and writes nothing: no lock, no user, no
exposure. Default countries: those with a country price or a localization factor, plus the
store's default country. --against FILE compares with a snapshot made by
"price preview --output json > FILE" and exits 1 when a price moved beyond --tolerance, a
currency changed, or a row was added or removed; --update then rewrites FILE. Snapshot rows
outside -p, --country, --audience or --arm are not compared (and --update keeps them).
On GitHub Actions (GITHUB_ACTIONS=true) a failing gate also prints an ::error annotation per
changed price; --junit FILE writes a JUnit XML report for other CI systems.
--audience prices as given audiences (x audiences); --experiment ID prices under each of
its arms (x arms, --arm to pick), whatever the experiment's status: what a visitor of the
arm would be quoted.
A product that cannot be priced (a price above a gateway's maximum, a missing FX rate) is
reported in "errors" (and on stderr) and the other products are priced; the run exits 1.`
  static override examples = [
    '<%= config.bin %> price preview',
    '<%= config.bin %> price preview -p pro_monthly --country DE,FR,IN --integration gateway_a',
    '<%= config.bin %> price preview --output json > prices.json',
    '<%= config.bin %> price preview --against prices.json --tolerance 1%',
    '<%= config.bin %> price preview --against prices.json --update',
    '<%= config.bin %> price preview --against prices.json --junit price-gate.xml',
    '<%= config.bin %> price preview -p pro_monthly --experiment 3 --arm all --country US,DE',
    '<%= config.bin %> price preview --audience all --country IN',
    '<%= config.bin %> price preview --country DE,US --columns product,country,currency,price,net,tax,gross,tax_behavior',
  ]
  static override flags = {
    against: Flags.string({description: 'Snapshot to compare with (JSON or CSV from price preview); exit 1 on a difference beyond --tolerance'}),
    arm: Flags.string({description: 'With --experiment: the arm(s) to price under (repeatable, or comma-separated; "all", the default, is every arm with the baseline)', multiple: true}),
    audience: Flags.string({description: 'Price as this audience (repeatable, or comma-separated; "default" for none, "all" for every audience and the default); default: as --feature matches', multiple: true}),
    columns: Flags.string({description: 'Table and CSV columns, comma-separated, in order (default: product,country,audience,currency,price,display,price_usd,layer and the gateways); tax columns: net, tax, gross, tax_rate, tax_behavior'}),
    country: Flags.string({description: 'Country to price in (repeatable, or comma-separated; default: countries with country prices or localization factors, plus the default country)', multiple: true}),
    experiment: Flags.string({description: 'A price experiment (any status) whose arms to preview: one row per arm, with an "arm" column'}),
    feature: Flags.string({description: 'User feature KEY=VALUE, to price as a matching audience would (repeatable)', multiple: true}),
    integration: Flags.string({description: 'Include the amount of this gateway (repeatable): gateway_a..gateway_d', multiple: true}),
    junit: Flags.string({description: 'With --against: also write the comparison as a JUnit XML report to this file (one test case per price)'}),
    output: Flags.string({default: 'table', description: 'Output format (--json: json)', options: ['table', 'csv', 'json']}),
    product: Flags.string({char: 'p', description: 'Product api_id (repeatable, or comma-separated; default: every product)', multiple: true}),
    tolerance: Flags.string({default: '0', description: 'With --against: allowed move, in currency units (0.05) or percent (1%)'}),
    update: Flags.boolean({description: 'With --against: rewrite the snapshot with the fresh prices (exit 0)'}),
  }
  static override get outputSchema() {
    return PricePreviewOutput
  }

  async run() {
    const {flags} = this
    const list = (v?: string[]) => v?.flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean)
    if ((flags.update || flags.tolerance !== '0' || flags.junit) && !flags.against) throw new InvalidInputError('--update, --tolerance and --junit compare with a snapshot: add --against FILE')
    const tolerance = parseTolerance(flags.tolerance)
    const features: Record<string, string> = {}
    for (const f of flags.feature ?? []) {
      const i = f.indexOf('=')
      if (i <= 0) throw new InvalidInputError(`--feature: expected KEY=VALUE, got ${JSON.stringify(f)}`)
      const reserved = reservedKeyProblem(f.slice(0, i), 'feature')
      if (reserved) throw new InvalidInputError(`--feature: ${reserved}`)
      features[f.slice(0, i)] = f.slice(i + 1)
    }
    // Read the snapshot first: a bad file is reported before any pricing.
    const before = flags.against ? readSnapshot(flags.against) : undefined
    const errors: PreviewError[] = []
    const rows = await previewPrices(await this.store(), {
      errors,
      arms: list(flags.arm),
      audiences: list(flags.audience),
      countries: list(flags.country)?.map((c) => c.toUpperCase()),
      experiment: flags.experiment === undefined ? undefined : parseExperimentId(flags.experiment),
      features: flags.feature?.length ? features : undefined,
      integrations: list(flags.integration),
      products: list(flags.product),
    })
    // A product that cannot be priced is reported and the rest priced; the run then exits 1.
    const reportErrors = (): void => {
      if (errors.length === 0) return
      for (const e of errors) process.stderr.write(`error: ${e.product} in ${e.country}${e.audience === 'default' ? '' : ` (${e.audience})`}${e.arm === undefined ? '' : ` arm ${e.arm}`}: ${e.message}\n`)
      const products = [...new Set(errors.map((e) => e.product))]
      process.stderr.write(`price preview: ${products.length} product${products.length === 1 ? '' : 's'} could not be priced (${products.join(', ')}); the other prices are above\n`)
      this.exit(1)
    }
    if (!before) {
      const result = {...(errors.length > 0 ? {errors} : {}), rows, success: errors.length === 0}
      if (this.jsonEnabled()) {
        if (errors.length === 0) return result
        this.logJson(result)
        this.exit(1)
      }
      if (flags.output === 'json') process.stdout.write(snapshotJson(rows))
      else if (flags.output === 'csv') process.stdout.write(csv(rows, pick(columns(rows), flags.columns)))
      else this.log(table(rows, pick(columns(rows), flags.columns)))
      reportErrors()
      return undefined
    }
    const every = (v?: string[]) => (v?.some((x) => x === 'all') ? undefined : v)
    const scope: PreviewScope = {arms: every(list(flags.arm)), audiences: every(list(flags.audience)), countries: list(flags.country)?.map((c) => c.toUpperCase()), products: list(flags.product)}
    const comparison = comparePrices(before, rows, tolerance, scope)
    const {changes, compared, failed, notCompared} = comparison
    if (flags.update) {
      // Rows outside the flags stay as the snapshot has them: narrowing a refresh never drops them.
      const kept = notCompared.map((r) => ({...(r.record as PreviewRow), ...r}) as PreviewRow & {record?: unknown})
      for (const k of kept) delete k.record
      const fresh = [...rows, ...kept].sort((a, b) => rowKey(a).localeCompare(rowKey(b)))
      writeFileSync(flags.against!, flags.against!.endsWith('.csv') ? csv(fresh, columns(fresh, new Set(kept))) : snapshotJson(fresh))
    }
    if (flags.junit) writeFileSync(flags.junit, junitReport(flags.against!, rows, comparison, scope))
    const gate = gateComparison(flags.against!, comparison, flags.tolerance, flags.update)
    const {passed} = gate
    const result = {comparison: gate, ...(errors.length > 0 ? {errors} : {}), rows, success: passed && errors.length === 0}
    if (this.jsonEnabled()) {
      if (result.success) return result
      this.logJson(result)
    } else for (const c of changes) this.log(describeChange(c))
    const summary = flags.update
      ? `price gate: ${failed} difference(s) from ${flags.against}; snapshot updated with ${rows.length} prices${notCompared.length > 0 ? ` (its ${notCompared.length} other rows kept)` : ''}`
      : failed
        ? `price gate failed: ${failed} of ${compared} prices differ from ${flags.against} beyond tolerance ${flags.tolerance}; if intended, run "pricectl price preview --against ${flags.against} --update" and commit it`
        : `price gate passed: ${compared} prices match ${flags.against} (tolerance ${flags.tolerance})`
    process.stderr.write(summary + '\n')
    if (notCompared.length > 0) {
      const shown = notCompared.slice(0, 5).map((r) => rowWhere(r)).join(', ')
      process.stderr.write(`price gate: ${notCompared.length} snapshot row${notCompared.length === 1 ? ' was' : 's were'} outside ${scopeFlags(scope)} and not compared (${shown}${notCompared.length > 5 ? ', ...' : ''})\n`)
    }
    if (!passed && process.env.GITHUB_ACTIONS === 'true') for (const line of githubAnnotations(changes, flags.against!)) process.stderr.write(line + '\n')
    if (!passed) this.exit(1)
    reportErrors()
    return undefined
  }
}

/**
 * The table's and CSV's columns. `kept`: rows of a CSV snapshot that --update keeps as the
 * file has them (their cells are the file's, gateway columns included).
 */
function columns(rows: PreviewRow[], kept: ReadonlySet<object> = new Set()) {
  const cells = (r: PreviewRow) => r as unknown as Record<string, unknown>
  const gateways = [...new Set(rows.flatMap((r) => (kept.has(r) ? Object.keys(r).filter((k) => k.startsWith('gateway_') && cells(r)[k]) : Object.keys(r.integrations ?? {}))))].sort()
  return columnsOf(rows, gateways).map((c) => ({header: c.header, value: (r: PreviewRow) => (kept.has(r) ? String(cells(r)[c.header] ?? '') : c.value(r))}))
}

/** The tax columns --columns can name (docs/tax.md): the split of the shown price. */
const TAX_COLUMNS = [
  {header: 'net', value: (r: PreviewRow) => r.tax?.net ?? ''},
  {header: 'tax', value: (r: PreviewRow) => r.tax?.tax ?? ''},
  {header: 'gross', value: (r: PreviewRow) => r.tax?.gross ?? ''},
  {header: 'tax_rate', value: (r: PreviewRow) => r.tax?.rate ?? ''},
  {header: 'tax_behavior', value: (r: PreviewRow) => r.tax?.behavior ?? ''},
]

/** --columns: the named columns in the order given (the default columns and the tax columns); an unknown name is exit 2. */
function pick<C extends {header: string}>(defaults: C[], wanted: string | undefined): C[] {
  if (wanted === undefined) return defaults
  const all = [...defaults, ...(TAX_COLUMNS as unknown as C[])]
  return wanted
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean)
    .map((w) => {
      const c = all.find((x) => x.header === w)
      if (!c) throw new InvalidInputError(`--columns: unknown column ${JSON.stringify(w)} (expected some of ${all.map((x) => x.header).join(', ')})`)
      return c
    })
}

function columnsOf(rows: PreviewRow[], gateways: string[]) {
  return [
    {header: 'product', value: (r: PreviewRow) => r.product},
    {header: 'country', value: (r: PreviewRow) => r.country},
    {header: 'audience', value: (r: PreviewRow) => r.audience},
    ...(rows.some((r) => r.arm !== undefined) ? [{header: 'arm', value: (r: PreviewRow) => r.arm ?? ''}] : []),
    {header: 'currency', value: (r: PreviewRow) => r.currency},
    {header: 'price', value: (r: PreviewRow) => r.price},
    {header: 'display', value: (r: PreviewRow) => r.display},
    {header: 'price_usd', value: (r: PreviewRow) => r.price_usd},
    {header: 'layer', value: (r: PreviewRow) => r.layer},
    ...gateways.map((g) => ({header: g, value: (r: PreviewRow) => (r.integrations?.[g] ? `${r.integrations[g].amount} ${r.integrations[g].currency}` : '')})),
  ]
}
