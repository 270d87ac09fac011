#!/usr/bin/env node
// Runs the commands from the TypeScript sources (through tsx) instead of dist/.
import {Config, execute} from '@oclif/core'
import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {register} from 'tsx/esm/api'

register()
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const config = await Config.load({root})
// oclif loads manifest commands from the paths the build wrote (dist/commands/...js);
// point each at its source file instead.
for (const command of Object.values(config.rootPlugin?.manifest?.commands ?? {})) {
  const rel = command.relativePath
  if (!rel || rel[0] !== 'dist') continue
  const source = [...rel.slice(1, -1), rel.at(-1).replace(/\.js$/, '.ts')]
  if (existsSync(join(root, ...source))) command.relativePath = source
}
await execute({development: true, loadOptions: config})
