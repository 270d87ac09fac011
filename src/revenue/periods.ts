/**
 * Calendar periods of the revenue report and cohorts, in UTC: ISO weeks (Monday to
 * Sunday, keyed by their Monday's date), calendar months (YYYY-MM) and quarters (YYYY-Qn).
 */

export type Bucket = 'month' | 'quarter' | 'week'

/** The ISO date (UTC) of a moment. */
export function day(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10)
}

/** The first moment of the month of `seconds`, `add` months later. */
export function monthStart(seconds: number, add = 0): number {
  const d = new Date(seconds * 1000)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1) / 1000
}

/** The first moment of the bucket holding `seconds`. */
export function bucketStart(bucket: Bucket, seconds: number): number {
  if (bucket === 'month') return monthStart(seconds)
  if (bucket === 'quarter') {
    const d = new Date(seconds * 1000)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (d.getUTCMonth() % 3), 1) / 1000
  }
  const midnight = Math.floor(seconds / 86_400) * 86_400
  // 1970-01-01 was a Thursday: days since then, shifted so Monday is 0.
  return midnight - (((Math.floor(seconds / 86_400) + 3) % 7) * 86_400)
}

/** The first moment of the next bucket after the one starting at `start`. */
export function nextBucket(bucket: Bucket, start: number): number {
  if (bucket === 'week') return start + 7 * 86_400
  return monthStart(start, bucket === 'quarter' ? 3 : 1)
}

export function bucketKey(bucket: Bucket, start: number): string {
  if (bucket === 'month') return day(start).slice(0, 7)
  if (bucket === 'quarter') return `${day(start).slice(0, 4)}-Q${Math.floor(new Date(start * 1000).getUTCMonth() / 3) + 1}`
  return day(start)
}

/** The buckets overlapping [since, until), each clipped to the window. */
export function buckets(bucket: Bucket, since: number, until: number): {end: number; key: string; start: number}[] {
  const out: {end: number; key: string; start: number}[] = []
  for (let start = bucketStart(bucket, since); start < until; start = nextBucket(bucket, start)) {
    out.push({end: Math.min(nextBucket(bucket, start), until), key: bucketKey(bucket, start), start: Math.max(start, since)})
  }
  return out
}
