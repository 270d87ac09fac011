import {NotFoundError} from '../errors.js'
import {anonymousVisitor} from '../pricing/locks.js'
import type {DB} from '../store/db.js'

/**
 * Users are written by the price command (their country); here they are read back. An id
 * the price command hands out can be looked up: a user id, or the IP that stands for an
 * anonymous visitor (its country is its lock's; once a user adopts that lock, a users row
 * keeps the IP's country). The `country` of subscriptions and charges stays on those
 * records and does not change the stored country (docs/pricing.md).
 */
export type User = {country: null | string; created_at: string; updated_at: string; user_id: string}

export function getUser(db: DB, userId: string): User | undefined {
  // The anonymous lock first: it is the id's current quote (a users row for an IP is left by an adoption).
  const visitor = anonymousVisitor(db, userId)
  if (visitor) return {...visitor, user_id: userId}
  return db.prepare('SELECT user_id, country, created_at, updated_at FROM users WHERE user_id = ?').get(userId) as User | undefined
}

function hasRevenue(db: DB, userId: string): boolean {
  return db.prepare('SELECT 1 FROM subscriptions WHERE user_id = ? UNION ALL SELECT 1 FROM charges WHERE user_id = ? LIMIT 1').get(userId, userId) !== undefined
}

/**
 * Get user country. An unknown user is the spec's error: exit 1 with `error_message`
 * in the JSON body.
 */
export function requireUser(db: DB, userId: string): User {
  const u = getUser(db, userId)
  if (!u) {
    const revenue = hasRevenue(db, userId) ? '; the country of its subscriptions and charges stays on those records and is not stored for the user' : ''
    const message = `no user ${JSON.stringify(userId)}: a user is stored when a price is calculated for them (pricectl price --user-id ${userId} --product ...)${revenue}`
    throw new NotFoundError(message, {error_message: message})
  }
  return u
}
