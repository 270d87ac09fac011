import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eSeeded, e2eStore, itWithoutStore} from '../helpers/e2e.js'
import {ROOT, run, runBin} from '../helpers/run.js'

/**
 * The conventions of an oclif CLI: help, suggestions, completion, exit codes, usage hints.
 * In-process (test/helpers/run.ts; help and unknown commands through oclif's own dispatch
 * and the build's help class and hook), but for what a shell sees of the process: the exit
 * code and everything printed, once for an unknown command and once for a usage error, and
 * completion, whose files go where the process's HOME and XDG variables say.
 */

describe('help', () => {
  itWithoutStore('"help TOPIC" and "TOPIC -h" list the topic\'s commands with their summaries', async () => {
    const help = await run(undefined, ['help', 'products'])
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain('$ pricectl products COMMAND')
    expect(help.stdout).toMatch(/products list\s+List products\n/)
    expect(help.stdout).toMatch(/products create\s+Create a product\n/)
    const short = await run(undefined, ['products', '-h'])
    expect(short.code, short.stderr).toBe(0)
    expect(short.stdout).toBe(help.stdout)
  })

  itWithoutStore('"COMMAND -h" is the command\'s help: the summary once, then usage, flags and the longer description', async () => {
    const r = await run(undefined, ['products', 'list', '-h'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.startsWith('List products\n')).toBe(true)
    expect(r.stdout).toContain('$ pricectl products list')
    expect(r.stdout).toContain('--[no-]header')
    expect(r.stdout).toMatch(/DESCRIPTION\n {2}List products \(sorted by api_id\)/)
    expect(r.stdout.match(/^List products$/gm)).toHaveLength(1)
  })

  itWithoutStore('every command has a short summary', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {summary?: string}>}
    const missing = Object.entries(manifest.commands).filter(([, c]) => !c.summary || c.summary.length > 70 || c.summary.includes('\n'))
    expect(missing.map(([id]) => id)).toEqual([])
  })
})

describe('an unknown command', () => {
  itWithoutStore('names the nearest command, with spaces, and exits 127', async () => {
    const db = await e2eStore()
    // bin/run.js: the exit code the shell sees and all the process prints.
    const r = runBin(db, ['prodcts', 'list'])
    expect(r.code).toBe(127)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe('Error: "prodcts list" is not a pricectl command. Did you mean "pricectl products list"? See "pricectl --help" for the list of commands.\n')
    expect((await run(db, ['products', 'lst'])).stderr).toContain('Did you mean "pricectl products list"?')
    // A mistyped topic alone suggests the topic.
    expect((await run(db, ['prodcts'])).stderr).toContain('Did you mean "pricectl products"?')
  })

  itWithoutStore('suggests nothing when nothing is close, and answers in JSON under --json', async () => {
    const far = await run(undefined, ['xyzzy'])
    expect(far.code).toBe(127)
    expect(far.stderr).toBe('Error: "xyzzy" is not a pricectl command. See "pricectl --help" for the list of commands.\n')
    const json = await run(undefined, ['prodcts', 'list', '--json'])
    expect(json.code).toBe(127)
    expect(json.json).toEqual({message: '"prodcts list" is not a pricectl command. Did you mean "pricectl products list"? See "pricectl --help" for the list of commands.', success: false})
  })
})

