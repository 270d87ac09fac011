import {countryCurrency} from '../currency.js'
import {NotFoundError, OperationalError} from '../errors.js'
import type {FxRateFilter} from '../store/port/config.js'
import type {StorePort} from '../store/port.js'
import {defaultFxSnapshot} from './snapshot.js'
import {DEFAULT_COUNTRY_SETTING, FALLBACK_COUNTRY} from '../settings.js'
import {type FxRate, fxToday, ratesOn} from './rates.js'
import {type FxKind, fxKind} from './sources.js'

/**
 * `fx delete` and `fx prune`: remove rates in one transaction, then check that every
 * currency the store prices with still has a rate usable today.
 *
 * fx_rates keeps one row per currency and day, so an operator rate dated on the bundled
 * snapshot's day replaced the snapshot's row. Removing that operator rate (when the
 * removal would not also have removed the snapshot's row) puts the snapshot's rate back,
 * as if the two had been stored side by side: pruning an import never leaves a currency
 * with less than the fresh store had.
 */

/** Which rates to remove (operatorOnly: `fx delete` never removes the snapshot). */
export type RemovalFilter = FxRateFilter

export type RemovalSummary = {
  currencies: {currency: string; from: string; removed: number; to: string}[]
  dryRun: boolean
  /** Currencies the store prices with that have no rate usable today any more (only with force). */
  inUseWithoutRate: {currency: string; uses: string[]}[]
  removed: number
  /** Snapshot rates put back where a removed operator rate had replaced them. */
  restored: FxRate[]
  sources: {kind: FxKind; removed: number; source: string}[]
  today: string
  /** Currencies that had a rate usable today and have none now. */
  withoutRate: string[]
}

export type RemovalOptions = {
  dryRun?: boolean
  /** Remove even when a currency the store prices with is left without a usable rate. */
  force?: boolean
  today?: string
}

/** Thrown inside the transaction to roll a dry run back, carrying its summary out (caught below, never shown). */
class DryRun extends Error {
  constructor(readonly summary: RemovalSummary) {
    super()
  }
}

export async function removeRates(store: StorePort, filter: RemovalFilter, options: RemovalOptions = {}): Promise<RemovalSummary> {
  const today = options.today ?? fxToday()
  try {
    return await store.transaction(
      async () => {
        const before = await ratesOn(store, today, today)
        const matching = await store.config.fxMatching(filter)
        const currencies = matching.currencies
        const sources = matching.sources.map((s) => ({kind: fxKind(s.source), removed: s.removed, source: s.source}))
        const restorable = await snapshotRowsToRestore(store, filter)
        const removed = await store.config.deleteFxRates(filter)
        await store.config.saveFxRates(restorable)
        const after = await ratesOn(store, today, today)
        // USD is in both (ratesOn always has it), so it is never without a rate.
        const withoutRate = [...before.keys()].filter((c) => !after.has(c)).sort()
        const uses = withoutRate.length > 0 ? await currenciesInUse(store) : new Map<string, string[]>()
        const inUseWithoutRate = withoutRate.filter((c) => uses.has(c)).map((c) => ({currency: c, uses: uses.get(c)!}))
        if (inUseWithoutRate.length > 0 && !options.force) {
          const list = inUseWithoutRate.map((u) => `${u.currency} (${u.uses.join(', ')})`).join(', ')
          const first = inUseWithoutRate[0].currency
          throw new OperationalError(
            `refusing to remove ${removed} ${removed === 1 ? 'rate' : 'rates'}: ${list} would have no FX rate usable today (${today}); add one first ("pricectl fx set ${first} RATE" or "pricectl fx import FILE"), narrow the removal (--currency, --before), or pass --force`,
          )
        }
        const summary: RemovalSummary = {
          currencies,
          dryRun: Boolean(options.dryRun),
          inUseWithoutRate,
          removed,
          restored: restorable,
          sources,
          today,
          withoutRate,
        }
        if (options.dryRun) throw new DryRun(summary)
        return summary
      },
      {write: true},
    )
  } catch (error) {
    if (error instanceof DryRun) return error.summary
    throw error
  }
}

/**
 * Snapshot rows to put back: the bundled snapshot's (currency, day) where the removal
 * takes an operator row of that day, the removal would not have taken the snapshot's own
 * row, and the store still holds this snapshot (same label) elsewhere.
 */
