import {Args} from '@oclif/core'

import {BaseCommand, noStoreFlags} from '../../src/cli/base.js'
import {configProfileFlag, keyName, profileName, storeValue, writeConfig} from '../../src/cli/config-commands.js'
import {configFilePath, profileOf, readConfig, shownLocation} from '../../src/cli/config-file.js'
import {CONFIG_KEYS, ConfigSetOutput} from '../../src/schemas/config.js'
import {isMissingStore} from '../../src/store/db.js'

export default class ConfigSet extends BaseCommand<typeof ConfigSet> {
  static override args = {
    key: Args.string({description: 'The setting: db (the store)', options: [...CONFIG_KEYS], required: true}),
    value: Args.string({description: 'A SQLite file path (kept as an absolute path) or a postgres:// URL', required: true}),
  }
  // The config file, not a store: --db is accepted (as by every command) but not shown; --profile is this command's own.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Set the default store, or a named one (--profile), in the config file'
  static override description = `Set the default store, or a named one (--profile), in the config file

The file is config.json in pricectl's config folder ($PRICECTL_CONFIG_DIR, else
$XDG_CONFIG_HOME/pricectl, else ~/.config/pricectl), written whole and owner-only (0600):
a postgres:// URL may hold a password, which "config get" and "config list" never show.
Which store a command opens: --db, then --profile, $PRICECTL_DB, $PRICECTL_PROFILE, the file's
db, else the built-in default ($XDG_DATA_HOME/pricectl/pricectl.db). See docs/environment.md.`
  static override examples = [
    '<%= config.bin %> config set db ~/pricing/pricing.db',
    '<%= config.bin %> config set db "postgres://app:$PGPASSWORD@db.internal/pricing" --profile prod',
    '<%= config.bin %> products list --profile prod',
  ]
  static override flags = {profile: configProfileFlag}
  static override get outputSchema() {
    return ConfigSetOutput
  }

  async run(): Promise<ConfigSetOutput> {
    const file = configFilePath(this.config)
    const profile = profileName(this.flags.profile)
    const value = storeValue(this.args.value)
    const config = await readConfig(file)
    if (profile) writeConfig(file, {...config, profiles: {...config.profiles, [profile]: {...profileOf(config, profile), db: value}}})
    else writeConfig(file, {...config, db: value})
    const shown = shownLocation(value)
    const message = `${keyName('db', profile)} set to ${shown} in ${file}`
    this.log(message)
    if (isMissingStore(value)) this.note(`note: there is no store at ${value} yet: make one with "pricectl db init${profile ? ` --profile ${profile}` : ''}"`)
    return {config_file: file, key: 'db', message, profile: profile ?? null, success: true, value: shown}
  }
}
