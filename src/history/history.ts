import {readSeconds} from '../dates.js'
import {InvalidInputError, NotFoundError, OperationalError} from '../errors.js'
import type {ImpactScope} from '../pricing/impact.js'
import type {StorePort} from '../store/port.js'
import {type ChangeRecord, type ChangeRow, RECORDED_TABLES} from '../store/port/history.js'
import {commandContext} from './context.js'

export type HistoryQuery = {actor?: string; limit?: number; product?: string; since?: string; table?: string}

export const DEFAULT_LIMIT = 50

/** The changes that match, newest first. */
export async function listChanges(store: StorePort, query: HistoryQuery = {}): Promise<ChangeRecord[]> {
  const limit = query.limit ?? DEFAULT_LIMIT
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidInputError(`--limit: expected a whole number of at least 1, got ${limit}`)
  if (query.table !== undefined && !RECORDED_TABLES.some((t) => t.table === query.table)) {
    throw new InvalidInputError(`--table: ${JSON.stringify(query.table)} is not a recorded table (recorded: ${RECORDED_TABLES.map((t) => t.table).join(', ')})`)
  }
  let since: string | undefined
  if (query.since !== undefined) {
    const s = readSeconds(query.since)
    if (typeof s === 'string') throw new InvalidInputError(`--since: ${JSON.stringify(query.since)} is not a valid date or time (${s}); expected YYYY-MM-DD or an ISO 8601 date-time`)
    since = new Date(s * 1000).toISOString()
  }
  const productIds = query.product === undefined ? undefined : await store.history.productIds(query.product)
  if (productIds !== undefined && productIds.length === 0) {
    throw new NotFoundError(`no product with api_id ${JSON.stringify(query.product)}, now or in the history (list them with: pricectl products list)`)
  }
  return await store.history.list({actor: query.actor, limit, productIds, since, table: query.table})
}

/** One change and its rows. */
export async function showChange(store: StorePort, id: number): Promise<{change: ChangeRecord; rows: ChangeRow[]}> {
  const change = await requireChange(store, id)
  return {change, rows: await store.history.rows(id)}
}

async function requireChange(store: StorePort, id: number): Promise<ChangeRecord> {
  if (!Number.isSafeInteger(id) || id < 1) throw new InvalidInputError(`CHANGE: expected a change id (a whole number from "pricectl history"), got ${id}`)
  const change = await store.history.get(id)
  if (!change) throw new NotFoundError(`no change ${id} in the history (list them with: pricectl history)`)
  return change
}

/** "products: 1 updated; country_prices: 203 deleted, 1 inserted". */
export function describeRows(rows: ChangeRecord['rows']): string {
  const by = new Map<string, string[]>()
  for (const r of rows) {
    const list = by.get(r.table) ?? []
    list.push(`${r.count} ${r.action}`)
    by.set(r.table, list)
  }
  return [...by].map(([t, l]) => `${t}: ${l.join(', ')}`).join('; ')
}

/** A row's key as shown: `country_prices (5, DE)`. */
export function rowName(r: {key: unknown[]; table: string}): string {
  return `${r.table} (${r.key.map((k) => (typeof k === 'string' ? k : JSON.stringify(k))).join(', ')})`
}

export type RevertResult = {
  /** The new change that reverted it (undefined on a dry run, or when nothing needed restoring). */
  change?: ChangeRecord
  /** Rows of the reverted change whose current state differs from its after image, or that later changes wrote. */
  conflicts: string[]
  dry_run: boolean
  /** Rows restored (or that would be). */
  restored: number
  reverted: ChangeRecord
}

class DryRun extends Error {}

/**
 * Restore the rows of change `id` as they were before it, as a new change (marked as its
 * revert). Refused when a later change wrote the same rows, or a row is no longer what the
 * change left (written outside pricectl), unless `force`: the before images win then.
 */
