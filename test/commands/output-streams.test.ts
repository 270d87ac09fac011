import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {run, tempStore} from '../helpers/run.js'

/**
 * A FIFO (or a character device such as /dev/null) as the output of a command is written
 * into, never replaced by a regular file renamed over it. A FIFO stands in for a device here:
 * the same path, and a test that fails cannot replace the machine's /dev/null.
 */
function fifo(): {done: Promise<Buffer>; path: string} {
  const dir = mkdtempSync(join(tmpdir(), 'pricectl-fifo-'))
  const path = join(dir, 'out.fifo')
  expect(spawnSync('mkfifo', [path]).status).toBe(0)
  // A reader in another process (opening a FIFO for writing waits for one), writing to a file:
  // a pipe back to this process would fill while the command's synchronous writes hold it.
  const reader = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', path, join(dir, 'read')], {stdio: 'ignore'})
  const done = new Promise<Buffer>((resolve) => reader.on('close', () => resolve(readFileSync(join(dir, 'read')))))
  return {done, path}
}

describe('output into a FIFO or device', () => {
  it('products export writes into a FIFO, with or without --force, and leaves it a FIFO', async () => {
    const db = tempStore()
    await createProducts(db, CATALOG.slice(0, 2))
    for (const force of [[], ['--force']]) {
      const out = fifo()
      const r = await run(db, ['products', 'export', out.path, ...force])
      expect(r.code, r.stderr).toBe(0)
      const text = (await out.done).toString('utf8')
      expect(JSON.parse(text).products).toHaveLength(2)
      expect(statSync(out.path).isFIFO()).toBe(true)
    }
  })

  it('db backup streams the whole backup into a FIFO and leaves it a FIFO', async () => {
    const db = tempStore()
    await createProducts(db, CATALOG.slice(0, 1))
    const out = fifo()
    const r = await run(db, ['db', 'backup', out.path, '--force', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const bytes = await out.done
    expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0')
    expect(r.json.bytes).toBe(bytes.length)
    expect(statSync(out.path).isFIFO()).toBe(true)
  })

  it('a store cannot be a FIFO: db copy refuses it (exit 2)', async () => {
    const db = tempStore()
    await createProducts(db, CATALOG.slice(0, 1))
    const out = fifo()
    const r = await run(db, ['db', 'copy', db, out.path])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/is a FIFO, not a file/)
    expect(statSync(out.path).isFIFO()).toBe(true)
    spawnSync('sh', ['-c', `: > '${out.path}'`]) // let the reader finish
    await out.done
  })

  it('the backup of a store is refused on a block device (exit 2)', async () => {
    const block = ['/dev/loop0', '/dev/sda', '/dev/vda', '/dev/nvme0n1'].find((p) => {
      try {
        return statSync(p).isBlockDevice()
      } catch {
        return false
      }
    })
    if (!block) return
    const db = tempStore()
    expect((await run(db, ['db', 'init'])).code).toBe(0)
    const r = await run(db, ['db', 'backup', block, '--force'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('is a block device, not a file')
    expect(statSync(block).isBlockDevice()).toBe(true)
  })
})
