/**
 * Kinds of reject reasons, for the summary's counts per reason (`rejected_by_reason`). A
 * reason names the row's own values ("bad date "2026-13-45" in Created date (UTC) (...)");
 * its kind is what rows with the same fault share ("bad date"), so a summary of 600
 * rejects reads as a few lines.
 */

const KINDS: [RegExp, string | ((m: RegExpExecArray) => string)][] = [
  [/^unknown product /, 'unknown product'],
  [/^ambiguous product /, 'ambiguous product (a price of several products)'],
  [/^no price matches product /, 'no price of the product matches the amount'],
  [/^missing product/, 'missing product'],
  [/^bad date /, 'bad date'],
  [/^missing date/, 'missing date'],
  [/^bad amount /, 'bad amount'],
  [/^currency: unknown currency/, 'unknown currency'],
  [/^unknown status /, 'unknown status'],
  [/^missing status/, 'missing status'],
  [/^missing id/, 'missing id'],
  [/^missing user id/, 'missing user id'],
  [/^no FX rate for (\S+)/, (m) => `no FX rate for ${m[1]}`],
  [/^expected \d+ columns, got \d+/, 'wrong number of columns'],
  [/^unreadable CSV record/, 'unreadable CSV record'],
  [/^not valid UTF-8/, 'not valid UTF-8'],
  [/^record is longer than/, 'record too long'],
  [/^amount_refunded: .* is more than the amount/, 'refund larger than the amount'],
  [/^tax: .* is more than the amount/, 'tax larger than the amount'],
  [/^bad interval count /, 'bad interval count'],
  [/^bad interval /, 'bad interval'],
  [/^bad quantity /, 'bad quantity'],
  [/^cancel before created: /, 'cancel before created'],
  [/^trial ends before it starts: /, 'trial ends before it starts'],
]

/** The kind of a reject reason: a known one, else the reason up to its first value or note. */
export function reasonKind(reason: string): string {
  for (const [re, kind] of KINDS) {
    const m = re.exec(reason)
    if (m) return typeof kind === 'string' ? kind : kind(m)
  }
  const cut = reason.search(/"| \(|;|, got /)
  const head = (cut === -1 ? reason : reason.slice(0, cut)).replace(/-?\d+(?:\.\d+)?/g, 'N').replace(/[\s:,]+$/, '')
  return head.length > 80 ? `${head.slice(0, 79)}…` : head || 'other'
}

/** Add one reject to counts per kind. */
export function countReason(counts: Record<string, number>, reason: string): void {
  const k = reasonKind(reason)
  counts[k] = (counts[k] ?? 0) + 1
}

/** Counts per kind, the most frequent first (ties by name), as the summary shows them. */
export function sortedReasons(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)))
}
