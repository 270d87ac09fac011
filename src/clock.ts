/**
 * The current time. `PRICECTL_NOW` (UNIX seconds or an ISO date) pins it, so tests and
 * reproducible runs can price "as of" a moment (coupon windows, event defaults).
 */
export function nowSeconds(): number {
  const pinned = process.env.PRICECTL_NOW
  if (pinned) {
    const n = /^\d+$/.test(pinned) ? Number(pinned) : Math.floor(Date.parse(pinned) / 1000)
    if (Number.isFinite(n)) return n
  }
  return Math.floor(Date.now() / 1000)
}

export function nowIso(): string {
  return new Date(nowSeconds() * 1000).toISOString()
}

/** YYYY-MM-DD of a UNIX timestamp (UTC). */
export function isoDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10)
}
