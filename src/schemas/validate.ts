import type {z} from 'zod'

import {InvalidInputError} from '../errors.js'

/**
 * Validate with a zod schema; on failure, one InvalidInputError listing every problem
 * as `field.path: message` so the user sees the field and the value.
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown, what = 'input'): z.output<S> {
  const r = schema.safeParse(input)
  if (r.success) return r.data
  throw new InvalidInputError(`invalid ${what}: ${formatIssues(r.error.issues)}`)
}

export function formatIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '')
      return path ? `${path}: ${i.message}` : i.message
    })
    .join('; ')
}
