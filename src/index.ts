/**
 * pricectl as a library (docs/library.md): a thin facade over the engine for scripts that
 * would otherwise spawn the CLI. Bodies as the spec's (`--json`'s), typed errors, and never
 * stdout, a prompt or an exit. Keep it thin: no state beyond the store handle, every function
 * forwards to the engine.
 */
import type {z} from 'zod'

import {InvalidInputError, OperationalError} from './errors.js'
import {upperCode} from './currency.js'
import {importFiles} from './import/importer.js'
import {batchPricer, CHUNK_SIZE} from './pricing/batch.js'
import {PricingContext} from './pricing/context.js'
import {calculatePrice} from './pricing/price.js'
import {comparePrices, gateComparison, parseTolerance, previewPrices as previewRows, readSnapshot} from './pricing/preview.js'
import {requireMoment, resolveZone} from './dates.js'
import {revenueReport as report} from './revenue/report.js'
import type {PricePreviewOutput, PriceRequest as PriceRequestSchema, PriceResult} from './schemas/price.js'
import type {ImportSummary, RevenueReport} from './schemas/revenue.js'
import {openStore as openSqliteStore} from './store/db.js'
import type {StorePort} from './store/port.js'

/**
 * Errors the functions throw on purpose, with the CLI's exit code in `exitCode`:
 * InvalidInputError (2: bad request, option or file; nothing was written), NotFoundError,
 * OperationalError and ConflictError (1: the work could not be done). Anything else
 * thrown is a bug. `body` holds extra fields of the spec's error body.
 */
export {ConflictError, InvalidInputError, NotFoundError, OperationalError, PricectlError} from './errors.js'

export type {PreviewRow, PriceResult, ProductPrice} from './schemas/price.js'
export type {ImportSummary, ReportRow, RevenueReport} from './schemas/revenue.js'

/** A price request: the spec's POST /price body (`user_id` or `ip`, `products`, `country`, ...). */
export type PriceRequest = z.input<typeof PriceRequestSchema>

/** `price preview`'s JSON body: the rows, and the comparison when `against` was given. */
export type PreviewResult = z.output<typeof PricePreviewOutput>

/** An open store. Close it when done; a closed handle is refused by every function. */
export interface Store {
  /** The store file. */
  readonly path: string
  /** Why the store cannot be written (read-only file system, permissions); unset when it can. */
  readonly readOnly?: string
  /** Whether close() was called. */
  readonly closed: boolean
  close(): Promise<void>
}

export type OpenStoreOptions = {
  /** Apply pending schema migrations (default true); false refuses nothing but leaves an older store as it is. */
  migrate?: boolean
}

const ports = new WeakMap<Store, StorePort>()

class StoreHandle implements Store {
  constructor(
    readonly path: string,
    readonly readOnly: string | undefined,
  ) {}

  get closed(): boolean {
    return !ports.has(this)
  }

  async close(): Promise<void> {
    // Closed at once: a call made while the store closes is refused.
    const port = ports.get(this)
    ports.delete(this)
    await port?.close()
  }
}

/**
 * Open (creating it when missing, with owner-only permissions) and migrate the SQLite store
 * at `path`. The same file the CLI opens with `--db PATH`.
 */
export function openStore(path: string, options: OpenStoreOptions = {}): Store {
  if (typeof path !== 'string' || path === '') throw new InvalidInputError(`openStore: expected the path of the store file, got ${JSON.stringify(path)}`)
  const port = openSqliteStore(path, {migrate: options.migrate})
  const handle = new StoreHandle(port.path, port.readOnly)
  ports.set(handle, port)
  return handle
}

function openedPort(store: Store): StorePort {
  const port = ports.get(store)
  if (port) return port
  if (store instanceof StoreHandle) throw new OperationalError(`the store ${store.path} is closed: open it again with openStore(path)`)
  throw new InvalidInputError('expected a store opened with openStore(path)')
}

export type PriceCallOptions = {
  /** A GeoLite2/ip-location-db country .mmdb file for requests that carry an `ip` (default: the bundled one). */
  geoipDb?: string
}

/**
 * Price one request as `pricectl price --json` / POST /price does: the first call for a
 * user computes the quote and locks it; later calls return the locked quote (until
 * `override: true`). Throws InvalidInputError for a bad request.
 */
export async function price(store: Store, request: PriceRequest, options: PriceCallOptions = {}): Promise<PriceResult> {
  const ctx = await PricingContext.open(openedPort(store), {geoipDb: options.geoipDb})
  return calculatePrice(ctx, request)
}

/** A request priceMany could not price: its position in the input and why (the batch goes on). */
export type PriceFailure = {index: number; message: string; success: false}

export type PriceOutcome = PriceFailure | PriceResult

export type PriceManyOptions = PriceCallOptions & {
  /** Requests per write transaction (default 5000). */
  batchSize?: number
  /**
   * Called with each outcome in input order, as soon as it is known; when given, outcomes
   * are not gathered (`results` is empty): for inputs too big to hold in memory.
   */
  onResult?: (outcome: PriceOutcome, index: number) => Promise<void> | void
}

