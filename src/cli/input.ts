import {readFileSync, statSync} from 'node:fs'

import {InvalidInputError} from '../errors.js'
import {isInteractive} from './tty.js'

/** Largest `--body` accepted; a body is one request, never a bulk file. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024

/** Read `--body FILE` (or `-` for stdin) as a JSON object. */
export function readBody(path: string | undefined): Record<string, unknown> {
  if (path === undefined) return {}
  let text: string
  try {
    if (path === '-') {
      text = readFileSync(0, 'utf8')
    } else {
      const size = statSync(path).size
      if (size > MAX_BODY_BYTES) throw new InvalidInputError(`--body: ${path} is ${size} bytes; the limit is ${MAX_BODY_BYTES} (use an import command for bulk data)`)
      text = readFileSync(path, 'utf8')
    }
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    throw new InvalidInputError(`--body: cannot read ${path}: ${(error as Error).message}`)
  }
  if (text.length > MAX_BODY_BYTES) throw new InvalidInputError(`--body: input is over ${MAX_BODY_BYTES} bytes`)
  return parseJsonObject(text.replace(/^\uFEFF/, ''), '--body')
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(`${what}: malformed JSON (${(error as Error).message})`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(`${what}: expected a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`)
  }
  return value as Record<string, unknown>
}

/** A flag value that is JSON (object or array); `what` names the flag in errors. */
export function parseJsonValue(text: string, what: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(`${what}: malformed JSON ${JSON.stringify(text.slice(0, 80))} (${(error as Error).message})`)
  }
}

/** Repeatable `KEY=VALUE` flags into an object. */
export function parseKeyValues(items: string[] | undefined, flag: string): Record<string, string> | undefined {
  if (!items?.length) return undefined
  const out: Record<string, string> = {}
  for (const item of items) {
    const eq = item.indexOf('=')
    if (eq <= 0) throw new InvalidInputError(`${flag}: expected KEY=VALUE, got "${item}"`)
    out[item.slice(0, eq)] = item.slice(eq + 1)
  }
  return out
}

/** Copy defined values over a body: flags given beside --body override its fields. */
export function overlay(body: Record<string, unknown>, values: Record<string, unknown>): Record<string, unknown> {
  const out = {...body}
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = v
  return out
}

export type RequiredField = {
  /** JSON field name in the body. */
  field: string
  /** CLI flag that sets it. */
  flag: string
  /** Prompt text on a terminal. */
  message: string
  /** Turn the typed answer into the field's value. */
  parse?: (answer: string) => unknown
}

/**
 * Fill missing required fields: prompt on a terminal, else fail listing every missing flag.
 * Returns a new object; the prompt library is imported only when a prompt is shown.
 */
export async function requireFields(input: Record<string, unknown>, fields: RequiredField[]): Promise<Record<string, unknown>> {
  const missing = fields.filter((f) => input[f.field] === undefined || input[f.field] === null)
  if (missing.length === 0) return input
  if (!isInteractive()) {
    throw new InvalidInputError(`missing required ${missing.length === 1 ? 'flag' : 'flags'}: ${missing.map((f) => f.flag).join(', ')} (or pass --body FILE)`)
  }
  const {input: ask} = await import('@inquirer/prompts')
  const out = {...input}
  for (const f of missing) {
    const answer = await ask({message: f.message, required: true})
    out[f.field] = f.parse ? f.parse(answer) : answer
  }
  return out
}

/** Destructive commands: --yes, or a confirmation on a terminal; never a silent default. */
export async function confirmDestructive(yes: boolean | undefined, what: string): Promise<void> {
  if (yes) return
  if (!isInteractive()) throw new InvalidInputError(`refusing to ${what} without --yes (no terminal to confirm on)`)
  const {confirm} = await import('@inquirer/prompts')
  const ok = await confirm({default: false, message: `Really ${what}?`})
  if (!ok) throw new InvalidInputError(`not confirmed: did not ${what}`)
}
