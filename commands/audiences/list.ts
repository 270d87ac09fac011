import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {audienceResponse, listAudiences} from '../../src/segments/audiences.js'
import {audiencesCsv, audiencesTable} from '../../src/cli/segments/render.js'
import {AudienceList} from '../../src/schemas/segments.js'

export default class AudiencesList extends BaseCommand<typeof AudiencesList> {
  static override readsOnly = true
  static override summary = 'List audiences, highest priority first'
  static override description = 'List audiences, highest priority first (the order they are matched in)'
  static override examples = ['<%= config.bin %> audiences list', '<%= config.bin %> audiences list --output csv']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format (--json prints the response object)', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return AudienceList
  }

  async run() {
    const audiences = await listAudiences(await this.store())
    const result = {audiences: audiences.map((a) => audienceResponse(a)), message: `${audiences.length} audience${audiences.length === 1 ? '' : 's'}`, success: true as const}
    if (this.jsonEnabled()) return result
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(audiencesCsv(audiences))
    else if (audiences.length === 0) this.log('no audiences yet: every user is in the default audience (add one with "pricectl audiences create")')
    else this.log(audiencesTable(audiences))
    return result
  }
}
