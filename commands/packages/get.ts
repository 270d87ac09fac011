import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {packageResponse, requirePackage} from '../../src/segments/packages.js'
import {packageDetail} from '../../src/cli/segments/render.js'
import {PackageResponse} from '../../src/schemas/segments.js'

export default class PackagesGet extends BaseCommand<typeof PackagesGet> {
  static override args = {api_id: Args.string({description: 'api_id of the package', required: true})}
  static override readsOnly = true
  static override summary = 'Show a package'
  static override description = 'Show a package: its products and segment'
  static override examples = ['<%= config.bin %> packages get br_basic', '<%= config.bin %> packages get br_basic --json']
  static override get outputSchema() {
    return PackageResponse
  }

  async run() {
    const p = await requirePackage(await this.store(), this.args.api_id)
    this.log(packageDetail(p))
    return {message: `package ${p.api_id}`, package: packageResponse(p), success: true as const}
  }
}