export async function revertChange(store: StorePort, id: number, options: {dryRun?: boolean; force?: boolean} = {}): Promise<RevertResult> {
  const reverted = await requireChange(store, id)
  const rows = await store.history.rows(id)
  const locked = [...new Set(rows.filter((r) => RECORDED_TABLES.find((t) => t.table === r.table)?.noRevert).map((r) => r.table))]
  if (locked.length > 0) {
    throw new OperationalError(
      `change ${id} wrote ${locked.join(', ')}, which revert does not restore (a revoked API key stays revoked): create or revoke keys with "pricectl keys create" / "pricectl keys revoke" instead`,
    )
  }
  // The last image of each row within the change is what the change left.
  const left = new Map<string, ChangeRow>()
  for (const r of rows) left.set(rowName(r), r)
  const later = await store.history.laterWritesOfRows(id)
  const conflicts: string[] = []
  const laterIds = [...new Set(later.map((l) => l.change_id))]
  for (const [name, r] of left) {
    if (later.some((l) => rowName(l) === name)) continue
    if (JSON.stringify(await store.history.currentImage(r.table, r.key)) !== JSON.stringify(r.after)) conflicts.push(name)
  }
  if (reverted.reverted_by !== null && laterIds.includes(reverted.reverted_by) && !options.force) {
    throw new OperationalError(`change ${id} was already reverted by change ${reverted.reverted_by}: to bring change ${id} back, run "pricectl revert ${reverted.reverted_by}"`, {
      later_changes: laterIds,
    })
  }
  if ((laterIds.length > 0 || conflicts.length > 0) && !options.force) {
    const parts: string[] = []
    if (laterIds.length > 0) {
      const names = [...new Set(later.map((l) => rowName(l)))]
      parts.push(
        `later change${laterIds.length === 1 ? '' : 's'} ${laterIds.join(', ')} wrote the same rows (${shortList(names)})`,
      )
    }
    if (conflicts.length > 0) parts.push(`${conflicts.length} row${conflicts.length === 1 ? ' is' : 's are'} no longer what change ${id} left (${shortList(conflicts)}), changed outside the history`)
    const first = laterIds.length > 0 ? `revert ${laterIds.toReversed().join(', then ')} first, or ` : ''
    throw new OperationalError(`cannot revert change ${id}: ${parts.join('; ')}: ${first}pass --force to restore change ${id}'s before images anyway (see "pricectl history show ${id}")`, {
      conflicts: [...new Set([...later.map((l) => rowName(l)), ...conflicts])],
      later_changes: laterIds,
    })
  }
  const restore = undoOrder(rows).map((r) => ({before: r.before, key: r.key, table: r.table}))
  const restored = new Set(rows.map((r) => rowName(r))).size
  const all = [...new Set([...later.map((l) => rowName(l)), ...conflicts])]
  const apply = async () => {
    if (!await store.history.active()) await store.history.begin(commandContext('pricectl', 'revert', [String(id)]))
    await store.history.note({reverts: id, summary: `revert of change ${id}`})
    await store.history.restore(restore)
    return await store.history.currentChange()
  }
  if (options.dryRun) {
    try {
      await store.transaction(
        async () => {
          await apply()
          throw new DryRun()
        },
        {write: true},
      )
    } catch (error) {
      if (!(error instanceof DryRun)) throw error
    }
    return {conflicts: all, dry_run: true, restored, reverted}
  }
  const changeId = await store.transaction(apply, {write: true})
  return {change: changeId === undefined ? undefined : await store.history.get(changeId), conflicts: all, dry_run: false, restored, reverted}
}

/**
 * The rows to undo, last written first; within a run of rows of the same table and action
 * (the 203 country prices an update deleted) the written order is kept, so rows come back
 * in the order they were (foreign keys are checked at commit, so parents may follow).
 */
function undoOrder(rows: ChangeRow[]): ChangeRow[] {
  const runs: ChangeRow[][] = []
  for (const r of rows) {
    const last = runs.at(-1)
    if (last && last[0].table === r.table && last[0].action === r.action) last.push(r)
    else runs.push([r])
  }
  // A row written twice in a run (updated twice) goes back to its first before image.
  return runs.toReversed().flatMap((run) => {
    const seen = new Set<string>()
    return run.filter((r) => !seen.has(rowName(r)) && seen.add(rowName(r)))
  })
}

const PRODUCT_TABLES = new Set(['products', 'country_prices', 'product_integrations', 'product_features', 'product_trials'])
const EXPERIMENT_TABLES = new Set(['experiments', 'experiment_products', 'arms'])

/**
 * What a revert of change `id` can reprice, for its price-impact report: the products it
 * wrote when it wrote only products, the experiments it wrote, audiences when it wrote
 * some; every product otherwise (FX rates, rounding, localization, coupons, ...).
 */
export async function revertScope(store: StorePort, id: number): Promise<ImpactScope> {
  const rows = await store.history.rows(id)
  const scope: ImpactScope = {}
  if (rows.some((r) => r.table === 'audiences' || r.table === 'audience_prices')) scope.audiences = true
  const experiments = [...new Set(rows.filter((r) => EXPERIMENT_TABLES.has(r.table)).map((r) => Number(r.key[0])))]
  if (experiments.length > 0) scope.experiments = experiments
  const other = rows.some((r) => !PRODUCT_TABLES.has(r.table) && !EXPERIMENT_TABLES.has(r.table))
  if (other) return scope
  const apiIds = new Map<number, string>()
  for (const r of rows) {
    const image = r.after ?? r.before
    if (r.table === 'products' && typeof image?.api_id === 'string') apiIds.set(Number(image.id), image.api_id)
  }
  const products = new Set<string>()
  for (const r of rows.filter((x) => x.product_id !== null)) {
    const apiId = apiIds.get(r.product_id!) ?? ((await store.history.currentImage('products', [r.product_id]))?.api_id as string | undefined)
    if (apiId === undefined) return scope
    products.add(apiId)
  }
  if (products.size > 0) scope.products = [...products].sort()
  return scope
}

function shortList(names: string[]): string {
  return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`
}
