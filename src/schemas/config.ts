import {z} from 'zod'

import {Envelope, userKeys} from './common.js'
import {isStoreLocation, PROFILE_NAME} from './no-zod.js'

export {PROFILE_NAME}

/**
 * pricectl's config file (src/cli/config-file.ts, docs/environment.md): the default store
 * and named stores (profiles), and what the `config` commands print. A command that only
 * reads the file checks it by hand (no-zod.ts isConfigFileShape) and loads this module only
 * to say what is wrong.
 */

export const ProfileName = z.string().regex(PROFILE_NAME, {
  error: (iss) => `profile name ${JSON.stringify(iss.input)}: expected letters, digits, "_", "-" or "." (starting with a letter or digit, at most 64)`,
})

/**
 * A store in the file: an absolute SQLite path (a relative one would mean another store in
 * every folder it is run from; `config set` makes a relative path absolute) or a postgres:// URL.
 */
export const StoreLocation = z
  .string({error: (iss) => `expected a string, got ${JSON.stringify(iss.input)}`})
  .refine(isStoreLocation, {
    error: (iss) => `${JSON.stringify(iss.input)} is neither an absolute file path nor a postgres:// URL`,
  })

export const Profile = z.strictObject({db: StoreLocation})

export const ConfigFile = z.strictObject({
  db: StoreLocation.optional(),
  // userKeys: a "__proto__" profile is refused, not dropped without a word.
  profiles: userKeys(z.record(ProfileName, Profile), 'profile').optional(),
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
