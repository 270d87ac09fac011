import {BaseCommand, noStoreFlags} from '../../src/cli/base.js'
import {configFilePath, readConfig, shownLocation} from '../../src/cli/config-file.js'
import {ConfigListOutput} from '../../src/schemas/config.js'

export default class ConfigList extends BaseCommand<typeof ConfigList> {
  // The config file, not a store: --db and --profile are accepted (as by every command) but not shown.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Print the settings of the config file (passwords masked)'
  static override description = `Print the settings of the config file (passwords masked)

One KEY=VALUE line each (db, profiles.NAME.db); --json gives them nested as in the file:
{config_file, db, profiles: {NAME: {db}}}. A URL's password is shown as ***. A note on stderr
says when PRICECTL_DB or PRICECTL_PROFILE is set, since they come before the file's db.`
  static override examples = ['<%= config.bin %> config list', '<%= config.bin %> config list --json']
  static override get outputSchema() {
    return ConfigListOutput
  }

  async run(): Promise<ConfigListOutput> {
    const file = configFilePath(this.config)
    const config = await readConfig(file)
    const db = config.db === undefined ? null : shownLocation(config.db)
    const names = Object.keys(config.profiles ?? {}).sort()
    const profiles = Object.fromEntries(names.map((name) => [name, {db: shownLocation(config.profiles![name].db)}]))
    const lines = [...(db === null ? [] : [`db=${db}`]), ...names.map((name) => `profiles.${name}.db=${profiles[name].db}`)]
    if (lines.length === 0) this.log(`no settings in ${file}: set the default store with "pricectl config set db PATH_OR_URL"`)
    else this.log(lines.join('\n'))
    if (process.env.PRICECTL_DB) this.note('note: PRICECTL_DB is set: commands without --db or --profile open its store, not the file\'s db')
    else if (process.env.PRICECTL_PROFILE) this.note(`note: PRICECTL_PROFILE=${process.env.PRICECTL_PROFILE} is set: commands without --db or --profile open that profile's store, not the file's db`)
    const message = `${lines.length} setting${lines.length === 1 ? '' : 's'} in ${file}`
    return {config_file: file, db, message, profiles, success: true}
  }
}
