import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteAudience, requireAudience} from '../../src/segments/audiences.js'
import {AudienceDeleted} from '../../src/schemas/segments.js'

export default class AudiencesDelete extends BaseCommand<typeof AudiencesDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the audience', required: true})}
  static override summary = 'Delete an audience and its audience prices'
  static override description = 'Delete an audience and its audience prices (existing locks keep the audience they were computed with)'
  static override examples = ['<%= config.bin %> audiences delete old_segment --yes', '<%= config.bin %> audiences delete students --yes --force']
  static override flags = {
    force: Flags.boolean({description: 'Delete even when packages or campaigns are segmented on the audience (they are deleted too)'}),
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return AudienceDeleted
  }

  async run() {
    const apiId = this.args.api_id
    requireAudience(this.store, apiId)
    await confirmDestructive(this.flags.yes, `delete audience ${apiId}`)
    const {campaigns, packages} = deleteAudience(this.store, apiId, {force: this.flags.force})
    const also = [...packages.map((p) => `package ${p}`), ...campaigns.map((c) => `campaign ${c}`)]
    const message = `deleted audience ${apiId}${also.length ? ` and ${also.join(', ')}` : ''}`
    this.log(message)
    return {api_id: apiId, campaigns_deleted: campaigns, message, packages_deleted: packages, success: true as const}
  }
}
