import {z} from 'zod'

import {BaseCommand, noStoreFlags} from '../src/cli/base.js'

/** What `version --json` prints. */
const VersionOutput = z.object({
  arch: z.string(),
  name: z.string(),
  node: z.string(),
  platform: z.string(),
  user_agent: z.string(),
  version: z.string(),
})

/**
 * `pricectl version` (also `--version` and `-v`: bin/run.js turns them into this command when
 * more follows, such as --json; alone, it answers them without loading oclif).
 */
export default class Version extends BaseCommand<typeof Version> {
  // No store is opened: --db and --profile are accepted (as by every command) but not shown.
  static override baseFlags = noStoreFlags
  static override usesStore = false
  static override summary = 'Print the version of pricectl, Node.js and the platform'
  static override description = `The text is oclif's user agent line: NAME/VERSION PLATFORM-ARCH NODE-VERSION, the line
"pricectl --version" and "pricectl -v" print.`
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> --version', '<%= config.bin %> version --json']
  static override get outputSchema() {
    return VersionOutput
  }

  async run() {
    const {arch, name, platform, userAgent, version} = this.config
    this.log(userAgent)
    return {arch, name, node: process.version, platform, user_agent: userAgent, version}
  }
}
