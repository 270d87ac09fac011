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
// As bin/run.js: `--version` or `-v` followed by more (`--version --json`) is the version command.
const given = process.argv.slice(2)
const args = ['--version', '-v'].includes(given[0]) && given.length > 1 ? ['version', ...given.slice(1)] : given
await execute({args, development: true, loadOptions: config})
