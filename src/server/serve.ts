import {InvalidInputError, OperationalError} from '../errors.js'
import type {ServeStopped} from '../schemas/server.js'
import {buildServer, type ServerOptions} from './app.js'
import {activeKeyCount} from './keys.js'

export type ServeOptions = ServerOptions & {
  /** How long in-flight requests may take to finish after SIGTERM before their connections are cut. */
  graceMs?: number
  host: string
  port: number
}

export const DEFAULT_GRACE_MS = 10_000

/**
 * The address the server is bound to, as the start line says it: the one actually bound
 * (not the first URL fastify derives from it), and for 0.0.0.0 or :: that it is every
 * interface, with the local URL to try.
 */
export function boundAddress(address: ReturnType<import('node:net').Server['address']>): {text: string; url: string} {
  if (address === null || typeof address === 'string') return {text: String(address), url: String(address)}
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`
  if (address.address === '0.0.0.0') return {text: `${url} (every IPv4 interface; from this machine http://127.0.0.1:${address.port})`, url}
  if (address.address === '::') return {text: `${url} (every interface; from this machine http://[::1]:${address.port})`, url}
  return {text: url, url}
}

/**
 * Run the server until SIGTERM or SIGINT, then shut down gracefully: stop accepting
 * connections, let requests in flight finish (a second signal, or the grace period, cuts
 * what is left), flush key use times and close the store.
 */
export async function serve(options: ServeOptions): Promise<ServeStopped> {
  const app = buildServer(options)
  const {accessLog: log, store} = app.pricectl
  // A store's first statement makes its checks (a PostgreSQL store opens without a round
  // trip): a wrong --db fails here, before the server listens.
  try {
    await store.health()
  } catch (error) {
    await app.close()
    throw error
  }
  let where: {text: string; url: string}
  try {
    await app.listen({host: options.host, port: options.port})
    where = boundAddress(app.server.address())
  } catch (error) {
    await app.close()
    throw new OperationalError(`cannot listen on ${options.host}:${options.port}: ${(error as Error).message} (pass another --port or --host)`)
  }
  log.note(`pricectl serve: listening on ${where.text} (store ${store.path}${options.trustProxy ? '; client address from X-Forwarded-For' : ''}); SIGTERM or Ctrl-C stops it`)
  if (await activeKeyCount(store) === 0) log.note('no active API keys: every /v1 request gets 401; create one with: pricectl keys create --name NAME')

  let stop: (signal: NodeJS.Signals) => void = () => {}
  const signal = await new Promise<string>((resolve) => {
    stop = resolve
    process.once('SIGTERM', stop).once('SIGINT', stop)
  })
  process.removeListener('SIGTERM', stop).removeListener('SIGINT', stop)

  const grace = options.graceMs ?? DEFAULT_GRACE_MS
  log.note(`${signal}: no new connections; finishing requests in flight (at most ${grace / 1000} s; a second signal stops at once)`)
  const cut = () => {
    log.note('closing the remaining connections')
    app.server.closeAllConnections()
  }
  const timer = setTimeout(cut, grace)
  timer.unref()
  process.once('SIGTERM', cut).once('SIGINT', cut)
  await app.close()
  clearTimeout(timer)
  process.removeListener('SIGTERM', cut).removeListener('SIGINT', cut)
  const requests = app.pricectl.requests()
  const message = `stopped after ${requests} request${requests === 1 ? '' : 's'}; store closed`
  log.note(message)
  return {message, requests, signal, success: true, url: where.url}
}

/** `--body-limit`: bytes, or a number with kb / mb (1024-based), e.g. 512kb, 2mb. */
export function parseSize(text: string, flag = '--body-limit'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m)?\s*$/i.exec(text)
  const unit = m?.[2]?.toLowerCase()
  const bytes = m ? Math.floor(Number(m[1]) * (unit?.startsWith('m') ? 1024 * 1024 : unit?.startsWith('k') ? 1024 : 1)) : Number.NaN
  if (!Number.isFinite(bytes) || bytes < 1) throw new InvalidInputError(`${flag}: expected a size such as 1048576, 512kb or 1mb, got ${JSON.stringify(text)}`)
  if (bytes > 100 * 1024 * 1024) throw new InvalidInputError(`${flag}: ${text} is over the 100mb ceiling (a request is one body, never a bulk file: use the import commands)`)
  return bytes
}

/** `--write-timeout`: seconds, decimals allowed, 0 (never wait) to 600. */
export function parseSeconds(text: string, flag: string): number {
  const seconds = /^\s*\d+(?:\.\d+)?\s*$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isFinite(seconds)) throw new InvalidInputError(`${flag}: expected seconds such as 5 or 0.5, got ${JSON.stringify(text)}`)
  if (seconds > 600) throw new InvalidInputError(`${flag}: ${text} s is over the 600 s ceiling (a client waiting that long has given up)`)
  return seconds
}
