import {type ChildProcess, spawn} from 'node:child_process'
import http from 'node:http'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {CATALOG, createProducts} from '../helpers/catalog.js'
import {e2eSeeded, e2eStore} from '../helpers/e2e.js'
import {ROOT, run, runBin} from '../helpers/run.js'

/**
 * `pricectl serve` as operators run it: bin/run.js in a child process, stopped with SIGTERM.
 * The store around it is seeded and read by the commands in-process: the server is what runs
 * as a process here.
 */

type Served = {child: ChildProcess; exited: Promise<number | null>; port: number; stderr: () => string; stdout: () => string}

const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function waitFor(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

async function serve(db: string, args: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'serve', '--port', '0', '--db', db, ...args], {
    cwd: ROOT,
    env: {...process.env, NODE_ENV: undefined} as NodeJS.ProcessEnv,
  })
  children.push(child)
  let err = ''
  let out = ''
  child.stderr!.on('data', (d) => (err += d))
  child.stdout!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  await waitFor('the listening line', () => /listening on http:\/\/[\d.]+:\d+/.test(err) || child.exitCode !== null)
  const port = Number(/listening on http:\/\/[\d.]+:(\d+)/.exec(err)?.[1])
  return {child, exited, port, stderr: () => err, stdout: () => out}
}

/** The key the seed made: every copy of the seeded store holds it. */
let seededKey = ''

/** A store with the catalog and an API key, made once and copied (test/helpers/e2e.ts e2eSeeded). */
async function setup(): Promise<{db: string; key: string}> {
  const db = await e2eSeeded('catalog and key', async (file) => {
    await createProducts(file, CATALOG)
    const k = await run(file, ['keys', 'create', '--name', 'e2e', '--json'])
    if (k.code !== 0) throw new Error(k.stdout + k.stderr)
    seededKey = k.json.api_key
  })
  return {db, key: seededKey}
}

/** A request on its own connection (no pooling), so "refused" means a new connection was refused. */
function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({agent: false, host: '127.0.0.1', path, port}, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    }).on('error', reject)
  })
}

describe('pricectl serve (bin/run.js)', () => {
  it('logs the address actually bound: --host 0.0.0.0 says every interface, not 127.0.0.1 (issue 32 item 13)', async () => {
    const {db} = await setup()
    const s = await serve(db, ['--host', '0.0.0.0', '--json'])
    expect(s.stderr()).toMatch(new RegExp(`listening on http://0\\.0\\.0\\.0:${s.port} \\(every IPv4 interface; from this machine http://127\\.0\\.0\\.1:${s.port}\\)`))
    // Reachable at the local address it names (and the server is past its start: SIGTERM is handled).
    expect((await fetch(`http://127.0.0.1:${s.port}/v1/products`)).status).toBe(401)
    s.child.kill('SIGTERM')
    expect(await s.exited).toBe(0)
    expect(JSON.parse(s.stdout()).url).toBe(`http://0.0.0.0:${s.port}`)
  })

  it('SIGTERM lets the request in flight finish, refuses new connections, closes the store and exits 0', async () => {
    const {db, key} = await setup()
    const s = await serve(db)
    expect(s.port).toBeGreaterThan(0)
    expect(await get(s.port, '/healthz')).toBe(200)

    // A seller's price request whose body is still arriving when SIGTERM comes.
    const body = JSON.stringify({country: 'DE', integrations: ['gateway_a'], products: ['pro_monthly'], user_id: 'in-flight'})
    const req = http.request({
      agent: false,
      headers: {authorization: `Bearer ${key}`, 'content-length': Buffer.byteLength(body), 'content-type': 'application/json'},
      host: '127.0.0.1',
      method: 'POST',
      path: '/v1/prices',
      port: s.port,
    })
    const response = new Promise<{json: any; status: number}>((resolve, reject) => {
      req.on('response', (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({json: JSON.parse(text), status: res.statusCode ?? 0}))
      })
      req.on('error', reject)
    })
    req.write(body.slice(0, 20))
    await sleep(300)
    s.child.kill('SIGTERM')
    await waitFor('the shutdown note', () => s.stderr().includes('SIGTERM: no new connections'))
    await expect(get(s.port, '/healthz')).rejects.toThrow(/ECONNREFUSED/)
    req.end(body.slice(20))

    const r = await response
    expect(r.status).toBe(200)
    expect(r.json.products.pro_monthly.integrations.gateway_a).toEqual({amount: 899, currency: 'EUR', formatted: expect.any(String), tax_behavior: 'exclusive'})
    expect(await s.exited).toBe(0)
    const log = s.stderr()
    expect(log).toMatch(/"POST \/v1\/prices" 200 \d+ /)
    expect(log).toContain('store closed')

    // The quote was locked before the store closed; the key's last use was written at shutdown.
    const cli = await run(db, ['price', '-u', 'in-flight', '-p', 'pro_monthly', '--integration', 'gateway_a', '--json'])
    expect(cli.json).toEqual(r.json)
    expect((await run(db, ['keys', 'list', '--json'])).json.keys[0].last_used_at).toMatch(/^\d{4}-/)
    expect((await run(db, ['db', 'check', '--json'])).json.ok).toBe(true)
  })

  it('--json prints the stop summary; --no-access-log keeps the start and stop notes only', async () => {
    const {db, key} = await setup()
    const s = await serve(db, ['--json', '--no-access-log'])
    const r = await fetch(`http://127.0.0.1:${s.port}/v1/products`, {headers: {'x-api-key': key}})
    expect(r.status).toBe(200)
    expect(((await r.json()) as {products: unknown[]}).products).toHaveLength(3)
    s.child.kill('SIGTERM')
    expect(await s.exited).toBe(0)
    expect(JSON.parse(s.stdout())).toEqual({message: 'stopped after 1 request; store closed', requests: 1, signal: 'SIGTERM', success: true, url: `http://127.0.0.1:${s.port}`})
    expect(s.stderr()).not.toContain('"GET /v1/products"')
  })

  it('warns when no key can pass, and a taken port exits 1 saying what to change', async () => {
    const db = await e2eStore()
    const first = await serve(db)
    await waitFor('the no-keys warning', () => first.stderr().includes('no active API keys: every /v1 request gets 401'))
    const second = runBin(db, ['serve', '--port', String(first.port)])
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.*--port/)
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)
  })
})
