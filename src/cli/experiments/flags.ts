import {Flags} from '@oclif/core'

import {overlay, parseJsonValue, readBody} from '../input.js'
import {InvalidInputError} from '../../errors.js'

/** Flags of `experiments create` / `update`: the body's fields in kebab-case, flags over --body. */
export const experimentFlags = {
  allocation: Flags.string({description: 'thompson (bandit, default) or uniform (classic A/B split)', options: ['thompson', 'uniform']}),
  arm: Flags.string({
    description: 'An arm (repeatable; replaces the body\'s arms): [ID=]x0.8 (multiplier of the localized price), [ID=]usd:12.99 (USD price), [ID=]products:a,b (packaging), or a JSON object',
    multiple: true,
  }),
  audience: Flags.string({description: 'Target only this audience (api_id); "none" clears it'}),
  body: Flags.string({description: 'The experiment as JSON (FILE, or - for stdin); flags override its fields'}),
  country: Flags.string({description: 'Target only these countries (repeatable or comma-separated; "none" clears them)', multiple: true}),
  name: Flags.string({description: 'Name of the experiment'}),
  product: Flags.string({char: 'p', description: 'Product the experiment prices (repeatable or comma-separated)', multiple: true}),
  seed: Flags.string({description: 'Seed of the experiment\'s randomness (default: the store setting experiment_seed, else a random one, stored)'}),
  type: Flags.string({description: 'price (default) or packaging', options: ['price', 'packaging']}),
}

export type ExperimentFlags = {
  allocation?: string
  arm?: string[]
  audience?: string
  body?: string
  country?: string[]
  name?: string
  product?: string[]
  seed?: string
  type?: string
}

/** `--arm` short forms: `x0.8`, `0.8x`, `usd:12.99`, `$12.99`, `products:a,b` or `a+b`, each optionally `ID=...`; or JSON. */
export function parseArm(text: string, what = '--arm'): unknown {
  const t = text.trim()
  if (t.startsWith('{')) return parseJsonValue(t, what)
  let id: number | string | undefined
  let value = t
  const eq = t.indexOf('=')
  // Anything before "=" is the arm's id (checked with the body's rules, so the message names it).
  if (eq > 0 && /^[^=:+,\s]+$/.test(t.slice(0, eq))) {
    const raw = t.slice(0, eq)
    id = /^\d+$/.test(raw) ? Number(raw) : raw
    value = t.slice(eq + 1).trim()
  }
  const withId = (arm: Record<string, unknown>) => (id === undefined ? arm : {id, ...arm})
  let m = /^x\s*(\d+(?:\.\d+)?|\.\d+)$/i.exec(value) ?? /^(\d+(?:\.\d+)?|\.\d+)\s*x$/i.exec(value)
  if (m) return withId({multiplier: Number(m[1])})
  m = /^(?:usd\s*:\s*|\$)(\d+(?:\.\d+)?)$/i.exec(value) ?? /^(\d+(?:\.\d+)?)\s*usd$/i.exec(value)
  if (m) return withId({usd_price: Number(m[1])})
  m = /^products?\s*:\s*(.+)$/i.exec(value)
  if (m || value.includes('+')) {
    const list = (m ? m[1] : value).split(/[,+]/).map((s) => s.trim()).filter(Boolean)
    return withId({products: list})
  }
  throw new InvalidInputError(`${what}: expected [ID=]x0.8 (multiplier), [ID=]usd:12.99 (USD price) or [ID=]products:a,b (packaging), got ${JSON.stringify(text)}`)
}

/** Repeatable and comma-separated; an empty value is an error (it must not mean "every country"). */
function list(values: string[] | undefined, flag: string): string[] | undefined {
  if (!values?.length) return undefined
  const out = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)
  if (out.length === 0) throw new InvalidInputError(`${flag}: empty value ${JSON.stringify(values.join(','))}; give a comma-separated list${flag === '--country' ? ', or "none" to clear it' : ''}`)
  return out
}

/** A whole-number flag, or an input error naming it. */
export function intFlag(text: string | undefined, flag: string, options: {max?: number; min?: number} = {}): number | undefined {
  if (text === undefined) return undefined
  const min = options.min ?? 0
  const max = options.max ?? Number.MAX_SAFE_INTEGER
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw new InvalidInputError(`${flag}: expected a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}, got ${JSON.stringify(text)}`)
  }
  return Number(text)
}

/** The experiment body: --body, with the flags given laid over it. */
export function experimentBody(flags: ExperimentFlags): Record<string, unknown> {
  const body = readBody(flags.body)
  const countries = list(flags.country, '--country')
  return overlay(body, {
    allocation: flags.allocation,
    arms: flags.arm?.length ? flags.arm.map((a, i) => parseArm(a, `--arm #${i + 1}`)) : undefined,
    audience: flags.audience === undefined ? undefined : flags.audience === 'none' ? null : flags.audience,
    countries: countries === undefined ? undefined : countries.length === 1 && countries[0] === 'none' ? [] : countries,
    name: flags.name,
    products: list(flags.product, '--product'),
    seed: flags.seed === undefined ? undefined : /^\d+$/.test(flags.seed) ? Number(flags.seed) : flags.seed,
    type: flags.type,
  })
}
