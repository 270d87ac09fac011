import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {confirmDestructive} from '../../src/cli/input.js'
import {KeyRevoked} from '../../src/schemas/server.js'
import {findKey, revokeKey} from '../../src/server/keys.js'

export default class KeysRevoke extends BaseCommand<typeof KeysRevoke> {
  static override args = {key: Args.string({description: 'The key\'s id or prefix (as "keys list" shows them), or the key itself', required: true})}
  static override changesExisting = true
  static override summary = 'Revoke an API key'
  static override description = `Revoke an API key: a running "pricectl serve" refuses it from its next request on

Revoking cannot be undone; create a new key instead.`
  static override examples = ['<%= config.bin %> keys revoke 3 --yes', '<%= config.bin %> keys revoke pk_AbC12xyz --yes --json']
  static override flags = {
    yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation (required without a terminal)'}),
  }
  static override get outputSchema() {
    return KeyRevoked
  }

  async run(): Promise<KeyRevoked> {
    const found = await findKey(await this.store(), this.args.key)
    if (found.status === 'active') await confirmDestructive(this.flags.yes, `revoke API key ${found.id} (${found.name}, ${found.prefix})`)
    const {changed, record} = await revokeKey(await this.store(), String(found.id))
    const message = changed ? `revoked API key ${record.id} (${record.name}, ${record.prefix})` : `API key ${record.id} (${record.name}) was already revoked at ${record.revoked_at}`
    this.log(message)
    return {key: record, message, success: true}
  }
}
