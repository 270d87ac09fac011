import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterEach, describe, expect, it} from 'vitest'

import {load} from '../bench/load.js'

// The serve benches' load generator: a figure it gets wrong is a figure of record.
describe('bench/load.js', () => {
  let server: Server | undefined
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
    server = undefined
  })

  /** A server answering each request with `answer(body, n)` (n from 1), keep-alive. */
  async function serve(answer: (body: string, n: number, res: import('node:http').ServerResponse) => void): Promise<string> {
    let n = 0
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => (body += d))
      req.on('end', () => answer(body, ++n, res))
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`
  }

  it('sends each body once, in one request, and counts the answers that are not 2xx', async () => {
    const seen: string[] = []
    const url = await serve((body, n, res) => {
      seen.push(body)
      // Bodies of several sizes, split across reads by the client's parser.
      res.statusCode = n % 3 === 0 ? 500 : 200
      res.end(JSON.stringify({n, pad: 'x'.repeat(n * 997)}))
    })
    let i = 0
    const result = await load({amount: 30, connections: 3, headers: {authorization: 'Bearer k', 'content-type': 'application/json'}, nextBody: () => JSON.stringify({i: i++}), path: '/v1/prices', url})
    expect(result.requests.total).toBe(30)
    expect(result.non2xx).toBe(10)
    expect(result.errors).toBe(0)
    expect(seen.map((b) => JSON.parse(b).i).sort((a, b) => a - b)).toEqual([...Array(30).keys()])
    expect(result.latency.p99).toBeGreaterThanOrEqual(result.latency.p50)
    expect(result.requests.average).toBeGreaterThan(0)
  })

  it('runs for its duration', async () => {
    const url = await serve((_body, _n, res) => res.end('{}'))
    const started = Date.now()
    const result = await load({connections: 2, duration: 0.3, headers: {}, nextBody: () => '{}', path: '/', url})
    expect(Date.now() - started).toBeGreaterThanOrEqual(300)
    expect(result.requests.total).toBeGreaterThan(0)
    expect(result.errors + result.non2xx).toBe(0)
  })

  it('counts a response without a length (chunked) as an error, not as a request', async () => {
    const url = await serve((_body, _n, res) => {
      res.write('{')
      res.end('}')
    })
    const result = await load({amount: 3, connections: 1, headers: {}, nextBody: () => '{}', path: '/', url})
    expect(result.requests.total).toBe(0)
    expect(result.errors).toBe(1)
  })

  it('counts a connection the server drops while a response is due as an error', async () => {
    const url = await serve((_body, n, res) => (n === 2 ? res.socket?.destroy() : res.end('{}')))
    const result = await load({amount: 5, connections: 1, headers: {}, nextBody: () => '{}', path: '/', url})
    expect(result.requests.total).toBe(1)
    expect(result.errors).toBe(1)
  })
})
