import {isAbsolute} from 'node:path'
import {z} from 'zod'

import {isPostgresUrl} from '../store/url.js'
import {Envelope} from './common.js'

/**
 * pricectl's config file (src/cli/config-file.ts, docs/environment.md): the default store
 * and named stores (profiles). Loaded on first use: only a command that reads or writes the
 * file loads zod for it.
 */

/** A profile's name: what `--profile NAME` and PRICECTL_PROFILE take. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/

export const ProfileName = z.string().regex(PROFILE_NAME, {
  error: (iss) => `profile name ${JSON.stringify(iss.input)}: expected letters, digits, "_", "-" or "." (starting with a letter or digit, at most 64)`,
})

/** Whether `value` parses as a URL (a postgres:// store must). */
function parsesAsUrl(value: string): boolean {
  try {
    new URL(value)
    return true
  } catch {
    return false
  }
}

/**
 * A store in the file: an absolute SQLite path (a relative one would mean another store in
 * every folder it is run from; `config set` makes a relative path absolute) or a postgres:// URL.
 */
export const StoreLocation = z
  .string({error: (iss) => `expected a string, got ${JSON.stringify(iss.input)}`})
  .refine((v) => (isPostgresUrl(v) ? parsesAsUrl(v) : isAbsolute(v)), {
    error: (iss) => `${JSON.stringify(iss.input)} is neither an absolute file path nor a postgres:// URL`,
  })

export const Profile = z.strictObject({db: StoreLocation})

export const ConfigFile = z.strictObject({
  db: StoreLocation.optional(),
  profiles: z.record(ProfileName, Profile).optional(),
})
export type ConfigFile = z.output<typeof ConfigFile>

/** The settings a command can name: one today. */
export const CONFIG_KEYS = ['db'] as const

const Where = {
  config_file: z.string(),
  key: z.enum(CONFIG_KEYS),
  /** The profile the key belongs to; null for the top level (the default store). */
  profile: z.string().nullable(),
}

/** `config set`: the value as stored, a URL's password masked. */
export const ConfigSetOutput = Envelope.extend({...Where, success: z.literal(true), value: z.string()})
export type ConfigSetOutput = z.output<typeof ConfigSetOutput>

/** `config get`: the value (a URL's password masked), null when the file does not set it. */
export const ConfigGetOutput = Envelope.extend({...Where, success: z.literal(true), value: z.string().nullable()})
export type ConfigGetOutput = z.output<typeof ConfigGetOutput>

/** `config unset`: whether there was a value to remove. */
export const ConfigUnsetOutput = Envelope.extend({...Where, removed: z.boolean(), success: z.literal(true)})
export type ConfigUnsetOutput = z.output<typeof ConfigUnsetOutput>

/** `config list`: the file's settings as they are nested in it, passwords masked. */
export const ConfigListOutput = Envelope.extend({
  config_file: z.string(),
  db: z.string().nullable(),
  profiles: z.record(z.string(), z.object({db: z.string()})),
  success: z.literal(true),
})
export type ConfigListOutput = z.output<typeof ConfigListOutput>
