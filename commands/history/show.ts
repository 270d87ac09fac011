import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {describeRows, rowName, showChange} from '../../src/history/history.js'
import {HistoryShow} from '../../src/schemas/history.js'

export default class HistoryShowCommand extends BaseCommand<typeof HistoryShowCommand> {
  static override args = {change: Args.integer({description: 'The change id (as "pricectl history" lists it)', min: 1, required: true})}
  static override readsOnly = true
  static override summary = 'Show one change: who, which command, and every row before and after'
  static override examples = ['<%= config.bin %> history show 12', '<%= config.bin %> history show 12 --json']
  static override get outputSchema() {
    return HistoryShow
  }

  async run(): Promise<HistoryShow> {
    const {change, rows} = await showChange(await this.store(), this.args.change)
    this.log(`change ${change.id} at ${change.at} by ${change.actor}: ${change.command}`)
    if (change.summary) this.log(change.summary)
    if (change.reverted_by) this.log(`reverted by change ${change.reverted_by}`)
    this.log(describeRows(change.rows))
    for (const r of rows) {
      if (r.action === 'updated') {
        const diff = Object.keys(r.after!)
          .filter((k) => JSON.stringify(r.before![k]) !== JSON.stringify(r.after![k]))
          .map((k) => `${k} ${JSON.stringify(r.before![k])} -> ${JSON.stringify(r.after![k])}`)
        this.log(`~ ${rowName(r)}: ${diff.join(', ')}`)
      } else {
        const image = (r.after ?? r.before)!
        this.log(`${r.action === 'inserted' ? '+' : '-'} ${rowName(r)}: ${JSON.stringify(image)}`)
      }
    }
    return {change, message: `change ${change.id}: ${rows.length} row${rows.length === 1 ? '' : 's'}`, rows, success: true}
  }
}
