/**
 * What a --db value names, without loading either adapter: every open (and every command's
 * start, BaseCommand.init) asks whether it is a PostgreSQL URL.
 */

/** Whether a --db value names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

/** Query parameters of a connection URL that hold a secret (libpq's and pg's names). */
const SECRET_PARAMS = new Set(['password', 'sslpassword'])

/**
 * A URL fit for messages: the password is masked, both as `user:pass@` and as the
 * `password` and `sslpassword` query parameters (`postgres://app@host/db?password=...`).
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    for (const key of [...u.searchParams.keys()]) if (SECRET_PARAMS.has(key.toLowerCase())) u.searchParams.set(key, '***')
    return u.toString().replaceAll('%2A%2A%2A', '***')
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@').replace(/([?&](?:ssl)?password=)[^&#]*/gi, '$1***')
  }
}