export type PriceManyResult = {
  failed: number
  priced: number
  read: number
  /** One outcome per request, in input order: a PriceResult, or a PriceFailure (`success: false`). */
  results: PriceOutcome[]
}

/**
 * Price many requests with the batch pricer of `price --input`: one catalog read, requests
 * priced synchronously, thousands per write transaction. A request that fails is reported
 * in its slot and the rest go on; the call itself throws only when the store fails.
 */
export async function priceMany(store: Store, requests: AsyncIterable<PriceRequest> | Iterable<PriceRequest>, options: PriceManyOptions = {}): Promise<PriceManyResult> {
  const batchSize = options.batchSize ?? 5000
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new InvalidInputError(`batchSize: expected a whole number of at least 1, got ${JSON.stringify(options.batchSize)}`)
  if (requests === null || typeof requests !== 'object' || !(Symbol.iterator in requests || Symbol.asyncIterator in requests)) {
    throw new InvalidInputError('priceMany: expected an array or (async) iterable of price requests')
  }
  const ctx = await PricingContext.open(openedPort(store), {geoipDb: options.geoipDb})
  const results: PriceOutcome[] = []
  const {onResult} = options
  // Outcomes come inside the store transaction of their group: handed on after it commits,
  // so a callback that throws or waits never holds (or breaks) the transaction.
  let group: {index: number; outcome: PriceOutcome}[] = []
  const pricer = batchPricer(ctx, {batchSize, chunkSize: CHUNK_SIZE}, {
    drain() {
      const outcomes = group
      group = []
      if (!onResult) {
        for (const o of outcomes) results.push(o.outcome)
        return undefined
      }
      return (async () => {
        for (const o of outcomes) await onResult(o.outcome, o.index)
      })()
    },
    failure: (index, message) => group.push({index, outcome: {index, message, success: false}}),
    mark: () => group.length,
    result: (index, outcome) => group.push({index, outcome}),
    rewind: (mark) => (group.length = mark as number),
  })
  let index = 0
  for await (const request of requests as AsyncIterable<PriceRequest>) {
    const waiting = pricer.handle(index++, request)
    if (waiting) await waiting
  }
  await pricer.finish()
  return {...pricer.summary, results}
}

export type PreviewOptions = {
  /** Countries to price in (default: those with a country price or a localization factor, plus the default country). */
  countries?: string[]
  /** User features, to price as a matching audience would. */
  features?: Record<string, boolean | number | string>
  /** Gateways whose amounts to include: gateway_a..gateway_d. */
  integrations?: string[]
  /** Product api_ids (default: every product). */
  products?: string[]
  /** A snapshot file (`price preview --output json` or csv) to compare with: the result then has `comparison`. */
  against?: string
  /** With `against`: allowed move, in currency units ("0.05") or percent ("1%"); default "0". */
  tolerance?: string
}

/**
 * Lock-free prices of products × countries, as a new user would be quoted them, writing
 * nothing (`price preview --json`). With `against`, also the comparison of the price gate:
 * `comparison.passed` is false when a price moved beyond the tolerance, a currency changed
 * or a row was added or removed.
 */
export async function previewPrices(store: Store, options: PreviewOptions = {}): Promise<PreviewResult> {
  const tolerance = options.tolerance ?? '0'
  if (options.tolerance !== undefined && options.against === undefined) throw new InvalidInputError('tolerance compares with a snapshot: add against: FILE')
  const parsedTolerance = parseTolerance(tolerance)
  const before = options.against === undefined ? undefined : readSnapshot(options.against)
  const rows = await previewRows(openedPort(store), {
    countries: options.countries?.map(upperCode),
    features: options.features,
    integrations: options.integrations,
    products: options.products,
  })
  if (!before) return {rows, success: true}
  // The rows asked for are the scope: snapshot rows of other products or countries are not compared.
  const scope = {countries: options.countries?.map(upperCode), products: options.products}
  const comparison = gateComparison(options.against!, comparePrices(before, rows, parsedTolerance, scope), tolerance)
  return {comparison, rows, success: comparison.passed}
}

export type ImportOptions = {
  /** Rows per transaction (default $PRICECTL_IMPORT_BATCH, else 250000). */
  batchSize?: number
  /** Validate and count what would change; write nothing. */
  dryRun?: boolean
  /** Overwrite the rejects path when it exists and is not a rejects CSV of an earlier import. */
  force?: boolean
  /** Files read and validated at once (default: the cores, at most 4). */
  jobs?: number
  /** A JSON mapping file describing another layout (docs/revenue.md). */
  mapping?: string
  /** Force a preset instead of detecting it from the header. */
  preset?: string
  /** Product api_id for rows that name no product. */
  product?: string
  /** Where to write rejected rows (default: FILE.rejects.csv; for a folder FOLDER/KIND.rejects.csv; for several files KIND.rejects.csv beside the first). */
  rejects?: string
  /** IANA time zone of dates in the file without an offset (default UTC, or the mapping's time_zone). */
  tz?: string
  /** After each batch: rows read so far and bytes of the files read so far. */
  onProgress?: (rows: number, bytes: number) => void
}

