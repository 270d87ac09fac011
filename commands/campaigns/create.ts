import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {requireFields} from '../../src/cli/input.js'
import {createCampaign} from '../../src/segments/campaign-writes.js'
import {campaignResponse} from '../../src/segments/campaigns.js'
import {segmentText} from '../../src/segments/common.js'
import {campaignBody, campaignFlags} from '../../src/cli/segments/flags.js'
import {CampaignResponse} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class CampaignsCreate extends BaseCommand<typeof CampaignsCreate> {
  static override summary = 'Create a campaign: a coupon applied to a segment'
  static override description = `Create a campaign: a coupon applied automatically to users of a segment inside a window

The segment is countries and/or an audience (none: everyone). The coupon must also be ACTIVE
and inside its own window when a price is computed. Existing locks keep their coupon.`
  static override examples = [
    '<%= config.bin %> campaigns create --api-id spring_de --name "Spring DE" --coupon SPRING25 --country DE,AT --active-from 2026-03-01 --active-till 2026-03-31',
    '<%= config.bin %> campaigns create --api-id students --name "Student deal" --coupon STUDENT10 --audience students --product pro_yearly',
    '<%= config.bin %> campaigns create --body campaign.json',
  ]
  static override flags = {...campaignFlags, ...impactFlags}
  static override get outputSchema() {
    return CampaignResponse.extend(WithImpact)
  }

  async run() {
    const body = await requireFields(campaignBody(this.flags), [
      {field: 'api_id', flag: '--api-id', message: 'api_id'},
      {field: 'name', flag: '--name', message: 'Name'},
      {field: 'coupon', flag: '--coupon', message: 'Coupon api_id'},
    ])
    const {dryRun, impact, result: {c, out}} = await this.priceImpact(async () => {
      const c = await createCampaign(await this.store(), body)
      return {c, out: await campaignResponse(await this.store(), c)}
    }, {audiences: true})
    const message = `${dryRun ? 'dry run: would create' : 'created'} campaign ${c.api_id}`
    this.log(`${message}: coupon ${c.coupon} for ${segmentText(c.countries, c.audience)}${c.products.length ? ` on ${c.products.join(', ')}` : ''} (${out.state.replaceAll('_', ' ')} now)`)
    return {campaign: out, dry_run: dryRun, impact, message, success: true as const}
  }
}
