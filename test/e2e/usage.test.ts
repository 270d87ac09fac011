import {describe, expect, it} from 'vitest'

import {itWithoutStore} from '../helpers/e2e.js'
import {run, runBin, tempStore} from '../helpers/run.js'

/**
 * The commands every CLI has: version (also --version, -v), help and autocomplete take
 * --json as every command does (README "Every command takes --json"), and a mistyped flag
 * gets the nearest one suggested.
 */
describe('version', () => {
  const agent = /^pricectl\/\d+\.\d+\.\d+ \S+-\S+ node-v[\d.]+$/

  it('prints the user agent line, and with --json the parts of it', async () => {
    const text = await run(undefined, ['version'])
    expect(text.code).toBe(0)
    expect(text.stdout.trim()).toMatch(agent)
    const json = await run(undefined, ['version', '--json'])
    expect(json.code).toBe(0)
    expect(json.json).toEqual({
      arch: process.arch,
      name: 'pricectl',
      node: process.version,
      platform: process.platform,
      user_agent: text.stdout.trim(),
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    })
  })

  // bin/run.js turns a leading --version or -v into the command: the process is what is tested.
  itWithoutStore('--version and -v print the same line; followed by --json they print the JSON', () => {
    const line = runBin(undefined, ['--version'])
    expect(line.code).toBe(0)
    expect(line.stdout.trim()).toMatch(agent)
    const short = runBin(undefined, ['-v'])
    expect(short.code).toBe(0)
    expect(short.stdout).toBe(line.stdout)
    for (const flag of ['--version', '-v']) {
      const json = runBin(undefined, [flag, '--json'])
      expect(json.code, json.stderr).toBe(0)
      expect(json.json).toMatchObject({name: 'pricectl', node: process.version, user_agent: line.stdout.trim()})
    }
  })
})

describe('help --json', () => {
  it('lists the commands and topics', async () => {
    const r = await run(undefined, ['help', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({name: 'pricectl', version: expect.any(String)})
    expect(r.json.commands).toContainEqual({id: 'products list', summary: 'List products'})
    expect(r.json.commands).toContainEqual(expect.objectContaining({id: 'version'}))
    expect(r.json.topics).toContainEqual(expect.objectContaining({name: 'products'}))
    // Hidden commands (autocomplete's script and cache) are not listed.
    expect(r.json.commands.map((c: {id: string}) => c.id)).not.toContain('autocomplete script')
  })

  it('describes a command: args, flags with their options, examples; a topic: its commands', async () => {
    const r = await run(undefined, ['help', 'products', 'list', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.command).toMatchObject({id: 'products list', summary: 'List products'})
    expect(r.json.command.flags).toContainEqual(expect.objectContaining({name: 'output', options: ['table', 'csv', 'json'], type: 'option'}))
    expect(r.json.command.flags).toContainEqual(expect.objectContaining({name: 'json', type: 'boolean'}))
    expect(r.json.command.examples[0]).toMatch(/^pricectl products list/)
    const get = await run(undefined, ['help', 'products get', '--json'])
    expect(get.json.command.args).toEqual([expect.objectContaining({name: 'api_id', required: true})])
    const topic = await run(undefined, ['help', 'products', '--json'])
    expect(topic.json.topic).toMatchObject({name: 'products'})
    expect(topic.json.commands.map((c: {id: string}) => c.id)).toContain('products get')
  })

  it('a command or topic that does not exist exits 1, as any unknown named thing', async () => {
    const json = await run(undefined, ['help', 'nope', '--json'])
    expect(json.code).toBe(1)
    expect(json.json).toEqual({message: 'no command or topic "nope" (list them with: pricectl help)', success: false})
    const text = await run(undefined, ['help', 'nope'])
    expect(text.code).toBe(1)
    expect(text.stderr).toContain('"nope"')
  })

  // The help class is loaded from the build (under vitest oclif would look for its TypeScript source).
  itWithoutStore('without --json prints the help pages', () => {
    const r = runBin(undefined, ['help', 'products', 'list'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('$ pricectl products list')
  })
})

describe('autocomplete --json', () => {
  it('is refused with exit 2, naming where the data is', async () => {
    const r = await run(undefined, ['autocomplete', '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: expect.stringContaining('pricectl autocomplete fish --json'), success: false})
    expect(r.stdout).not.toMatch(/USAGE/)
  })
})

describe('a mistyped flag', () => {
  it.each([
    [['products', 'list', '--colums', 'api_id'], '--colums', '--columns'],
    [['price', '-u', 'u1', '-p', 'x', '--countyr', 'US'], '--countyr', '--country'],
    [['products', 'list', '--no-headr'], '--no-headr', '--no-header'],
  ])('%j names the nearest flag and exits 2', async (args, typed, meant) => {
    const db = tempStore()
    const text = await run(db, args)
    expect(text.code).toBe(2)
    expect(text.stderr).toContain(`Nonexistent flag: ${typed} (did you mean ${meant}?)`)
    const json = await run(db, [...args, '--json'])
    expect(json.code).toBe(2)
    expect(json.json.message).toBe(`Nonexistent flag: ${typed} (did you mean ${meant}?)`)
  })

  it('names none when no flag is close', async () => {
    const r = await run(tempStore(), ['db', 'info', '--bogus', '--json'])
    expect(r.code).toBe(2)
    expect(r.json).toEqual({message: 'Nonexistent flag: --bogus', success: false})
  })
})
