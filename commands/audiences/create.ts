import {BaseCommand} from '../../src/cli/base.js'
import {impactFlags} from '../../src/cli/impact-flags.js'
import {requireFields} from '../../src/cli/input.js'
import {audienceResponse, createAudience} from '../../src/segments/audiences.js'
import {audienceBody, audienceFlags} from '../../src/cli/segments/flags.js'
import {AudienceResponse} from '../../src/schemas/segments.js'
import {WithImpact} from '../../src/schemas/impact.js'

export default class AudiencesCreate extends BaseCommand<typeof AudiencesCreate> {
  static override summary = 'Create an audience: priority, rules and audience prices'
  static override description = `Create an audience: a priority, rules that must all hold, and per-product audience prices

A user is in every audience whose rules hold; the highest priority one is the price result's
"audience" and sets the audience price. Rule syntax: docs/segments.md.`
  static override examples = [
    '<%= config.bin %> audiences create --api-id dach --name "DACH" --rule "country in DE,AT,CH" --price pro_monthly=x0.9',
    '<%= config.bin %> audiences create --api-id power --name "Power users" --priority 10 --rule "feature plan_level gte 3" --price pro_yearly=79:EUR',
    '<%= config.bin %> audiences create --body audience.json',
  ]
  static override flags = {...audienceFlags, ...impactFlags}
  static override get outputSchema() {
    return AudienceResponse.extend(WithImpact)
  }

  async run() {
    const body = await requireFields(audienceBody(this.flags), [
      {field: 'api_id', flag: '--api-id', message: 'api_id'},
      {field: 'name', flag: '--name', message: 'Name'},
    ])
    const {dryRun, impact, result: a} = await this.priceImpact(async () => await createAudience(await this.store(), body), {audiences: true})
    const message = `${dryRun ? 'dry run: would create' : 'created'} audience ${a.api_id}`
    this.log(`${message} (${a.name}, priority ${a.priority}, ${a.rules.length ? `${a.rules.length} rule${a.rules.length === 1 ? '' : 's'}` : 'no rules: matches everyone'}, ${a.prices.length} price${a.prices.length === 1 ? '' : 's'})`)
    return {audience: audienceResponse(a), dry_run: dryRun, impact, message, success: true as const}
  }
}
