import {InvalidInputError} from '../errors.js'
import {decodeUtf8, parseJsonObject, readInput} from '../input.js'
import {reservedKeyProblem} from '../schemas/no-zod.js'
import {isInteractive} from './tty.js'

// The neutral readers and parsers, for the commands that take them from here with the flag helpers.
export {checkJsonDepth, decodeUtf8, firstInvalidUtf8, MAX_JSON_DEPTH, parseJson, parseJsonObject, parseJsonValue, readInput} from '../input.js'

/** Largest `--body` accepted; a body is one request, never a bulk file. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024

/** Read `--body FILE` (or `-` for stdin) as a JSON object. */
export function readBody(path: string | undefined): Record<string, unknown> {
  if (path === undefined) return {}
  const bytes = readInput(path, {hint: 'use an import command for bulk data', limit: MAX_BODY_BYTES, what: '--body'})
  return parseJsonObject(decodeUtf8(bytes, `--body ${path === '-' ? 'stdin' : path}`), '--body')
}

/** Repeatable `KEY=VALUE` flags into an object. */
export function parseKeyValues(items: string[] | undefined, flag: string): Record<string, string> | undefined {
  if (!items?.length) return undefined
  const out: Record<string, string> = {}
  for (const item of items) {
    const eq = item.indexOf('=')
    if (eq <= 0) throw new InvalidInputError(`${flag}: expected KEY=VALUE, got "${item}"`)
    const reserved = reservedKeyProblem(item.slice(0, eq), 'key')
    if (reserved) throw new InvalidInputError(`${flag}: ${reserved}`)
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
export async function confirmDestructive(yes: boolean | undefined, what: string, instead?: string): Promise<void> {
  if (yes) return
  if (!isInteractive()) throw new InvalidInputError(`refusing to ${what} without --yes (no terminal to confirm on)${instead ? `: ${instead}` : ''}`)
  const {confirm} = await import('@inquirer/prompts')
  const ok = await confirm({default: false, message: `Really ${what}?`})
  if (!ok) throw new InvalidInputError(`not confirmed: did not ${what}`)
}
