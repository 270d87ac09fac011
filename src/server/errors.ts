import {describeError} from '../error-format.js'
import {InvalidInputError, NotFoundError, OperationalError, UnavailableError} from '../errors.js'
import {isBusyCode} from '../store/busy.js'

/** An error answer: the HTTP status and the spec's error body `{success: false, message, ...}`. */
export type HttpError = {body: {message: string; success: false} & Record<string, unknown>; headers?: Record<string, string>; status: number}

/** A problem the server itself reports with a status (401, 404, 413, ...). */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

type FastifyishError = {code?: string; statusCode?: number}

/** Longest error message the server sends: a message names a problem, it does not echo a body back. */
export const MAX_MESSAGE_CHARS = 1000

/** Cut a longer message, saying how long it was (a body with 60,000 unknown keys must not get them all back). */
export function capMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_CHARS) return message
  let cut = MAX_MESSAGE_CHARS
  // Do not split a UTF-16 surrogate pair.
  if (/[\ud800-\udbff]/.test(message[cut - 1])) cut--
  return `${message.slice(0, cut)}... (${message.length.toLocaleString('en-US')} characters in all)`
}

/** The error answer with its message (and any other text field, such as error_message) capped. */
function capped(e: HttpError): HttpError {
  if (!Object.values(e.body).some((v) => typeof v === 'string' && v.length > MAX_MESSAGE_CHARS)) return e
  const body = Object.fromEntries(Object.entries(e.body).map(([k, v]) => [k, typeof v === 'string' ? capMessage(v) : v])) as HttpError['body']
  return {...e, body}
}

/**
 * Map anything a route throws to a status and body. The engine's own errors keep their
 * message (the same text the commands print): invalid input 400, not found 404, a state
 * of the store that prevents the request 409; a busy, unreachable or overloaded store (a statement
 * past PostgreSQL's statement_timeout) 503; anything else 500.
 */
export function httpError(err: unknown, limits: RequestFacts): HttpError {
  return capped(classify(err, limits))
}

/** What the messages name: the server's body limit, the request's Content-Type. */
type RequestFacts = {bodyLimit: number; contentType?: string}

function classify(err: unknown, limits: RequestFacts): HttpError {
  if (err instanceof HttpProblem) return {body: {message: err.message, success: false}, headers: err.headers, status: err.status}
  const described = describeError(err)
  const body = {success: false as const, ...described.body, message: described.message}
  if (err instanceof InvalidInputError) return {body, status: 400}
  if (err instanceof NotFoundError) return {body, status: 404}
  if (err instanceof UnavailableError) return {body, headers: {'retry-after': '1'}, status: 503}
  if (err instanceof OperationalError) return {body, status: 409}
  const e = err as FastifyishError
  if (isBusyCode(e?.code)) return {body, headers: {'retry-after': '1'}, status: 503}
  // PostgreSQL's statement_timeout (serve: 5 s) cancelled a statement: the store is overloaded, not the request wrong.
  if (e?.code === '57014') return {body, headers: {'retry-after': '1'}, status: 503}
  // Fastify's own request errors (body too large, bad content type, malformed request).
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return {body: {message: `request body is over ${limits.bodyLimit} bytes (the server's --body-limit); send one request per call`, success: false}, status: 413}
  }
  if (e?.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const type = limits.contentType ? `Content-Type ${JSON.stringify(limits.contentType)}` : 'a body without Content-Type'
    return {body: {message: `${(err as Error).message} (${type}): send the body as JSON with "Content-Type: application/json"`, success: false}, status: 415}
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return {body: {message: (err as Error).message, success: false}, status: e.statusCode}
  }
  return {body: {message: described.message, success: false}, status: 500}
}
