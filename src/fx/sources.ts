/**
 * Where a rate comes from, as the selection rule and `fx prune` see it. fx_rates has no
 * column for it: the kind is read from the `source` label, here and in the SQL of the
 * store adapter (src/store/sqlite/fx.ts: the two must agree; a test checks that they do).
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

const IMPORT_RE = /^(?:ECB eurofxref|csv|json) \(.*\)$/s

export function fxKind(source: string): FxKind {
  if (source.startsWith(SNAPSHOT_PREFIX)) return 'snapshot'
  return IMPORT_RE.test(source) ? 'import' : 'manual'
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
