import {InvalidInputError, OperationalError} from '../errors.js'
import {describeMove, type ImpactScope, largestMoves, measureImpact, moveSize, pct, type PriceImpact, type PriceImpactChange} from '../pricing/impact.js'
import type {StorePort} from '../store/port.js'
import {CONFIRM_ABOVE, DEFAULT_MAX_CHANGE_PCT, type ImpactFlagValues} from './impact-flags.js'
import {table} from './render.js'
import {isInteractive} from './tty.js'

/** Rows of the impact table after a change that was applied (a dry run shows them all). */
const APPLIED_ROWS = 20

function side(s: PriceImpactChange['before']): string {
  return s ? s.display : '-'
}

/** The impact as people read it: a table of the prices that change, what is dropped, the summary line. */
export function renderImpact(impact: PriceImpact, options: {limit?: number} = {}): string {
  const lines: string[] = []
  // After a change, the prices that changed, largest move first (the rows shown are the ones
  // to look at); new prices (a new product) only counted. A dry run lists every row in order.
  const rows = options.limit === undefined ? impact.changes : largestMoves(impact.changes)
  const shown = options.limit === undefined ? rows : rows.slice(0, options.limit)
  if (shown.length > 0) {
    lines.push(
      table(shown, [
        {header: 'product', value: (c) => c.product},
        {header: 'country', value: (c) => c.country},
        {header: 'audience', value: (c) => c.audience},
        {header: 'before', value: (c) => side(c.before)},
        {header: 'after', value: (c) => side(c.after)},
        {header: 'change', value: (c) => (c.pct_change !== null ? pct(c.pct_change) : c.change === 'currency' ? `${c.before!.currency} -> ${c.after!.currency}` : c.change)},
        {header: 'note', value: (c) => c.note ?? ''},
      ]),
    )
    if (shown.length < rows.length) lines.push(`... and ${rows.length - shown.length} more (all of them: --dry-run, or --json)`)
  }
  for (const d of impact.dropped) {
    lines.push(`drops ${d.count} country ${d.count === 1 ? 'price' : 'prices'} of ${d.product}: ${d.countries.slice(0, 20).join(', ')}${d.count > 20 ? ', ...' : ''}`)
  }
  lines.push(`price impact: ${impact.summary}`)
  return lines.join('\n')
}

export type ImpactOptions = {
  /** The person already confirmed this change on the terminal (a delete's question): not asked twice. */
  confirmed?: boolean
}

export type ImpactIO = {
  flags: ImpactFlagValues
  json: boolean
  /** Results (stdout): the report of a dry run. */
  log: (text: string) => void
  /** Notes (stderr, silent under --json): the report of an applied change. */
  note: (text: string) => void
  store: StorePort
}

/**
 * The rows --max-change-pct looks at: what anyone in a country is quoted (the default persona:
 * a user without features, a country-wide audience included). The price of an audience with
 * feature rules or of an experiment arm is the stated purpose of the command that sets it
 * (its --price or --arm names the move), and a package row moves when the package shows
 * other products; those rows still count against --max-changes and the terminal's
 * confirmation. Concluding an experiment moves the default rows, so it is checked.
 */
const CATALOG_PERSONAS = new Set(['default'])

/** Moves named in a refusal. */
const REFUSAL_MOVES = 5

/**
 * Run a write with its price impact (docs/change-control.md):
 * - --dry-run: measured and rolled back; the full report printed.
 * - --max-changes N exceeded: rolled back, exit 1 (--yes does not lift it).
 * - a move beyond --max-change-pct (default DEFAULT_MAX_CHANGE_PCT), without --yes: asked on a
 *   terminal; without one (or under --json) rolled back, exit 2, the largest moves named.
 * - a terminal (not --json, not --yes) and more than CONFIRM_ABOVE changes: measured and
 *   rolled back, the summary shown, and on "yes" run again and kept.
 * - else: written, the report (the first rows of the table, largest moves first) on stderr.
 * Every catalog write of the command line passes here (BaseCommand.priceImpact), so the
 * guard has one home.
 */
export async function withPriceImpact<T>(io: ImpactIO, write: () => Promise<T> | T, scope: ImpactScope = {}, options: ImpactOptions = {}): Promise<{dryRun: boolean; impact: PriceImpact; result: T}> {
  const {flags} = io
  const max = flags['max-changes']
  const over = (i: PriceImpact) => max !== undefined && i.changed > max
  const refuse = (i: PriceImpact) =>
    new OperationalError(
      `${i.changed} prices would change, more than --max-changes ${max}: nothing written (${i.summary}); review them with --dry-run, or raise --max-changes`,
      {impact: i},
    )
  const limitPct = flags['max-change-pct'] ?? DEFAULT_MAX_CHANGE_PCT
  // A person who answered yes (here, or to a delete's question) or passed --yes is not stopped by the threshold.
  let accepted = Boolean(flags.yes || options.confirmed)
  const beyond = (i: PriceImpact): PriceImpactChange[] => (accepted ? [] : largestMoves(i.changes).filter((c) => CATALOG_PERSONAS.has(c.audience) && moveSize(c) > limitPct))
  const tooLarge = (i: PriceImpact, moves: PriceImpactChange[]) => {
    const named = moves.slice(0, REFUSAL_MOVES).map((c) => describeMove(c)).join(', ')
    const more = moves.length > REFUSAL_MOVES ? ` and ${moves.length - REFUSAL_MOVES} more` : ''
    return new InvalidInputError(
      `${moves.length} ${moves.length === 1 ? 'price' : 'prices'} would move by more than ${limitPct}%: ${named}${more}: nothing written (${i.summary}); ` +
        'review them with --dry-run, then re-run with --yes (or raise --max-change-pct)',
      {impact: i},
    )
  }
  if (flags['dry-run']) {
    const r = await measureImpact(io.store, write, scope, () => 'rollback')
    if (!io.json) io.log(renderImpact(r.impact))
    return {dryRun: true, impact: r.impact, result: r.result}
  }
  const ask = !accepted && !io.json && isInteractive()
  if (ask) {
    const probe = await measureImpact(io.store, write, scope, () => 'rollback')
    if (over(probe.impact)) throw refuse(probe.impact)
    const large = beyond(probe.impact)
    if (probe.impact.changed > CONFIRM_ABOVE || large.length > 0) {
      process.stderr.write(renderImpact(probe.impact, {limit: APPLIED_ROWS}) + '\n')
      const {confirm} = await import('@inquirer/prompts')
      const why = large.length > 0 ? `, ${large.length} by more than ${limitPct}%` : ''
      const n = probe.impact.changed
      const ok = await confirm({default: false, message: `Apply this change (${n} ${n === 1 ? 'price changes' : 'prices change'}${why})?`})
      if (!ok) throw new OperationalError(`not confirmed: nothing written (${probe.impact.summary}); see every price with --dry-run`)
      accepted = true
    }
  }
  let large: PriceImpactChange[] = []
  const r = await measureImpact(io.store, write, scope, (i) => {
    large = beyond(i)
    return over(i) || large.length > 0 ? 'rollback' : 'commit'
  })
  if (!r.committed) throw over(r.impact) ? refuse(r.impact) : tooLarge(r.impact, large)
  // The table is for people: not even made under --json (notes are silent there).
  if (!io.json && (r.impact.changed > 0 || r.impact.dropped.length > 0 || r.impact.added > 0)) io.note(renderImpact(r.impact, {limit: APPLIED_ROWS}))
  return {dryRun: false, impact: r.impact, result: r.result}
}
