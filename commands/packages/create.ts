import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {requireFields} from '../../src/cli/input.js'
import {packageBody, packageFlags} from '../../src/cli/segments/flags.js'
import {createPackage, packageResponse, packageSegment} from '../../src/segments/packages.js'
import {PackageResponse} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class PackagesCreate extends BaseCommand<typeof PackagesCreate> {
  static override summary = 'Create a package: products segmented by country and audience'
  static override description = `Create a package: a named set of products, segmented by countries and/or an audience

"pricectl price" without --product prices the package segmented for the user's country and
audience; --package-id picks one by name. A package with no segment is picked only by --package-id.`
  static override examples = [
    '<%= config.bin %> packages create --api-id br_basic --name "Brazil basic" --product pro_monthly,lifetime --country BR',
    '<%= config.bin %> packages create --api-id students --name Students --product pro_yearly --audience students',
    '<%= config.bin %> packages create --body package.json',
  ]
  static override flags = {...packageFlags, ...impactFlags}
  static override get outputSchema() {
    return PackageResponse.extend(WithImpact)
  }

  async run() {
    const body = await requireFields(packageBody(this.flags), [
      {field: 'api_id', flag: '--api-id', message: 'api_id'},
      {field: 'name', flag: '--name', message: 'Name'},
      {field: 'products', flag: '--product', message: 'Products (comma-separated api_ids)', parse: (a) => a.split(',').map((s) => s.trim()).filter(Boolean)},
    ])
    const {dryRun, impact, result: p} = await this.priceImpact(async () => await createPackage(await this.store(), body), {audiences: true})
    const message = `${dryRun ? 'dry run: would create' : 'created'} package ${p.api_id}`
    this.log(`${message} (${p.products.join(', ')}) for ${packageSegment(p)}`)
    return {dry_run: dryRun, impact, message, package: packageResponse(p), success: true as const}
  }
}
