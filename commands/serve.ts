import {Flags} from '@oclif/core'

import {BaseCommand} from '../src/cli/base.js'
import {DEFAULT_BODY_LIMIT, DEFAULT_POOL_SIZE} from '../src/server/app.js'
import {parseSeconds, parseSize, serve} from '../src/server/serve.js'
import {DEFAULT_WRITE_TIMEOUT_MS} from '../src/server/write-queue.js'
import {ServeStopped} from '../src/schemas/server.js'

export default class Serve extends BaseCommand<typeof Serve> {
  static override summary = "Serve the spec's HTTP API from this store"
  static override description = `Serve the spec's HTTP API (every endpoint under /v1) from this store

Same engine and store as the commands: a quote locked over HTTP is the one "pricectl price" shows, and the other way round. Every /v1 request needs an API key ("pricectl keys create"), sent as "Authorization: Bearer KEY" or "X-Api-Key: KEY"; GET /healthz needs none. One access line per request goes to stderr. SIGTERM (or Ctrl-C) stops accepting connections, lets requests in flight finish and closes the store. See docs/serve.md.`
  static override examples = [
    '<%= config.bin %> keys create --name checkout && <%= config.bin %> serve',
    '<%= config.bin %> serve --port 9000 --db ./shop.db',
    '<%= config.bin %> serve --trust-proxy   # behind a reverse proxy on this host that sets X-Forwarded-For',
    '<%= config.bin %> serve --host 0.0.0.0 --port 8080   # reachable from other machines (keys still required)',
    'curl -s localhost:8080/v1/prices -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" -d \'{"user_id":"u1","products":["pro_monthly"]}\'',
  ]
  static override flags = {
    'access-log': Flags.boolean({allowNo: true, default: true, description: 'One line per request on stderr'}),
    'body-limit': Flags.string({default: String(DEFAULT_BODY_LIMIT), description: 'Largest request body (bytes, or e.g. 512kb, 2mb); larger bodies get 413'}),
    'geoip-db': Flags.string({description: 'Your own GeoIP2/GeoLite2 Country .mmdb (default: the bundled one)', env: 'PRICECTL_GEOIP_DB'}),
    host: Flags.string({default: '127.0.0.1', description: 'Address to listen on (0.0.0.0 or :: for every interface)'}),
    'pool-size': Flags.integer({
      default: DEFAULT_POOL_SIZE,
      description: 'PostgreSQL: how many transactions may be open at once (price requests side by side), each on its own connections; a SQLite store has one connection',
      env: 'PRICECTL_POOL_SIZE',
      max: 64,
      min: 1,
    }),
    port: Flags.integer({default: 8080, description: 'Port to listen on (0: any free port, printed at start)', max: 65_535, min: 0}),
    'trust-proxy': Flags.boolean({
      default: false,
      description: 'Take the client address (get_ip_from_request, access log) from X-Forwarded-For; only behind a proxy you run, which sets it',
    }),
    'write-timeout': Flags.string({
      default: String(DEFAULT_WRITE_TIMEOUT_MS / 1000),
      description: 'Seconds a write may wait while another process (an import, a command) holds the store\'s write lock; then 503 with Retry-After. Other requests never wait',
    }),
  }
  static override get outputSchema() {
    return ServeStopped
  }

  async run(): Promise<ServeStopped> {
    const f = this.flags
    return serve({
      accessLog: f['access-log'],
      bodyLimit: parseSize(f['body-limit']),
      db: this.storeSpec(),
      geoipDb: f['geoip-db'],
      host: f.host,
      poolSize: f['pool-size'],
      port: f.port,
      trustProxy: f['trust-proxy'],
      writeTimeoutMs: parseSeconds(f['write-timeout'], '--write-timeout') * 1000,
    })
  }
}
