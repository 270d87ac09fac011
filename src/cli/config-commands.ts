import {Flags} from '@oclif/core'
import {closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, writeSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'

import {InvalidInputError, OperationalError} from '../errors.js'
import {ConfigFile, PROFILE_NAME} from '../schemas/config.js'
import {removeStaleTemps, removeTemp} from '../store/output-file.js'
import {isPostgresUrl, redactUrl} from '../store/url.js'

/** What the `config` commands share: writing the file, the --profile they take, the values they accept (src/cli/config-file.ts reads it). */

/**
 * Write the whole file: into `config.json.PID.tmp` beside it (created owner-only, 0600,
 * whatever the umask), flushed, then renamed over it, so a reader sees the old file or the
 * new one and never a half-written one. The folder is made owner-only (0700) when missing.
 */
export function writeConfig(path: string, config: ConfigFile): void {
  const text = JSON.stringify(ConfigFile.parse(config), undefined, 2) + '\n'
  const tmp = `${path}.${process.pid}.tmp`
  let fd: number | undefined
  try {
    mkdirSync(dirname(path), {mode: 0o700, recursive: true})
    removeStaleTemps(path)
    fd = openSync(tmp, 'wx', 0o600)
    fchmodSync(fd, 0o600)
    const bytes = Buffer.from(text)
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at)
    fsyncSync(fd)
    closeSync(fd)
    fd = undefined
    renameSync(tmp, path)
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    removeTemp(tmp)
    throw new OperationalError(`cannot write the config file ${path}: ${(error as Error).message}`)
  }
}

/** The config commands' --profile: which profile's setting (none: the top level, the default store). */
export const configProfileFlag = Flags.string({description: 'The named store (profile) to set, get or unset, as "--profile NAME" selects it for the other commands (default: the default store)'})

/** A --profile of a config command: a name PRICECTL_PROFILE and --profile can select (src/schemas/config.ts PROFILE_NAME). */
export function profileName(name: string | undefined): string | undefined {
  if (name !== undefined && !PROFILE_NAME.test(name)) {
    throw new InvalidInputError(`--profile: ${JSON.stringify(name)} is not a profile name: letters, digits, "_", "-" or "." (starting with a letter or digit, at most 64)`)
  }
  return name
}

/** A key as `config list` shows it: `db`, or `profiles.NAME.db`. */
export function keyName(key: string, profile: string | undefined): string {
  return profile ? `profiles.${profile}.${key}` : key
}

/**
 * What `config set db VALUE` stores: a postgres:// URL as given (it must parse), a file path
 * made absolute (a relative one would name another store in every folder). Not a folder;
 * no other URL scheme.
 */
export function storeValue(value: string): string {
  if (value.trim() === '') throw new InvalidInputError('VALUE: expected a SQLite file path or a postgres:// URL, got an empty string')
  if (isPostgresUrl(value)) {
    try {
      new URL(value)
    } catch {
      throw new InvalidInputError(`VALUE: ${redactUrl(value)} is not a valid URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)`)
    }
    return value
  }
  const scheme = /^([a-z][\w+.-]*):\/\//i.exec(value)
  if (scheme) throw new InvalidInputError(`VALUE: a store is a SQLite file path or a postgres:// URL, not a ${scheme[1]}:// URL`)
  const path = resolve(value)
  let folder = false
  try {
    folder = statSync(path).isDirectory()
  } catch {
    // Not there yet: `db init` makes it.
  }
  if (folder) throw new InvalidInputError(`VALUE: ${path} is a folder: give the store file's path, such as ${join(path, 'pricectl.db')}`)
  return path
}
