// Types of postgres-cluster.mjs (plain ESM, shared by the tests and the bench).
export type RunAs = {gid: number; uid: number}

export type ClusterOptions = {
  /** The folder of initdb and postgres (default: binDir()). */
  bin?: string
  /** More initdb arguments. */
  initdbArgs?: string[]
  /** What the errors suggest besides installing PostgreSQL (e.g. "set PRICECTL_TEST_PG_URL to a server"). */
  instead?: string
  /** Where the data folder is made (default: os.tmpdir()). */
  parent?: string
  /** The data folder's name before mkdtemp's suffix (default "pricectl-pg-"). */
  prefix?: string
  /** Server settings, -c name=value (listen_addresses and unix_socket_directories are set). */
  settings?: Record<string, string>
}

export type Cluster = {
  /** Shut the server down (fast) and start it again on the same port and data. */
  restart(): Promise<void>
  /** Shut the server down (fast), keeping its data and port: an outage, ended by start(). */
  halt(): Promise<void>
  /** Start the server again after halt() (same port and data); nothing when it runs. */
  start(): Promise<void>
  /** Shut the server down and remove its folders. */
  stop(): Promise<void>
  /** The maintenance database's URL. */
  url: string
}

export function binDir(instead?: string): string
export function runAs(instead?: string): RunAs | undefined
export function freePort(): Promise<number>
export function reachableBin(bin: string, user: RunAs | undefined, parent?: string): {bin: string; staged?: string}
export function startCluster(options?: ClusterOptions): Promise<Cluster>
