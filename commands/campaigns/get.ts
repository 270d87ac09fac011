import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {campaignResponse, requireCampaign} from '../../src/segments/campaigns.js'
import {campaignDetail} from '../../src/cli/segments/render.js'
import {CampaignResponse} from '../../src/schemas/segments.js'

export default class CampaignsGet extends BaseCommand<typeof CampaignsGet> {
  static override args = {api_id: Args.string({description: 'api_id of the campaign', required: true})}
  static override readsOnly = true
  static override summary = 'Show a campaign and whether it applies now'
  static override description = 'Show a campaign: coupon, segment, products, window and whether it applies now'
  static override examples = ['<%= config.bin %> campaigns get spring_de', '<%= config.bin %> campaigns get spring_de --json']
  static override get outputSchema() {
    return CampaignResponse
  }

  async run() {
    const c = await requireCampaign(await this.store(), this.args.api_id)
    const out = await campaignResponse(await this.store(), c)
    this.log(campaignDetail({c, state: out.state}))
    return {campaign: out, message: `campaign ${c.api_id}`, success: true as const}
  }
}