describe('shell completion', () => {
  /** A cache and home of their own: completion writes only there, never to a shell's rc file. */
  function sandbox(): Record<string, string> {
    const home = mkdtempSync(join(tmpdir(), 'pricectl-home-'))
    return {HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data')}
  }

  itWithoutStore('bash and zsh: the setup line points at generated functions that know the commands and flags', () => {
    const env = sandbox()
    for (const shell of ['bash', 'zsh']) {
      const instructions = runBin(undefined, ['autocomplete', shell], {env})
      expect(instructions.code, instructions.stderr).toBe(0)
      expect(instructions.stdout).toContain(`pricectl autocomplete script ${shell}`)
      const script = runBin(undefined, ['autocomplete', 'script', shell], {env})
      expect(script.code, script.stderr).toBe(0)
      const setup = /PRICECTL_AC_\w+_SETUP_PATH=(\S+)/.exec(script.stdout)?.[1]
      expect(setup?.startsWith(env.XDG_CACHE_HOME), script.stdout).toBe(true)
      expect(existsSync(setup!)).toBe(true)
    }
    const functions = join(env.XDG_CACHE_HOME, 'pricectl', 'autocomplete', 'functions')
    const bash = readFileSync(join(functions, 'bash', 'pricectl.bash'), 'utf8')
    expect(bash).toMatch(/^products:list .*--columns/m)
    expect(bash).toContain('complete -F _pricectl_autocomplete pricectl')
    expect(readFileSync(join(functions, 'zsh', '_pricectl'), 'utf8')).toContain('#compdef pricectl')
    // Nothing outside the sandbox's cache: no rc file was touched.
    expect(readdirSync(env.HOME).sort()).toEqual(['cache'])
  })

  itWithoutStore('fish: "autocomplete fish" prints a completion file for topics, commands, flags and their values', async () => {
    const r = await run(undefined, ['autocomplete', 'fish'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("complete -c pricectl -f -a '(__pricectl_complete)'")
    expect(r.stdout).toContain("printf '%s\\t%s\\n' 'products' 'Products: base price, interval, country prices, integrations'")
    expect(r.stdout).toContain("printf '%s\\t%s\\n' 'list' 'List products'")
    expect(r.stdout).toContain("case 'products list --output'\n            printf '%s\\n' 'table' 'csv' 'json'")
    expect(r.stdout).toContain("'Serve the spec\\'s HTTP API from this store'")
    const fish = spawnSync('fish', ['--version'], {encoding: 'utf8'})
    if (fish.status === 0) {
      // Where fish is installed, ask it what it completes.
      const file = join(mkdtempSync(join(tmpdir(), 'pricectl-fish-')), 'pricectl.fish')
      writeFileSync(file, r.stdout)
      const complete = (line: string) => execFileSync('fish', ['-c', `source ${file}; complete -C '${line}'`], {encoding: 'utf8'})
      expect(complete('pricectl prod')).toMatch(/^products\t/m)
      expect(complete('pricectl --db x.db products l')).toMatch(/^list\tList products$/m)
      expect(complete('pricectl products list --output ')).toMatch(/^csv$/m)
      expect(complete('pricectl price explain --cou')).toMatch(/^--coupon\t/m)
      expect(complete('pricectl autocomplete ')).toMatch(/^fish\t/m)
    }
  })
})

describe('exit codes', () => {
  it('a usage error exits 2 and ends with the --help to read; under --json the message is the bare error', async () => {
    const db = await e2eStore()
    // bin/run.js: the exit code the shell sees and all the process prints.
    const flag = runBin(db, ['products', 'create', '--colour', 'red'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(/^Error: Nonexistent flag: --colour.* See "pricectl products create --help"\.\n$/)
    const arg = await run(db, ['products', 'get'])
    expect(arg.code).toBe(2)
    expect(arg.stderr).toMatch(/^Error: Missing 1 required arg: api_id.* See "pricectl products get --help"\.\n$/)
    const json = await run(db, ['products', 'get', '--json'])
    expect(json.code).toBe(2)
    expect(json.json.message).not.toContain('--help')
    // Not a usage error: no hint.
    const missing = await run(db, ['products', 'get', 'ghost'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).not.toContain('--help')
  })

  it.each([
    ['packages', ['packages', 'create', '--api-id', 'p', '--name', 'P', '--product', 'basic_monthly'], /api_id: package "p" already exists/],
    // SPRING25 takes 25% off in DE: past the --max-change-pct threshold, so --yes (docs/change-control.md).
    ['campaigns', ['campaigns', 'create', '--api-id', 'c', '--name', 'C', '--coupon', 'SPRING25', '--country', 'DE', '--yes'], /api_id: campaign "c" already exists/],
    ['audiences', ['audiences', 'create', '--api-id', 'a', '--name', 'A', '--rule', 'country in DE'], /api_id: audience "a" already exists/],
  ])('creating %s with an api_id that exists is a conflict: exit 1, nothing written', async (_what, args, message) => {
    // The demo's store, made once and copied (test/helpers/e2e.ts e2eSeeded).
    const db = await e2eSeeded('demo', async (file) => {
      expect((await run(file, ['demo'])).code).toBe(0)
    })
    const first = await run(db, [...args, '--json'])
    expect(first.code, first.stdout).toBe(0)
    const again = await run(db, [...args, '--json'])
    expect(again.code).toBe(1)
    expect(again.json).toEqual({message: expect.stringMatching(message), success: false})
  })
})
