import type {z} from 'zod'

import {InvalidInputError} from '../errors.js'

/**
 * Validate with a zod schema; on failure, one InvalidInputError listing every problem
 * as `field.path: message` so the user sees the field and the value.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown, what = 'input'): z.output<S> {
  const r = schema.safeParse(input)
  if (r.success) return r.data
  throw new InvalidInputError(`invalid ${what}: ${formatIssues(r.error.issues, input)}`)
}

/**
 * `path: message; ...`. Given the input, a field whose value is a number too large to
 * represent (1e400 in a flag or a JSON body overflows to Infinity, which schemas would
 * report as "got null") is said to be out of range instead.
 */
export function formatIssues(issues: z.core.$ZodIssue[], input?: unknown): string {
  return issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '')
      const message =
        input !== undefined && isOverflow(valueAt(input, i.path)) ? OUT_OF_RANGE : i.code === 'unrecognized_keys' ? shortenKeyList(i.message, i.keys) : i.message
      return path ? `${path}: ${message}` : message
    })
    .join('; ')
}

/** Unknown keys named in a message, at most this many (a body with 60,000 of them gets a short answer). */
export const MAX_LISTED_KEYS = 10

/**
 * The message of an unknown-keys issue with its list cut after MAX_LISTED_KEYS keys and
 * "and N more" (whatever the schema's own wording around the list). Unchanged when the
 * list cannot be found in the message.
 */
function shortenKeyList(message: string, keys: readonly string[]): string {
  if (keys.length <= MAX_LISTED_KEYS) return message
  const from = message.indexOf(JSON.stringify(keys[MAX_LISTED_KEYS]))
  const lastQuoted = JSON.stringify(keys.at(-1))
  const last = message.lastIndexOf(lastQuoted)
  if (from <= 0 || last < from) return message
  const head = message.slice(0, from).replace(/,\s*$/, '')
  return `${head} and ${(keys.length - MAX_LISTED_KEYS).toLocaleString('en-US')} more${message.slice(last + lastQuoted.length)}`
}

const OUT_OF_RANGE = 'number out of range (too large to represent, such as 1e400); expected a finite number'

function isOverflow(v: unknown): boolean {
  return typeof v === 'number' && !Number.isFinite(v)
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<PropertyKey, unknown>)[k]
  }
  return v
}
