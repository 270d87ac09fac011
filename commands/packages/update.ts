import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {packageBody, packageFlags, refuseApiIdFlag} from '../../src/cli/segments/flags.js'
import {packageResponse, updatePackage} from '../../src/segments/packages.js'
import {PackageResponse} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class PackagesUpdate extends BaseCommand<typeof PackagesUpdate> {
  static override args = {api_id: Args.string({description: 'api_id of the package', required: true})}
  static override changesExisting = true
  static override summary = 'Change a package'
  static override description = 'Change a package; given fields replace stored ones (products and countries as whole lists). Existing locks keep the package they were computed with.'
  static override examples = [
    '<%= config.bin %> packages update br_basic --product pro_monthly,pro_yearly',
    '<%= config.bin %> packages update br_basic --country BR,AR --audience none',
  ]
  static override flags = {...impactFlags, ...packageFlags, 'api-id': {...packageFlags['api-id'], hidden: true}}
  static override get outputSchema() {
    return PackageResponse.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    refuseApiIdFlag(this.flags['api-id'], 'packages', apiId)
    const {dryRun, impact, result: {changed, package: p}} = await this.priceImpact(async () => await updatePackage(await this.store(), apiId, packageBody(this.flags)), {audiences: true})
    const message = changed ? `${dryRun ? 'dry run: would update' : 'updated'} package ${apiId}` : `package ${apiId} unchanged (the update matches what is stored)`
    this.log(message)
    return {dry_run: dryRun, impact, message, package: packageResponse(p), success: true as const}
  }
}
