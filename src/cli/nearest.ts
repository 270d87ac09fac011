/**
 * The nearest of `names` to what was typed, by edit distance; none when nothing is close:
 * more edits than `maxDistance` (default: half the typed length, at least 2) is a different
 * word, not a typo. Used for an unknown command (src/cli/hooks/command-not-found.ts) and an
 * unknown flag (src/cli/base.ts).
 */
export function nearest(typed: string, names: Iterable<string>, maxDistance = Math.max(2, Math.ceil(typed.length / 2))): string | undefined {
  let best: {distance: number; name: string} | undefined
  for (const name of names) {
    const distance = editDistance(typed, name)
    if (!best || distance < best.distance) best = {distance, name}
  }
  return best && best.distance <= maxDistance ? best.name : undefined
}

/** Levenshtein distance (two rows). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = row
  }
  return prev[b.length]
}