/**
 * Import a payments export (`charges import FILE --json`), or several: `file` may be a
 * folder (every *.csv in it, by name) or an array of files and folders, imported as one
 * (`charges import FILE... --json`: one summary with `files`, one rejects file). Re-running
 * changes nothing; an interrupted run resumes. Rejected rows do not throw: they are written
 * to `rejects_file` and the summary says `success: false` with the message the CLI prints;
 * the other rows are imported.
 */
export function importCharges(store: Store, file: string | readonly string[], options: ImportOptions = {}): Promise<ImportSummary> {
  return runImport(store, 'charges', file, options)
}

/** Import a subscriptions export (`subscriptions import FILE --json`); see importCharges. */
export function importSubscriptions(store: Store, file: string | readonly string[], options: ImportOptions = {}): Promise<ImportSummary> {
  return runImport(store, 'subscriptions', file, options)
}

async function runImport(store: Store, kind: 'charges' | 'subscriptions', file: string | readonly string[], o: ImportOptions): Promise<ImportSummary> {
  const paths = typeof file === 'string' ? [file] : file
  if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== 'string' || p === '')) {
    throw new InvalidInputError(`import ${kind}: expected the path of a CSV export or folder, or an array of them, got ${JSON.stringify(file)}`)
  }
  const port = openedPort(store)
  const r = await importFiles(
    port as Parameters<typeof importFiles>[0],
    {batchSize: o.batchSize, dryRun: o.dryRun, force: o.force, jobs: o.jobs, kind, paths, mapping: o.mapping, preset: o.preset, product: o.product, rejects: o.rejects, tz: o.tz},
    {progress: o.onProgress},
  )
  const several = r.files.length > 1
  if (r.rejected > 0) {
    const message = `${r.rejected} of ${r.read} rows rejected; see ${r.rejects_file} (${several ? 'source file, line' : 'line'} and reason per row), fix them and run the import again${r.dry_run ? '' : ' (rows already imported are unchanged by a re-run)'}`
    return {...r, message, success: false}
  }
  const what = r.dry_run ? 'dry run (nothing written)' : 'imported'
  const message = `${kind} ${what}${several ? ` from ${r.files.length} files` : ''}: ${r.read} read, ${r.inserted} inserted, ${r.updated} updated, ${r.unchanged} unchanged, ${r.stale} stale, ${r.rejected} rejected (${r.preset}, ${r.rows_per_second} rows/s)`
  return {...r, message, success: true}
}

/** A moment: UNIX seconds, a Date, or text the CLI takes (ISO date or date-time, or UNIX seconds). */
export type Moment = Date | number | string

export type RevenueReportOptions = {
  /** Rows per ISO week, calendar month (the default) or quarter (UTC), per country or per product. */
  by?: 'country' | 'month' | 'product' | 'quarter' | 'week'
  /** Start (default: 11 months before the current month). */
  since?: Moment
  /** End; a date given as text includes its whole day (default: end of the current month). */
  until?: Moment
  /** IANA zone of dates and date-times given as text without an offset (default UTC). */
  tz?: string
}

/** Revenue in USD (`revenue report --json`): MRR, active, new and churned subscriptions, net charge revenue, ARPU, MRR movements, churn and retention rates, LTV. */
export async function revenueReport(store: Store, options: RevenueReportOptions = {}): Promise<RevenueReport> {
  const by = options.by ?? 'month'
  if (!['country', 'month', 'product', 'quarter', 'week'].includes(by)) throw new InvalidInputError(`by: expected week, month, quarter, country or product, got ${JSON.stringify(by)}`)
  const zone = resolveZone(options.tz, 'tz')
  const since = seconds(options.since, 'since', zone, false)
  const until = seconds(options.until, 'until', zone, true)
  if (since !== undefined && until !== undefined && until <= since) throw new InvalidInputError(`until (${String(options.until)}) is before since (${String(options.since)})`)
  return await report(openedPort(store), {by, since, until})
}

function seconds(m: Moment | undefined, what: string, zone: string | undefined, end: boolean): number | undefined {
  if (m === undefined) return undefined
  if (m instanceof Date) {
    if (Number.isNaN(m.getTime())) throw new InvalidInputError(`${what}: an invalid Date`)
    return Math.floor(m.getTime() / 1000) + (end ? 1 : 0)
  }
  if (typeof m === 'number') {
    if (!Number.isFinite(m)) throw new InvalidInputError(`${what}: expected UNIX seconds, got ${m}`)
    return Math.floor(m) + (end ? 1 : 0)
  }
  if (typeof m !== 'string') throw new InvalidInputError(`${what}: expected a Date, UNIX seconds or an ISO date, got ${JSON.stringify(m)}`)
  const moment = requireMoment(m, what, {zone})
  return end ? (moment.dayEnd ?? moment.seconds + 1) : moment.seconds
}
