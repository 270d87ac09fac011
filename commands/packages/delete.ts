import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {deletePackage, requirePackage} from '../../src/segments/packages.js'
import {PackageDeleted} from '../../src/schemas/segments.js'

export default class PackagesDelete extends BaseCommand<typeof PackagesDelete> {
  static override args = {api_id: Args.string({description: 'api_id of the package', required: true})}
  static override summary = 'Delete a package'
  static override description = 'Delete a package (its products stay; existing locks keep the package they were computed with)'
  static override examples = ['<%= config.bin %> packages delete br_basic --yes']
  static override flags = {
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return PackageDeleted
  }

  async run() {
    const apiId = this.args.api_id
    requirePackage(this.store, apiId)
    await confirmDestructive(this.flags.yes, `delete package ${apiId}`)
    deletePackage(this.store, apiId)
    const message = `deleted package ${apiId}`
    this.log(message)
    return {api_id: apiId, message, success: true as const}
  }
}
