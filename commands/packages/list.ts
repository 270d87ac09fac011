import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {listPackages, packageResponse} from '../../src/segments/packages.js'
import {packagesCsv, packagesTable} from '../../src/cli/segments/render.js'
import {PackageList} from '../../src/schemas/segments.js'

export default class PackagesList extends BaseCommand<typeof PackagesList> {
  static override readsOnly = true
  static override summary = 'List packages'
  static override description = 'List packages (sorted by api_id) with their products and segment'
  static override examples = ['<%= config.bin %> packages list', '<%= config.bin %> packages list --json']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format (--json prints the response object)', options: ['table', 'csv', 'json']}),
  }
  static override get outputSchema() {
    return PackageList
  }

  async run() {
    const packages = await listPackages(await this.store())
    const result = {message: `${packages.length} package${packages.length === 1 ? '' : 's'}`, packages: packages.map((p) => packageResponse(p)), success: true as const}
    if (this.jsonEnabled()) return result
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(packagesCsv(packages))
    else if (packages.length === 0) this.log('no packages yet: add one with "pricectl packages create"')
    else this.log(packagesTable(packages))
    return result
  }
}
