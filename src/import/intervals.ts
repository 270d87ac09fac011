/** Interval cells of exports: "month", "3 months", "every 2 weeks", "yearly", "quarterly". */

const INTERVAL_WORDS: Record<string, {count: number; interval: string}> = {
  annual: {count: 1, interval: 'year'},
  annually: {count: 1, interval: 'year'},
  daily: {count: 1, interval: 'day'},
  monthly: {count: 1, interval: 'month'},
  quarterly: {count: 3, interval: 'month'},
  weekly: {count: 1, interval: 'week'},
  yearly: {count: 1, interval: 'year'},
}

/** "month", "3 months", "every 2 weeks", "yearly", "quarterly". */
export function parseInterval(s: string): undefined | {count: number; interval: string} {
  const t = s.trim().toLowerCase()
  if (INTERVAL_WORDS[t]) return INTERVAL_WORDS[t]
  const m = /^(?:every\s+)?(?:(\d+)\s*[- ]?\s*)?(day|week|month|year)s?$/.exec(t)
  if (!m) return undefined
  const count = m[1] === undefined ? 1 : Number(m[1])
  return count >= 1 ? {count, interval: m[2]} : undefined
}
