import {describe, expect, it} from 'vitest'

import {InvalidInputError, NotFoundError, OperationalError, UnavailableError} from '../../src/errors.js'
import {AccessLog} from '../../src/server/access-log.js'
import {HttpProblem, httpError} from '../../src/server/errors.js'
import {parseSize} from '../../src/server/serve.js'

describe('serve: the parts', () => {
  it('--body-limit reads bytes, kb and mb', () => {
    expect(parseSize('1048576')).toBe(1_048_576)
    expect(parseSize('512kb')).toBe(524_288)
    expect(parseSize('2MB')).toBe(2_097_152)
    expect(parseSize('1.5m')).toBe(1_572_864)
    expect(() => parseSize('lots')).toThrow(/--body-limit: expected a size such as 1048576, 512kb or 1mb, got "lots"/)
    expect(() => parseSize('0')).toThrow(InvalidInputError)
    expect(() => parseSize('1gb')).toThrow(InvalidInputError)
    expect(() => parseSize('200mb')).toThrow(/100mb ceiling/)
  })

  it('maps errors to statuses with the spec error body', () => {
    const limits = {bodyLimit: 1000}
    expect(httpError(new InvalidInputError('country: unknown country "XX"'), limits)).toEqual({body: {message: 'country: unknown country "XX"', success: false}, status: 400})
    expect(httpError(new NotFoundError('no product "x"'), limits).status).toBe(404)
    expect(httpError(new NotFoundError('no user', {error_message: 'no user'}), limits).body).toEqual({error_message: 'no user', message: 'no user', success: false})
    expect(httpError(new OperationalError('package p has no products left'), limits).status).toBe(409)
    expect(httpError(new HttpProblem(401, 'missing API key', {'www-authenticate': 'Bearer'}), limits)).toEqual({
      body: {message: 'missing API key', success: false},
      headers: {'www-authenticate': 'Bearer'},
      status: 401,
    })
    const busy = httpError(Object.assign(new Error('database is locked'), {code: 'SQLITE_BUSY'}), limits)
    expect(busy.status).toBe(503)
    expect(busy.headers).toEqual({'retry-after': '1'})
    expect(httpError(Object.assign(new Error('too big'), {code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413}), limits).body.message).toContain('over 1000 bytes')
    // A store that is down, or a statement past PostgreSQL's statement_timeout: 503, try again.
    const down = httpError(new UnavailableError('the connection to the PostgreSQL store postgres://db/p was lost (connect ECONNREFUSED) and no new connection could be made'), limits)
    expect([down.status, down.headers, down.body.success]).toEqual([503, {'retry-after': '1'}, false])
    const slow = httpError(Object.assign(new Error('canceling statement due to statement timeout'), {code: '57014'}), limits)
    expect(slow).toEqual({body: {message: 'canceling statement due to statement timeout', success: false}, headers: {'retry-after': '1'}, status: 503})
    const boom = httpError(new TypeError('x is undefined'), limits)
    expect(boom).toEqual({body: {message: 'x is undefined', success: false}, status: 500})
  })

  it('access lines are one per request, in order, and a path cannot forge a line', async () => {
    const out: string[] = []
    const log = new AccessLog((t) => out.push(t))
    log.line({bytes: 12, durationMs: 0.42, ip: '127.0.0.1', key: 'pk_AbC12xyz', method: 'GET', status: 200, url: '/v1/products'})
    log.line({durationMs: 1, ip: '::1', method: 'GET', status: 404, url: '/v1/x"\n2026 fake line'})
    expect(out).toEqual([]) // batched until the event loop turns
    await new Promise((r) => setImmediate(r))
    expect(out).toHaveLength(1)
    const lines = out[0].trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\S+Z 127\.0\.0\.1 "GET \/v1\/products" 200 12 0\.4ms pk_AbC12xyz$/)
    expect(lines[1]).toMatch(/ ::1 "GET \/v1\/x%22%0A2026%20fake%20line" 404 - 1\.0ms -$/)
  })

  it('the access log masks an api_key query parameter and a full key in the path', async () => {
    const out: string[] = []
    const log = new AccessLog((t) => out.push(t))
    const key = `pk_AbC12xyz${'Q'.repeat(35)}`
    log.line({durationMs: 1, ip: '127.0.0.1', method: 'GET', status: 401, url: `/v1/products?limit=2&api_key=${key}&x=1`})
    log.line({durationMs: 1, ip: '127.0.0.1', method: 'GET', status: 401, url: '/v1/products?api_key=wrong-but-secret'})
    log.line({durationMs: 1, ip: '127.0.0.1', method: 'DELETE', status: 404, url: `/v1/keys/${key}`})
    await new Promise((r) => setImmediate(r))
    const lines = out.join('').trimEnd().split('\n')
    expect(lines[0]).toContain('"GET /v1/products?limit=2&api_key=***&x=1"')
    expect(lines[1]).toContain('"GET /v1/products?api_key=***"')
    expect(lines[2]).toContain('"DELETE /v1/keys/pk_AbC12xyz***"')
    expect(out.join('')).not.toMatch(/QQQQ|wrong-but-secret/)
  })
})
