import {ConflictError} from '../../errors.js'

/**
 * A write the store refused because a unique key is taken (a product name, a campaign's
 * api_id, a coupon's second link to the same gateway). Every adapter raises this one type,
 * whatever its database calls the violation, so the engine and the contract tests can tell
 * a conflict from a failure. Exit 1, HTTP 409 (a ConflictError).
 */
export class UniqueConflictError extends ConflictError {
  constructor(
    /** The stored kind: "product", "coupon", "audience", ... */
    readonly entity: string,
    /** The unique key that clashed, such as "name" or "api_id". */
    readonly key: string,
    /** The value that is taken. */
    readonly value: string,
  ) {
    super(`${key}: ${entity} ${key} ${JSON.stringify(value)} is already taken in the store (choose another ${key})`)
  }
}

/** What write-behind cannot do: the caller ends it and prices the uncommitted groups again (see WriteBehind). */
export class WriteBehindAbort extends Error {
  constructor(why: string) {
    super(`write-behind ended: ${why}`)
    this.name = 'WriteBehindAbort'
  }
}
