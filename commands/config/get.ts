import {Args} from '@oclif/core'

import {BaseCommand, noStoreFlags} from '../../src/cli/base.js'
import {configProfileFlag, keyName, profileName} from '../../src/cli/config-commands.js'
import {configFilePath, profileOf, readConfig, shownLocation, unknownProfile} from '../../src/cli/config-file.js'
import {CONFIG_KEYS, ConfigGetOutput} from '../../src/schemas/config.js'

export default class ConfigGet extends BaseCommand<typeof ConfigGet> {
  static override args = {key: Args.string({description: 'The setting: db (the store)', options: [...CONFIG_KEYS], required: true})}
  // The config file, not a store: --db is accepted (as by every command) but not shown; --profile is this command's own.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Print a setting of the config file (a password masked)'
  static override description = `Print a setting of the config file (a password masked)

The value the file holds, or nothing (with a note on stderr, exit 0) when it does not set it.
A URL's password is shown as ***: read the file itself for it. An unknown --profile exits 2,
naming the profiles there are.`
  static override examples = ['<%= config.bin %> config get db', '<%= config.bin %> config get db --profile prod --json']
  static override flags = {profile: configProfileFlag}
  static override get outputSchema() {
    return ConfigGetOutput
  }

  async run(): Promise<ConfigGetOutput> {
    const file = configFilePath(this.config)
    const profile = profileName(this.flags.profile)
    const config = await readConfig(file)
    if (profile && !profileOf(config, profile)) throw unknownProfile(profile, config, file)
    const stored = profile ? profileOf(config, profile)!.db : config.db
    const key = keyName('db', profile)
    const value = stored === undefined ? null : shownLocation(stored)
    const message = value === null ? `${key} is not set in ${file}` : `${key} is ${value}`
    if (value === null) this.note(message)
    else this.log(value)
    return {config_file: file, key: 'db', message, profile: profile ?? null, success: true, value}
  }
}
