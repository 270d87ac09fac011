import {BaseCommand} from '../../src/cli/base.js'
import {listCharges} from '../../src/revenue/charges.js'
import {chargeColumns, listFlags, printList, productNames, window} from '../../src/cli/revenue/flags.js'
import {ChargeList, ChargeRecord} from '../../src/schemas/revenue.js'

export default class ChargesList extends BaseCommand<typeof ChargesList> {
  static override readsOnly = true
  static override summary = 'List charges, newest first'
  static override description = 'List charges, newest first, with filters'
  static override examples = [
    '<%= config.bin %> charges list --user-id u1',
    '<%= config.bin %> charges list --status succeeded --since 2026-01-01 --until 2026-01-31 --limit 0 --output csv > january.csv',
  ]
  static override flags = listFlags
  static override get outputSchema() {
    return ChargeList
  }

  async run() {
    const f = this.flags
    const {records, total} = await listCharges(await this.store(), {
      limit: f.limit,
      product: f.product,
      status: f.status,
      user_id: f['user-id'],
      ...window(f.since, f.until, f.tz),
    })
    const message = `${records.length} of ${total} charge${total === 1 ? '' : 's'}`
    const result = {charges: records, message, success: true, total}
    printList(this, f.output, {columns: chargeColumns(await productNames(await this.store(), records)), fields: Object.keys(ChargeRecord.shape), message, records, result})
    return result
  }
}
