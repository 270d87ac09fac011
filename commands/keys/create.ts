import {Flags} from '@oclif/core'

import {BaseCommand} from '../../src/cli/base.js'
import {requireFields} from '../../src/cli/input.js'
import {KeyCreated} from '../../src/schemas/server.js'
import {createKey} from '../../src/server/keys.js'

export default class KeysCreate extends BaseCommand<typeof KeysCreate> {
  static override summary = 'Create an API key for "pricectl serve"'
  static override description = `Create an API key for "pricectl serve"

The key is printed once (on stdout, alone on its line) and cannot be shown again: the store keeps only its SHA-256 and its prefix. Lost keys are revoked and replaced.`
  static override examples = [
    '<%= config.bin %> keys create --name checkout',
    'KEY=$(<%= config.bin %> keys create --name ci)',
    '<%= config.bin %> keys create --name staging --json',
  ]
  static override flags = {
    name: Flags.string({description: 'What the key is for (shown in "keys list" and nowhere secret)'}),
  }
  static override get outputSchema() {
    return KeyCreated
  }

  async run(): Promise<KeyCreated> {
    const input = await requireFields({name: this.flags.name}, [{field: 'name', flag: '--name', message: 'What is the key for?'}])
    const {key, record} = await createKey(await this.store(), input)
    const message = `created API key ${record.id} (${record.name}), prefix ${record.prefix}: store it now, it is not shown again`
    this.log(key)
    this.note(message)
    return {api_key: key, key: record, message, success: true}
  }
}
