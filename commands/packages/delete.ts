import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deletePackage, requirePackage} from '../../src/segments/packages.js'
import {PackageDeleted} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class PackagesDelete extends BaseCommand<typeof PackagesDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the package', required: true})}
  static override changesExisting = true
  static override summary = 'Delete a package'
  static override description = 'Delete a package (its products stay; existing locks keep the package they were computed with)'
  static override examples = ['<%= config.bin %> packages delete br_basic --yes']
  static override flags = {
    ...impactFlags,
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return PackageDeleted.extend(WithImpact)
  }

  async run() {
    const apiId = this.args.api_id
    await requirePackage(await this.store(), apiId)
    if (!this.flags['dry-run']) await confirmDestructive(this.flags.yes, `delete package ${apiId}`)
    const {dryRun, impact} = await this.priceImpact(async () => await deletePackage(await this.store(), apiId), {audiences: true}, {confirmed: !this.flags.yes})
    const message = `${dryRun ? 'dry run: would delete' : 'deleted'} package ${apiId}`
    this.log(message)
    return {api_id: apiId, dry_run: dryRun, impact, message, success: true as const}
  }
}
