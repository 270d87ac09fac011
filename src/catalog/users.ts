import {NotFoundError} from '../errors.js'
import type {DB} from '../store/db.js'

/** Users are written by the price command (their country); here they are read back. */
export type User = {country: null | string; created_at: string; updated_at: string; user_id: string}

export function getUser(db: DB, userId: string): User | undefined {
  return db.prepare('SELECT user_id, country, created_at, updated_at FROM users WHERE user_id = ?').get(userId) as User | undefined
}

/**
 * Get user country. An unknown user is the spec's error: exit 1 with `error_message`
 * in the JSON body.
 */
export function requireUser(db: DB, userId: string): User {
  const u = getUser(db, userId)
  if (!u) {
    const message = `no user ${JSON.stringify(userId)}: a user is stored when a price is calculated for them (pricectl price --user-id ${userId} --product ...)`
    throw new NotFoundError(message, {error_message: message})
  }
  return u
}
