#!/usr/bin/env node
// Runs the commands from source (TypeScript, through tsx) instead of dist/.
import {execute} from '@oclif/core'

await execute({development: true, dir: import.meta.url})
