import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {campaignResponse, listCampaigns} from '../../src/segments/campaigns.js'
import {campaignsCsv, campaignsTable} from '../../src/cli/segments/render.js'
import {CAMPAIGN_STATES, CampaignList} from '../../src/schemas/segments.js'

export default class CampaignsList extends BaseCommand<typeof CampaignsList> {
  static override readsOnly = true
  static override summary = 'List campaigns'
  static override description = 'List campaigns (sorted by api_id) with whether each applies now'
  static override examples = ['<%= config.bin %> campaigns list', '<%= config.bin %> campaigns list --state active --json']
  static override flags = {
    ...listFlags,
    output: Flags.string({default: 'table', description: 'Output format (--json prints the response object)', options: ['table', 'csv', 'json']}),
    state: Flags.string({description: 'Only campaigns in this state now', options: [...CAMPAIGN_STATES]}),
  }
  static override get outputSchema() {
    return CampaignList
  }

  async run() {
    const store = await this.store()
    const all = await Promise.all((await listCampaigns(store)).map(async (c) => ({c, out: await campaignResponse(store, c)})))
    const rows = all.filter((r) => this.flags.state === undefined || r.out.state === this.flags.state)
    const result = {campaigns: rows.map((r) => r.out), message: `${rows.length} campaign${rows.length === 1 ? '' : 's'}`, success: true as const}
    if (this.jsonEnabled()) return result
    const table = rows.map((r) => ({c: r.c, state: r.out.state}))
    if (this.flags.output === 'json') this.log(JSON.stringify(result, null, 2))
    else if (this.flags.output === 'csv') process.stdout.write(campaignsCsv(table))
    else if (rows.length === 0) this.log(this.flags.state ? 'no campaigns in that state' : 'no campaigns yet: add one with "pricectl campaigns create"')
    else this.log(campaignsTable(table))
    return result
  }
}
