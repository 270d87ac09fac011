/**
 * Whether an error means "the store is busy, try again" rather than a failure: another
 * writer holds the lock. SQLite: SQLITE_BUSY (and its extended codes) or SQLITE_LOCKED;
 * PostgreSQL (postgres/store.ts): lock_not_available (55P03, the write lock was taken or
 * lock_timeout ran out), serialization_failure (40001), deadlock_detected (40P01).
 */
export function isBusyCode(code: unknown): boolean {
  if (typeof code !== 'string') return false
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code.startsWith('SQLITE_BUSY_') || code === '55P03' || code === '40001' || code === '40P01'
}
