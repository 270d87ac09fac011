import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteCampaign} from '../../src/segments/campaign-writes.js'
import {requireCampaign} from '../../src/segments/campaigns.js'
import {CampaignDeleted} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class CampaignsDelete extends BaseCommand<typeof CampaignsDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the campaign', required: true})}
  static override changesExisting = true
  static override summary = 'Delete a campaign'
  static override description = 'Delete a campaign (its coupon stays; existing locks keep the coupon they were computed with)'
  static override examples = ['<%= config.bin %> campaigns delete spring_de --yes']
  static override flags = {
    ...impactFlags,
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return CampaignDeleted.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    await requireCampaign(await this.store(), apiId)
    if (!this.flags['dry-run']) await confirmDestructive(this.flags.yes, `delete campaign ${apiId}`)
    const {dryRun, impact} = await this.priceImpact(async () => await deleteCampaign(await this.store(), apiId), {audiences: true}, {confirmed: !this.flags.yes})
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} campaign ${apiId}`
    this.log(message)
    return {api_id: apiId, dry_run: dryRun, impact, message, success: true as const}
  }
}
