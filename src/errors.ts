/**
 * Errors the engine raises on purpose. Commands map them to exit codes:
 * InvalidInputError -> 2 (nothing was written), every other PricectlError -> 1.
 */
export class PricectlError extends Error {
  readonly exitCode: 1 | 2 | 130 | 143
  /** Extra fields for the JSON error body (for example `error_message` of the user lookup). */
  readonly body: Record<string, unknown>

  constructor(message: string, exitCode: 1 | 2 | 130 | 143, body: Record<string, unknown> = {}) {
    super(message)
    this.name = new.target.name
    this.exitCode = exitCode
    this.body = body
  }
}

/** Bad flags, bodies or files: exit 2, the store is untouched. */
export class InvalidInputError extends PricectlError {
  declare readonly exitCode: 2
  constructor(message: string, body: Record<string, unknown> = {}) {
    super(message, 2, body)
  }
}

/** A named thing does not exist: exit 1. */
export class NotFoundError extends PricectlError {
  declare readonly exitCode: 1
  constructor(message: string, body: Record<string, unknown> = {}) {
    super(message, 1, body)
  }
}

/** The work could not be done (store trouble, rejected rows, conflicts): exit 1. */
export class OperationalError extends PricectlError {
  declare readonly exitCode: 1
  constructor(message: string, body: Record<string, unknown> = {}) {
    super(message, 1, body)
  }
}

/**
 * The input is valid but clashes with what the store holds (create with an api_id that
 * exists): exit 1, HTTP 409. Checked after the input itself, so bad input still exits 2.
 */
export class ConflictError extends OperationalError {}

/**
 * The store cannot be reached right now (its PostgreSQL connection was lost): exit 1, HTTP
 * 503 with Retry-After. The message says what happened and whether retrying is safe.
 */
export class UnavailableError extends OperationalError {}

/**
 * The work was stopped by SIGINT (Ctrl-C) or SIGTERM between two of its transactions: exit
 * 130 or 143 (128 + the signal's number, what a shell reports for a command the signal
 * killed). The message says what was committed and that running the same command again
 * continues.
 */
export class InterruptedError extends PricectlError {
  declare readonly exitCode: 130 | 143
  constructor(message: string, signal: InterruptSignal, body: Record<string, unknown> = {}) {
    super(message, signal === 'SIGTERM' ? 143 : 130, {...body, signal})
  }
}

export type InterruptSignal = 'SIGINT' | 'SIGTERM'
