import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {e2eStore} from '../helpers/e2e.js'
import {ROOT, runBin} from '../helpers/run.js'

/**
 * Prompts happen on a terminal only. `script` (util-linux) gives the command a real
 * pseudo-terminal; the answers are typed into it after a pause, each followed by Enter, or
 * as raw keys ({keys: '\\003'} is Ctrl-C, in printf's octal escapes), later: before the prompt
 * is up, Ctrl-C would be the terminal's SIGINT rather than a key the prompt reads.
 */
function onTerminal(args: string[], answers: (string | {keys: string})[]): {code: number; output: string} {
  const command = [process.execPath, join(ROOT, 'bin', 'run.js'), ...args].map((a) => `'${a}'`).join(' ')
  const typed = answers.map((a) => (typeof a === 'string' ? `sleep 1.5; printf '%s\\r' '${a}'` : `sleep 4; printf '${a.keys}'`)).join('; ')
  const env = {...process.env}
  delete env.CI
  const r = spawnSync('bash', ['-c', `(${typed}; sleep 1.5) | script -qfec "${command.replaceAll('"', '\\"')}" /dev/null`], {encoding: 'utf8', env})
  return {code: r.status ?? 1, output: r.stdout + r.stderr}
}

describe('prompts on a terminal, never without one', () => {
  it('asks for a missing required flag on a terminal', () => {
    const db = e2eStore()
    const r = onTerminal(['products', 'create', '--api-id', 'tty', '--name', 'TTY', '--interval', 'month', '--interval-count', '1', '--db', db], ['9.99'])
    expect(r.output).toContain('Base price')
    expect(r.code).toBe(0)
    expect(runBin(db, ['products', 'get', 'tty', '--json']).json.base_px).toBe(9.99)
  })

  it('without a terminal lists the missing flags and exits 2; delete needs --yes', () => {
    const db = e2eStore()
    const r = runBin(db, ['products', 'create', '--api-id', 'x'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('missing required flags: --name, --base-px, --interval, --interval-count')
    expect(runBin(db, ['products', 'create', '--api-id', 'x', '--name', 'X', '--base-px', '1', '--interval', 'month', '--interval-count', '1']).code).toBe(0)
    const del = runBin(db, ['products', 'delete', 'x'])
    expect(del.code).toBe(2)
    expect(del.stderr).toContain('without --yes')
    expect(runBin(db, ['products', 'get', 'x']).code).toBe(0)
  })

  it('Ctrl-C in a prompt exits 130 and writes nothing', () => {
    const db = e2eStore()
    const r = onTerminal(['products', 'create', '--api-id', 'tty', '--name', 'TTY', '--interval', 'month', '--interval-count', '1', '--db', db], [{keys: '\\003'}])
    expect(r.output).toContain('Base price')
    expect(r.code).toBe(130)
    expect(runBin(db, ['products', 'get', 'tty']).code).toBe(1)
  })

  it('asks "Did you mean ...?" for a mistyped command on a terminal, and runs the answer', () => {
    const db = e2eStore()
    const yes = onTerminal(['prodcts', 'list', '--db', db], ['y'])
    expect(yes.output).toContain('Did you mean')
    expect(yes.output).toContain('products list')
    expect(yes.output).toContain('no products yet')
    expect(yes.code).toBe(0)
    const no = onTerminal(['prodcts', 'list', '--db', db], ['n'])
    expect(no.code).toBe(127)
  })

  it('confirms a delete on a terminal', () => {
    const db = e2eStore()
    expect(runBin(db, ['products', 'create', '--api-id', 'y', '--name', 'Y', '--base-px', '1', '--interval', 'month', '--interval-count', '1']).code).toBe(0)
    const r = onTerminal(['products', 'delete', 'y', '--db', db], ['y'])
    expect(r.code).toBe(0)
    expect(runBin(db, ['products', 'get', 'y']).code).toBe(1)
  })
})
