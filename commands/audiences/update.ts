import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {audienceResponse, updateAudience} from '../../src/segments/audiences.js'
import {audienceBody, audienceFlags, refuseApiIdFlag} from '../../src/cli/segments/flags.js'
import {AudienceResponse} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class AudiencesUpdate extends BaseCommand<typeof AudiencesUpdate> {
  static override args = {api_id: Args.string({description: 'api_id of the audience', required: true})}
  static override changesExisting = true
  static override summary = 'Change an audience'
  static override description = 'Change an audience; given fields replace stored ones (rules and prices as whole lists). Existing locks keep the audience they were computed with.'
  static override examples = [
    '<%= config.bin %> audiences update power --priority 20',
    '<%= config.bin %> audiences update dach --rule "country in DE,AT" --rule "feature plan neq free"',
    '<%= config.bin %> audiences update dach --price none',
  ]
  static override flags = {...impactFlags, ...audienceFlags, 'api-id': {...audienceFlags['api-id'], hidden: true}}
  static override get outputSchema() {
    return AudienceResponse.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    refuseApiIdFlag(this.flags['api-id'], 'audiences', apiId)
    const {dryRun, impact, result: {audience, changed}} = await this.priceImpact(async () => await updateAudience(await this.store(), apiId, audienceBody(this.flags)), {audiences: true})
    const message = changed ? `${dryRun ? 'dry run: would update' : 'updated'} audience ${apiId}` : `audience ${apiId} unchanged (the update matches what is stored)`
    this.log(message)
    return {audience: audienceResponse(audience), dry_run: dryRun, impact, message, success: true as const}
  }
}
