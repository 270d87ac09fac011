import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {audienceResponse, requireAudience} from '../../src/segments/audiences.js'
import {audienceDetail} from '../../src/cli/segments/render.js'
import {AudienceResponse} from '../../src/schemas/segments.js'

export default class AudiencesGet extends BaseCommand<typeof AudiencesGet> {
  static override args = {api_id: Args.string({description: 'api_id of the audience', required: true})}
  static override readsOnly = true
  static override summary = 'Show an audience'
  static override description = 'Show an audience: priority, rules and audience prices'
  static override examples = ['<%= config.bin %> audiences get power', '<%= config.bin %> audiences get power --json']
  static override get outputSchema() {
    return AudienceResponse
  }

  async run() {
    const a = await requireAudience(await this.store(), this.args.api_id)
    this.log(audienceDetail(a))
    return {audience: audienceResponse(a), message: `audience ${a.api_id}`, success: true as const}
  }
}
