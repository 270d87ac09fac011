import type {Expect, FxKind, SameType, SourceFilter} from '../domain.js'

/**
 * A rate's kind (snapshot, import, manual: docs/fx-localization-geoip.md, "Kinds of rates"),
 * as the selection rule and `fx prune` see it. fx_rates has no column for it: it is read from
 * the `source` label, here and in the store adapter's SQL (src/store/sqlite/fx.ts), which
 * must agree (a test checks). Operators cannot use SNAPSHOT_PREFIX (FxSource refuses it).
 */
export type {FxKind}
export const FX_KINDS = ['snapshot', 'manual', 'import'] as const
type _KindsChecked = Expect<SameType<(typeof FX_KINDS)[number], FxKind>>

export const SNAPSHOT_PREFIX = 'default snapshot ('

const IMPORT_RE = /^(?:ECB eurofxref|csv|json) \(.*\)$/s

export function fxKind(source: string): FxKind {
  if (source.startsWith(SNAPSHOT_PREFIX)) return 'snapshot'
  return IMPORT_RE.test(source) ? 'import' : 'manual'
}

/** What `fx prune --source` matched: a kind, or a label (exact, or with `*` wildcards). */
export type {SourceFilter}

export function parseSourceFilter(text: string): SourceFilter {
  const t = text.trim()
  if ((FX_KINDS as readonly string[]).includes(t)) return {kind: t as FxKind}
  return {label: t}
}

export function describeFilter(filter: SourceFilter): string {
  if ('kind' in filter) return filter.kind === 'snapshot' ? 'the bundled snapshot' : filter.kind === 'manual' ? 'manual rates' : 'imported rates'
  return `source "${filter.label}"`
}
