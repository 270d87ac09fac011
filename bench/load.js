// The serve benches' load generator: keep-alive HTTP/1.1 connections over loopback, one
// request in flight on each, every request written in one piece. It does the least a client
// can per request because on a 2-core machine its CPU is taken from the servers it measures:
// autocannon spends 0.13-0.15 ms of CPU per new-user request against two servers on
// PostgreSQL, this 0.065 ms (docs/performance.md, "The load generator").
import {connect} from 'node:net'
import {performance} from 'node:perf_hooks'

/** A response that has not come after this long counts as an error, and its connection ends. */
const TIMEOUT_MS = 10_000
const HEAD_END = Buffer.from('\r\n\r\n')

/**
 * Sends `nextBody()` as the body of each request until `duration` seconds have passed or
 * `amount` requests were sent, over `connections` connections to `url`. Resolves to the
 * figures the benches read: requests.total and .average (per second, over the whole run),
 * latency.p50 and .p99 (ms), non2xx and errors.
 */
export function load({amount = Infinity, connections, duration, headers, method = 'POST', nextBody, path, url}) {
  const {hostname, port} = new URL(url)
  const head = `${method} ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}`
  const latencies = []
  const counts = {errors: 0, non2xx: 0, sent: 0}
  const started = performance.now()
  const until = duration === undefined ? Infinity : started + duration * 1000
  return new Promise((resolve) => {
    let open = connections
    const finished = () => {
      if (--open > 0) return
      const seconds = (performance.now() - started) / 1000
      latencies.sort((a, b) => a - b)
      const at = (q) => (latencies.length === 0 ? 0 : Math.round(10 * latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) / 10)
      resolve({errors: counts.errors, latency: {p50: at(0.5), p99: at(0.99)}, non2xx: counts.non2xx, requests: {average: latencies.length / seconds, total: latencies.length}})
    }
    for (let c = 0; c < connections; c++) connection(hostname, Number(port), {counts, finished, head, latencies, limits: {amount, until}, nextBody})
  })
}

function connection(host, port, {counts, finished, head, latencies, limits, nextBody}) {
  const socket = connect({host, noDelay: true, port})
  let pending = null
  let sentAt = 0
  let waiting = false
  let ended = false
  const end = (error) => {
    if (ended) return
    ended = true
    if (error) counts.errors++
    socket.destroy()
    finished()
  }
  const send = () => {
    if (performance.now() >= limits.until || counts.sent >= limits.amount) return end(false)
    counts.sent++
    const body = nextBody()
    waiting = true
    sentAt = performance.now()
    socket.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
  }
  socket.setTimeout(TIMEOUT_MS, () => end(waiting))
  socket.on('connect', send)
  socket.on('error', () => end(true))
  // The server closed the connection: an error only while a response was due.
  socket.on('end', () => end(waiting))
  socket.on('data', (chunk) => {
    pending = pending === null ? chunk : Buffer.concat([pending, chunk])
    const headEnd = pending.indexOf(HEAD_END)
    if (headEnd < 0) return
    const responseHead = pending.toString('latin1', 0, headEnd)
    const length = /\r\ncontent-length: *(\d+)/i.exec(responseHead)
    // The servers measured always send a length; anything else is not a response this reads.
    if (length === null) return end(true)
    const size = headEnd + HEAD_END.length + Number(length[1])
    if (pending.length < size) return
    waiting = false
    latencies.push(performance.now() - sentAt)
    const status = Number(responseHead.slice(9, 12))
    if (status < 200 || status > 299) counts.non2xx++
    pending = pending.length > size ? pending.subarray(size) : null
    send()
  })
}
