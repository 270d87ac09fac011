import {isAbsolute} from 'node:path'

import {readMoment} from '../dates.js'
import {isPostgresUrl} from '../store/url.js'

/**
 * What the schemas define without zod: constants and predicates the engine uses on paths
 * that must not load zod and the schemas (about a sixth of a cold `price`; docs/performance.md
 * "Cold start"). The schema modules re-export them; engine modules a cold `price` imports
 * take them from here (test/architecture.test.ts keeps zod out of that path).
 */

export const INTERVALS = ['day', 'week', 'month', 'year', 'one_time'] as const
export const RECURRING_INTERVALS = ['day', 'week', 'month', 'year'] as const
export const ORIGINS = ['gateway_a', 'gateway_b', 'gateway_c'] as const
export const GATEWAYS = ['gateway_a', 'gateway_b', 'gateway_c', 'gateway_d'] as const

/**
 * Text that can be stored and shown as given: no control characters (NUL, escape
 * sequences garble terminals and other tools) and no lone UTF-16 surrogates (SQLite would
 * store them as U+FFFD, silently changing the value). Names may span lines (tab, CR, LF).
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
export function isPlainText(s: string): boolean {
  return !CONTROL.test(s) && !LONE_SURROGATE.test(s)
}
export function isPlainMultilineText(s: string): boolean {
  return !CONTROL_BUT_LINES.test(s) && !LONE_SURROGATE.test(s)
}
/** Whitespace only: an id no one can type back or see in a table; refused like an empty one. */
export function isBlank(s: string): boolean {
  return s.trim() === ''
}

/** The control arm of an experiment. */
export const BASELINE = 'baseline'

/**
 * A window's date or date-time (validated by IsoDate) as a moment. Without an offset it
 * is UTC, so a window means the same on every machine.
 */
function windowMoment(s: string): {dayEnd?: number; seconds: number} {
  const m = readMoment(s)
  if (!('problem' in m)) return m
  // Only a value stored before this reader existed can get here (Date.parse let 24:00 through).
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(s) ? s : `${s.replace(' ', 'T')}Z`)
  return {seconds: Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)}
}

/** First second (UNIX) of an active window given as an ISO date or date-time. */
export function windowStart(s: string): number {
  return windowMoment(s).seconds
}

/** Last second (UNIX) of an active window: a bare date lasts through the end of that day, UTC. */
export function windowEnd(s: string): number {
  const m = windowMoment(s)
  return m.dayEnd === undefined ? m.seconds : m.dayEnd - 1
}

/**
 * Why a user's key (a feature, a metadata key) cannot be used, or undefined: `__proto__`
 * set on an object changes its prototype instead of adding the pair, which then vanishes
 * without a word (schemas: userKeys in common.ts).
 */
export function reservedKeyProblem(key: string, what: string): string | undefined {
  return key === '__proto__' ? `"__proto__" cannot be a ${what} name (JavaScript reserves it); rename it` : undefined
}

/** A profile's name in the config file: what `--profile NAME` and PRICECTL_PROFILE take (src/schemas/config.ts). */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

/**
 * A store in the config file: an absolute SQLite path (a relative one would mean another
 * store in every folder it is run from) or a postgres:// URL that parses.
 */
export function isStoreLocation(value: unknown): value is string {
  if (typeof value !== 'string') return false
  if (!isPostgresUrl(value)) return isAbsolute(value)
  try {
    new URL(value)
    return true
  } catch {
    return false
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Whether `json` has the shape src/schemas/config.ts ConfigFile declares, checked by hand: a
 * command whose store the config file names reads it at every start, and a cold `price` loads
 * no zod. When this says no, the schema says why (src/cli/config-file.ts readConfig);
 * test/commands/config.test.ts keeps the two in agreement.
 */
export function isConfigFileShape(json: unknown): json is {db?: string; profiles?: Record<string, {db: string}>} {
  if (!isRecord(json)) return false
  for (const [key, value] of Object.entries(json)) {
    if (key === 'db') {
      if (!isStoreLocation(value)) return false
    } else if (key === 'profiles') {
      if (!isRecord(value)) return false
      for (const [name, profile] of Object.entries(value)) {
        if (!PROFILE_NAME.test(name) || !isRecord(profile)) return false
        const keys = Object.keys(profile)
        if (keys.length !== 1 || keys[0] !== 'db' || !isStoreLocation(profile.db)) return false
      }
    } else return false
  }
  return true
}
