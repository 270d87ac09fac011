import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deleteAudience, requireAudience} from '../../src/segments/audiences.js'
import {AudienceDeleted} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class AudiencesDelete extends BaseCommand<typeof AudiencesDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the audience', required: true})}
  static override changesExisting = true
  static override summary = 'Delete an audience and its audience prices'
  static override description = 'Delete an audience and its audience prices (existing locks keep the audience they were computed with)'
  static override examples = ['<%= config.bin %> audiences delete old_segment --yes', '<%= config.bin %> audiences delete students --yes --force']
  static override flags = {
    ...impactFlags,
    force: Flags.boolean({description: 'Delete even when packages or campaigns are segmented on the audience (they are deleted too)'}),
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return AudienceDeleted.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    await requireAudience(await this.store(), apiId)
    if (!this.flags['dry-run']) await confirmDestructive(this.flags.yes, `delete audience ${apiId}`)
    const {dryRun, impact, result: {campaigns, packages}} = await this.priceImpact(async () => await deleteAudience(await this.store(), apiId, {force: this.flags.force}), {audiences: true}, {confirmed: !this.flags.yes})
    const also = [...packages.map((p) => `package ${p}`), ...campaigns.map((c) => `campaign ${c}`)]
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} audience ${apiId}${also.length ? ` and ${also.join(', ')}` : ''}`
    this.log(message)
    return {api_id: apiId, dry_run: dryRun, impact, campaigns_deleted: campaigns, message, packages_deleted: packages, success: true as const}
  }
}
