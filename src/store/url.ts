/**
 * What a --db value names, without loading either adapter: every open (and every command's
 * start, BaseCommand.init) asks whether it is a PostgreSQL URL.
 */

/** Whether a --db value names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

/** A URL fit for messages: the password is left out. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@')
  }
}
