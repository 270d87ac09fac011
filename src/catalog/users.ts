import {NotFoundError} from '../errors.js'
import type {StorePort} from '../store/port.js'
import type {User} from '../domain.js'

/**
 * Users are written by the price command (their country); here they are read back. An id
 * the price command hands out can be looked up: a user id, or the IP that stands for an
 * anonymous visitor (its country is its lock's; once a user adopts that lock, a users row
 * keeps the IP's country). The `country` of subscriptions and charges stays on those
 * records and does not change the stored country (docs/pricing.md).
 */
export type {User}

export async function getUser(store: StorePort, userId: string): Promise<User | undefined> {
  // The anonymous lock first: it is the id's current quote (a users row for an IP is left by an adoption).
  return await store.pricing.user(userId)
}

/**
 * Get user country. An unknown user is the spec's error: exit 1 with `error_message`
 * in the JSON body.
 */
export async function requireUser(store: StorePort, userId: string): Promise<User> {
  const u = await getUser(store, userId)
  if (!u) {
    const revenue = await store.pricing.userHasRevenue(userId) ? '; the country of its subscriptions and charges stays on those records and is not stored for the user' : ''
    const message = `no user ${JSON.stringify(userId)}: a user is stored when a price is calculated for them (pricectl price --user-id ${userId} --product ...)${revenue}`
    throw new NotFoundError(message, {error_message: message})
  }
  return u
}
