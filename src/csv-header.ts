/**
 * A header naming one column twice cannot be read without guessing which cell is meant
 * (the importers used to take the first): every CSV importer refuses it with this text.
 */

/** `column "Amount" appears 2 times (columns 3 and 7)`, for the first name that repeats after `norm`, or undefined. Empty names are skipped. */
export function duplicateColumn(header: readonly string[], norm: (h: string) => string): string | undefined {
  const seen = new Map<string, number[]>()
  for (const [i, h] of header.entries()) {
    const k = norm(h)
    if (k === '') continue
    const at = seen.get(k)
    if (at) at.push(i + 1)
    else seen.set(k, [i + 1])
  }
  for (const h of header) {
    const at = seen.get(norm(h))
    if (at && at.length > 1) return `column ${JSON.stringify(h.trim())} appears ${at.length} times (columns ${at.slice(0, -1).join(', ')} and ${at.at(-1)})`
  }
  return undefined
}