async function snapshotRowsToRestore(store: StorePort, filter: RemovalFilter): Promise<FxRate[]> {
  const snap = defaultFxSnapshot()
  if (!await store.config.hasFxSource(snap.source)) return []
  const hits = await store.config.fxOperatorCurrenciesOn(filter, snap.date)
  const out: FxRate[] = []
  for (const currency of hits) {
    const rate = snap.rates[currency]
    if (rate === undefined) continue
    // Would the same filter take the snapshot's own row? Asked of the store, so the rule is the same.
    const row = {currency, date: snap.date, rate, source: snap.source}
    if (await store.config.fxFilterTakes(filter, row)) continue
    out.push(row)
  }
  return out
}

/**
 * Currencies the store prices or records money in, each with what uses it: removing their
 * last usable rate would break prices (or writes) in them.
 */
export async function currenciesInUse(store: StorePort): Promise<Map<string, string[]>> {
  const rows = await store.config.moneyUses()
  const uses = new Map<string, string[]>()
  const add = (currency: string | undefined, use: string) => {
    if (!currency) return
    const list = uses.get(currency) ?? []
    if (!list.includes(use)) list.push(use)
    uses.set(currency, list)
  }
  for (const r of rows) add(r.use === 'localization factors' ? countryCurrency(r.currency) : r.currency, r.use)
  add(countryCurrency(await store.config.setting(DEFAULT_COUNTRY_SETTING) ?? FALLBACK_COUNTRY), 'the default country')
  return uses
}

/** `fx delete CURRENCY [--date D]`: nothing matching is "not found" (exit 1), naming what is on file. */
export async function deleteRates(store: StorePort, currency: string, date: string | undefined, options: RemovalOptions = {}): Promise<RemovalSummary> {
  const summary = await removeRates(store, {currencies: [currency], date, operatorOnly: true}, options)
  if (summary.removed > 0) return summary
  const snapshot = await store.config.snapshotDate(currency, date)
  const what = `no rate of yours for ${currency}${date ? ` dated ${date}` : ''}`
  if (snapshot) {
    throw new NotFoundError(`${what}: ${date ? 'the rate of that day is' : `${currency} only has`} the bundled snapshot's, which "pricectl fx prune --source snapshot --currency ${currency}" removes`)
  }
  throw new NotFoundError(`${what}: see "pricectl fx list --currency ${currency} --history"`)
}

/** The sentence and the stderr notes of a removal, shared by `fx delete` and `fx prune`. */
export function describeRemoval(s: RemovalSummary): {message: string; notes: string[]} {
  const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`
  const verb = s.dryRun ? 'dry run: would remove' : 'removed'
  let message: string
  if (s.removed === 0) {
    message = `${s.dryRun ? 'dry run: ' : ''}no rates matched; nothing removed`
  } else {
    const from = s.currencies.reduce((a, c) => (c.from < a ? c.from : a), s.currencies[0].from)
    const to = s.currencies.reduce((a, c) => (c.to > a ? c.to : a), s.currencies[0].to)
    const who = s.currencies.length === 1 ? s.currencies[0].currency : `${s.currencies.length} currencies`
    const span = from === to ? `dated ${from}` : `dated ${from}..${to}`
    const sources = s.sources.map((x) => `${x.source}${s.sources.length > 1 ? ` (${x.removed})` : ''}`).join(', ')
    message = `${verb} ${n(s.removed, 'rate')} of ${who}, ${span}, from ${sources}`
  }
  const notes: string[] = []
  if (s.restored.length > 0) {
    const list = s.restored.map((r) => r.currency).join(', ')
    notes.push(`${s.dryRun ? 'would put back' : 'put back'} the bundled snapshot's rate of ${s.restored[0].date} for ${list} (the removed rate had replaced it)`)
  }
  for (const u of s.inUseWithoutRate) notes.push(`warning: ${u.currency} is used by ${u.uses.join(', ')} and has no FX rate usable today: prices and writes in it fail until you add one`)
  const others = s.withoutRate.filter((c) => !s.inUseWithoutRate.some((u) => u.currency === c))
  if (others.length > 0) {
    const shown = others.slice(0, 12).join(', ') + (others.length > 12 ? ', ...' : '')
    const one = others.length === 1
    notes.push(`note: ${n(others.length, 'currency', 'currencies')} ${s.dryRun ? 'would be' : one ? 'is now' : 'are now'} without a rate (${shown}); requests priced in ${one ? 'it' : 'them'} fail until you add one`)
  }
  return {message, notes}
}

/** The --json body of a removal. */
export function removalJson(s: RemovalSummary, message: string) {
  return {
    currencies: s.currencies,
    dry_run: s.dryRun,
    in_use_without_rate: s.inUseWithoutRate,
    message,
    removed: s.removed,
    restored: s.restored,
    sources: s.sources,
    success: true as const,
    without_rate: s.withoutRate,
  }
}
