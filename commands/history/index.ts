import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {listFlags} from '../../src/cli/list-options.js'
import {table} from '../../src/cli/render.js'
import {describeRows, listChanges} from '../../src/history/history.js'
import {HistoryList} from '../../src/schemas/history.js'

export default class History extends BaseCommand<typeof History> {
  static override readsOnly = true
  static override summary = 'List changes to the catalog and configuration: who, when, what'
  static override description = `List changes to the catalog and the configuration, newest first

Every command (and server request) that writes products, country prices, coupons, campaigns, audiences, packages, experiments, localization factors, rounding rules, FX rates, gateway settings, settings or API keys is recorded with the time, the OS user (or "key:NAME" for the server), the command line and each row before and after. Revenue records, locks and users are not recorded. See a change with "pricectl history show CHANGE", undo it with "pricectl revert CHANGE".`
  static override examples = [
    '<%= config.bin %> history',
    '<%= config.bin %> history --product starter_monthly --since 2026-01-01',
    '<%= config.bin %> history --table country_prices --actor alice --limit 10 --json',
  ]
  static override flags = {
    ...listFlags,
    actor: Flags.string({description: 'Only changes by this OS user, or "key:NAME" for an API key of the server'}),
    limit: Flags.integer({default: 50, description: 'At most this many changes (the newest)', min: 1}),
    product: Flags.string({description: 'Only changes to this product (its api_id), its country prices and other rows'}),
    since: Flags.string({description: 'Only changes at or after this date or date-time (UTC unless it carries an offset)'}),
    table: Flags.string({description: 'Only changes that wrote this table (e.g. country_prices)'}),
  }
  static override get outputSchema() {
    return HistoryList
  }

  async run(): Promise<HistoryList> {
    const {actor, limit, product, since, table: t} = this.flags
    const changes = await listChanges(await this.store(), {actor, limit, product, since, table: t})
    const message = `${changes.length} change${changes.length === 1 ? '' : 's'}`
    if (changes.length === 0) this.log('no changes recorded' + (actor || product || since || t ? ' that match' : ' yet'))
    else {
      this.log(
        table(changes, [
          {header: 'id', value: (c) => c.id},
          {header: 'at', value: (c) => c.at},
          {header: 'actor', value: (c) => c.actor},
          {header: 'command', value: (c) => c.command},
          {header: 'rows', value: (c) => describeRows(c.rows)},
          {header: 'note', value: (c) => [c.summary, c.reverted_by ? `reverted by ${c.reverted_by}` : null].filter(Boolean).join('; ')},
        ]),
      )
    }
    return {changes, message, success: true}
  }
}
