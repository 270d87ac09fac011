import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {InvalidInputError, OperationalError} from '../errors.js'
import {isPostgresUrl, redactUrl} from '../store/url.js'
import type {ConfigFile} from '../schemas/config.js'
import {isConfigFileShape} from '../schemas/no-zod.js'

/**
 * pricectl's config file: `config.json` in oclif's config folder for pricectl
 * ($PRICECTL_CONFIG_DIR, else $XDG_CONFIG_HOME/pricectl, else ~/.config/pricectl; on Windows
 * %LOCALAPPDATA%\pricectl). It holds the default store and named stores (profiles):
 *
 *   {"db": "/srv/pricing.db", "profiles": {"staging": {"db": "postgres://app:PASS@db/pricing"}}}
 *
 * written by `pricectl config set/unset`, whole and owner-only (it may hold a password).
 * The store a command opens (chooseStore): --db > --profile > PRICECTL_DB > PRICECTL_PROFILE
 * > the file's db > the built-in default.
 */

export type {ConfigFile}

/** What oclif's Config knows of the user's folders. */
export type ConfigFolders = {dirname: string; home: string; scopedEnvVar(key: string): string | undefined; windows: boolean}

/**
 * The file in oclif's `config.configDir`, computed as oclif does (Config.load: its
 * scopedEnvVar('CONFIG_DIR'), else dir('config')) but from the variables as they are now:
 * oclif's value is fixed when the Config loads, and in-process tests load it once.
 */
export function configFilePath(config: ConfigFolders): string {
  const base = process.env.XDG_CONFIG_HOME || (config.windows && process.env.LOCALAPPDATA) || join(config.home, '.config')
  return join(config.scopedEnvVar('CONFIG_DIR') || join(base, config.dirname), 'config.json')
}

/** The file's settings, validated; {} when there is no file. */
export async function readConfig(path: string): Promise<ConfigFile> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new OperationalError(`cannot read the config file ${path}: ${(error as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new OperationalError(`the config file ${path} is not valid JSON (${(error as Error).message}): fix it, or remove it`)
  }
  if (isConfigFileShape(json)) return json
  // What is wrong, in the schema's words: zod is loaded for a file that is not valid only.
  const [{ConfigFile}, {formatIssues}] = await Promise.all([import('../schemas/config.js'), import('../schemas/validate.js')])
  const r = ConfigFile.safeParse(json)
  if (!r.success) throw new OperationalError(`the config file ${path} is not valid: ${formatIssues(r.error.issues, json)}; fix it (pricectl config set / unset), or remove it`)
  return r.data
}

/** A store as messages and `config get/list` show it: a URL's password masked. */
export function shownLocation(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location
}

/** Where the store a command opens was named. */
export type StoreSource =
  | {kind: 'default'}
  | {kind: 'config'; file: string}
  | {kind: 'env'}
  | {kind: 'flag'}
  | {kind: 'profile'; file: string; name: string; via: '--profile' | 'PRICECTL_PROFILE'}

export type StoreChoice = {
  /** The store named (a path or URL as given); undefined for the built-in default. */
  spec: string | undefined
  source: StoreSource
}

/**
 * The store a command opens: --db > --profile > PRICECTL_DB > PRICECTL_PROFILE > the config
 * file's db > the built-in default (undefined: src/store/db.ts resolveStorePath). The file
 * is read only when no flag or variable names a store. An unknown profile is invalid input
 * (exit 2) naming the profiles there are.
 */
export async function chooseStore(given: {db?: string; profile?: string}, file: () => string, env: NodeJS.ProcessEnv = process.env): Promise<StoreChoice> {
  if (given.db) return {source: {kind: 'flag'}, spec: given.db}
  if (given.profile) return fromProfile(given.profile, '--profile', file())
  if (env.PRICECTL_DB) return {source: {kind: 'env'}, spec: env.PRICECTL_DB}
  if (env.PRICECTL_PROFILE) return fromProfile(env.PRICECTL_PROFILE, 'PRICECTL_PROFILE', file())
  const path = file()
  const config = await readConfig(path)
  return config.db ? {source: {file: path, kind: 'config'}, spec: config.db} : {source: {kind: 'default'}, spec: undefined}
}

async function fromProfile(name: string, via: '--profile' | 'PRICECTL_PROFILE', file: string): Promise<StoreChoice> {
  const config = await readConfig(file)
  const profile = profileOf(config, name)
  if (!profile) throw unknownProfile(name, config, file, via)
  return {source: {file, kind: 'profile', name, via}, spec: profile.db}
}

/** The profile `name` of the file (own keys only), or undefined. */
export function profileOf(config: ConfigFile, name: string): undefined | {db: string} {
  return config.profiles && Object.hasOwn(config.profiles, name) ? config.profiles[name] : undefined
}

export function unknownProfile(name: string, config: ConfigFile, file: string, via = '--profile'): InvalidInputError {
  const names = Object.keys(config.profiles ?? {}).sort()
  const known = names.length > 0 ? `the profiles in ${file} are ${names.join(', ')}` : `${file} has no profiles`
  return new InvalidInputError(`unknown profile ${JSON.stringify(name)} (${via}): ${known}; add one with: pricectl config set db PATH_OR_URL --profile ${name}`)
}

/**
 * For a message about a store that is not there: where it was named, and the command that
 * makes it (`db init` with the same selection).
 */
export function describeSource(source: StoreSource, path: string): {init: string; where: string} {
  switch (source.kind) {
    case 'profile': {
      return {init: `pricectl db init --profile ${source.name}`, where: ` (profile ${source.name} of ${source.file}, chosen by ${source.via})`}
    }
    case 'config': {
      return {init: 'pricectl db init', where: ` (the db of ${source.file})`}
    }
    default: {
      return {init: `pricectl db init --db ${path}`, where: ''}
    }
  }
}
