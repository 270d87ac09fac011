import {describe, expect, it} from 'vitest'

import {e2eInitStore, e2eSeeded, e2eStore} from '../helpers/e2e.js'
import {run, runBin} from '../helpers/run.js'
import {onTerminal} from '../helpers/terminal.js'

/**
 * Prompts happen on a terminal only: test/helpers/terminal.ts runs the command on a real
 * pseudo-terminal and types each answer once its prompt is up. What a test reads back from
 * the store, or sets up in it, runs in-process.
 */
describe('prompts on a terminal, never without one', () => {
  it('asks for a missing required flag on a terminal', async () => {
    const db = await e2eStore()
    const r = await onTerminal(['products', 'create', '--api-id', 'tty', '--name', 'TTY', '--interval', 'month', '--interval-count', '1', '--db', db], [{after: 'Base price', text: '9.99'}])
    expect(r.output).toContain('Base price')
    expect(r.code).toBe(0)
    expect((await run(db, ['products', 'get', 'tty', '--json'])).json.base_px).toBe(9.99)
  })

  it('without a terminal lists the missing flags and exits 2; delete needs --yes', async () => {
    const db = await e2eStore()
    // bin/run.js for the two commands that would ask on a terminal: the process has none.
    const r = runBin(db, ['products', 'create', '--api-id', 'x'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('missing required flags: --name, --base-px, --interval, --interval-count')
    expect((await run(db, ['products', 'create', '--api-id', 'x', '--name', 'X', '--base-px', '1', '--interval', 'month', '--interval-count', '1'])).code).toBe(0)
    const del = runBin(db, ['products', 'delete', 'x'])
    expect(del.code).toBe(2)
    expect(del.stderr).toContain('without --yes')
    expect((await run(db, ['products', 'get', 'x'])).code).toBe(0)
  })

  it('Ctrl-C in a prompt exits 130 and writes nothing', async () => {
    const db = await e2eStore()
    const r = await onTerminal(['products', 'create', '--api-id', 'tty', '--name', 'TTY', '--interval', 'month', '--interval-count', '1', '--db', db], [{after: 'Base price', keys: '\x03'}])
    expect(r.output).toContain('Base price')
    expect(r.code).toBe(130)
    expect((await run(db, ['products', 'get', 'tty'])).code).toBe(1)
  })

  it('asks "Did you mean ...?" for a mistyped command on a terminal, and runs the answer', async () => {
    const db = await e2eInitStore()
    const yes = await onTerminal(['prodcts', 'list', '--db', db], [{after: 'Did you mean', text: 'y'}])
    expect(yes.output).toContain('Did you mean')
    expect(yes.output).toContain('products list')
    expect(yes.output).toContain('no products yet')
    expect(yes.code).toBe(0)
    const no = await onTerminal(['prodcts', 'list', '--db', db], [{after: 'Did you mean', text: 'n'}])
    expect(no.code).toBe(127)
  })

  it('confirms a delete on a terminal', async () => {
    // A store with product y, made once and copied (test/helpers/e2e.ts e2eSeeded).
    const db = await e2eSeeded('product y', async (file) => {
      expect((await run(file, ['products', 'create', '--api-id', 'y', '--name', 'Y', '--base-px', '1', '--interval', 'month', '--interval-count', '1'])).code).toBe(0)
    })
    const r = await onTerminal(['products', 'delete', 'y', '--db', db], ['y'])
    expect(r.code).toBe(0)
    expect((await run(db, ['products', 'get', 'y'])).code).toBe(1)
  })
})
