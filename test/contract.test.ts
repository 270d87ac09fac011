import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {z} from 'zod'

import {ROOT} from './helpers/run.js'

/**
 * Output contracts: every command declares the zod schema of what --json prints; its
 * JSON Schema is kept under schemas/ so a field cannot change silently.
 * After an intended change: UPDATE_SCHEMAS=1 npx vitest run test/contract.test.ts
 */
function commandFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory() ? commandFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

const files = commandFiles(join(ROOT, 'commands'))

describe('--json output contracts', () => {
  it.each(files.map((f) => [relative(join(ROOT, 'commands'), f).replace(/\.ts$/, '').replaceAll('/', ' '), f]))('%s', async (id, file) => {
    const mod = (await import(file)) as {default: {outputSchema?: z.ZodType}}
    const schema = mod.default.outputSchema
    expect(schema, `${id} declares static outputSchema`).toBeDefined()
    const json = z.toJSONSchema(schema!, {io: 'output', unrepresentable: 'any'})
    const path = join(ROOT, 'schemas', `${id.replaceAll(' ', '-')}.json`)
    const text = JSON.stringify(json, null, 2) + '\n'
    if (process.env.UPDATE_SCHEMAS) {
      mkdirSync(join(ROOT, 'schemas'), {recursive: true})
      writeFileSync(path, text)
    }
    expect(existsSync(path), `${path} exists (UPDATE_SCHEMAS=1 to write it)`).toBe(true)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(JSON.parse(text))
  })
})
