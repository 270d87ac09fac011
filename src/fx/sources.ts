/**
 * Where a rate comes from, as the selection rule and `fx prune` see it. fx_rates has no
 * column for it: the kind is read from the `source` label, in this one place (the SQL
 * and the TypeScript below must agree; a test checks that they do).
 *
 * - `snapshot`: the bundled default snapshot; its label starts with SNAPSHOT_PREFIX, a
 *   prefix operators cannot use (FxSource refuses it).
 * - `import`: the default labels of `fx import` (`ECB eurofxref (FILE)`, `csv (FILE)`,
 *   `json (FILE)`).
 * - `manual`: everything else: `fx set` (label `manual` unless --source names one) and
 *   imports given their own --source label.
 *
 * Operator rates (manual and import) outrank the snapshot whatever their dates.
 */
export type FxKind = 'import' | 'manual' | 'snapshot'
export const FX_KINDS = ['snapshot', 'manual', 'import'] as const

export const SNAPSHOT_PREFIX = 'default snapshot ('

/** SQL GLOB patterns (case-sensitive, like startsWith) of the default import labels. */
const IMPORT_GLOBS = ['ECB eurofxref (*)', 'csv (*)', 'json (*)']
const IMPORT_RE = /^(?:ECB eurofxref|csv|json) \(.*\)$/s

export function fxKind(source: string): FxKind {
  if (source.startsWith(SNAPSHOT_PREFIX)) return 'snapshot'
  return IMPORT_RE.test(source) ? 'import' : 'manual'
}

/** SQL: true for a snapshot row of fx_rates (fixed text, no value in it). */
export const SNAPSHOT = `source GLOB '${SNAPSHOT_PREFIX}*'`

/** SQL: true for a snapshot row (`alias.source`). */
export function isSnapshotSql(alias?: string): string {
  return `${alias ? alias + '.' : ''}source GLOB '${SNAPSHOT_PREFIX}*'`
}

/** SQL: the kind of a row, as fxKind() computes it. */
export function kindSql(alias?: string): string {
  const col = `${alias ? alias + '.' : ''}source`
  return `CASE WHEN ${col} GLOB '${SNAPSHOT_PREFIX}*' THEN 'snapshot' WHEN ${IMPORT_GLOBS.map((g) => `${col} GLOB '${g}'`).join(' OR ')} THEN 'import' ELSE 'manual' END`
}

/** What `fx prune --source` matched: a kind, or a label (exact, or with `*` wildcards). */
export type SourceFilter = {kind: FxKind} | {label: string}

export function parseSourceFilter(text: string): SourceFilter {
  const t = text.trim()
  if ((FX_KINDS as readonly string[]).includes(t)) return {kind: t as FxKind}
  return {label: t}
}

export function describeFilter(filter: SourceFilter): string {
  if ('kind' in filter) return filter.kind === 'snapshot' ? 'the bundled snapshot' : filter.kind === 'manual' ? 'manual rates' : 'imported rates'
  return `source "${filter.label}"`
}
