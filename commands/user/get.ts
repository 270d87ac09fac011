import {Args} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {requireUser} from '../../src/catalog/users.js'
import {UserOutput} from '../../src/schemas/catalog.js'

export default class UserGet extends BaseCommand<typeof UserGet> {
  static override args = {user_id: Args.string({description: 'The user id', required: true})}
  static override readsOnly = true
  static override summary = "Show a user's stored country"
  static override description = "Show the stored country of a user id, or of the IP an anonymous quote was made for (stored when a price is calculated)"
  static override examples = ['<%= config.bin %> user get u_123', '<%= config.bin %> user get u_123 --json']
  static override get outputSchema() {
    return UserOutput
  }

  async run() {
    const u = await requireUser(await this.store(), this.args.user_id)
    this.log(`user ${u.user_id}: country ${u.country ?? 'unknown'}`)
    return {user: {country: u.country}}
  }
}
