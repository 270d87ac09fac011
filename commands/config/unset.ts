import {Args} from '@oclif/core'

import {BaseCommand, noStoreFlags} from '../../src/cli/base.js'
import {configProfileFlag, keyName, profileName, writeConfig} from '../../src/cli/config-commands.js'
import {configFilePath, profileOf, readConfig, unknownProfile} from '../../src/cli/config-file.js'
import {CONFIG_KEYS, ConfigUnsetOutput} from '../../src/schemas/config.js'

export default class ConfigUnset extends BaseCommand<typeof ConfigUnset> {
  static override args = {key: Args.string({description: 'The setting: db (the store)', options: [...CONFIG_KEYS], required: true})}
  // The config file, not a store: --db is accepted (as by every command) but not shown; --profile is this command's own.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Remove a setting from the config file'
  static override description = `Remove a setting from the config file

Without --profile, the default store (commands then use $PRICECTL_DB or the built-in default);
with --profile NAME, the profile (db is its only setting). A setting that is not there is
nothing to do (exit 0); an unknown --profile exits 2, naming the profiles there are. The store
itself is never touched.`
  static override examples = ['<%= config.bin %> config unset db', '<%= config.bin %> config unset db --profile staging']
  static override flags = {profile: configProfileFlag}
  static override get outputSchema() {
    return ConfigUnsetOutput
  }

  async run(): Promise<ConfigUnsetOutput> {
    const file = configFilePath(this.config)
    const profile = profileName(this.flags.profile)
    const config = await readConfig(file)
    const key = keyName('db', profile)
    let removed: boolean
    if (profile) {
      if (!profileOf(config, profile)) throw unknownProfile(profile, config, file)
      const profiles = Object.fromEntries(Object.entries(config.profiles!).filter(([name]) => name !== profile))
      const {profiles: _, ...rest} = config
      writeConfig(file, Object.keys(profiles).length > 0 ? {...rest, profiles} : rest)
      removed = true
    } else {
      removed = config.db !== undefined
      if (removed) {
        const {db: _, ...rest} = config
        writeConfig(file, rest)
      }
    }
    const message = profile ? `removed profile ${profile} (its db was its only setting) from ${file}` : removed ? `removed ${key} from ${file}` : `${key} is not set in ${file}; nothing to do`
    this.log(message)
    return {config_file: file, key: 'db', message, profile: profile ?? null, removed, success: true}
  }
}
