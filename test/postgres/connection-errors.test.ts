import {chmodSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {type Cluster, freePort, startCluster} from '../../scripts/postgres-cluster.mjs'
import {pgServerUrl} from '../helpers/postgres.js'
import type {Run} from '../helpers/run.js'
import {runMany} from '../hardening/helpers.js'

/**
 * A wrong --db URL (bad host, port, user, password, database): one short line naming the URL
 * without its password and what to run or check, exit 1, no stack trace. Every case's command
 * runs as bin/run.js runs it, all in one process (runMany), once the servers they need are up.
 */

const PASSWORD = 'hunter2-secret'

/** The URL with a password (kept when it has one: a PRICECTL_TEST_PG_URL server's), changed by `change`. */
function withPassword(url: string, change: (u: URL) => void = () => {}): string {
  const u = new URL(url)
  if (!u.password) u.password = PASSWORD
  change(u)
  return u.toString()
}

function expectShortError(r: {code: number; stderr: string; stdout: string}, url: string, says: RegExp): void {
  expect(r.code, r.stderr).toBe(1)
  expect(r.stdout).toBe('')
  const lines = r.stderr.trim().split('\n')
  expect(lines, r.stderr).toHaveLength(1)
  const {password} = new URL(url)
  expect(r.stderr).not.toContain(`:${password}@`)
  expect(r.stderr).not.toMatch(/^\s+at /m)
  const shown = url.replace(`:${password}@`, ':***@')
  expect(lines[0].startsWith(`Error: cannot open the PostgreSQL store ${shown}: `), lines[0]).toBe(true)
  expect(lines[0]).toMatch(says)
}

describe('a wrong PostgreSQL URL', () => {
  /** The cases: a name, the URL, the command. */
  const cases: [string, string, string[]][] = []
  const results = new Map<string, Run>()
  const said = (name: string) => results.get(name)!
  const url = (name: string) => cases.find(([n]) => n === name)![1]
  let silent: Server | undefined
  let cluster: Cluster | undefined
  let folder: string | undefined
  let refusedPort: number

  beforeAll(async () => {
    const missing = withPassword(pgServerUrl(), (u) => (u.pathname = '/pricectl_no_such_db'))
    cases.push(['missing database', missing, ['products', 'list']], ['missing database, serve', missing, ['serve', '--port', '0']])
    cases.push(['unknown user', withPassword(pgServerUrl(), (u) => (u.username = 'pricectl_no_such_role')), ['db', 'info']])
    cases.push(['unknown host', withPassword('postgres://pricectl@no-such-host.invalid:5432/pricectl'), ['db', 'info']])
    refusedPort = await freePort()
    cases.push(['refused', withPassword(`postgres://pricectl@127.0.0.1:${refusedPort}/pricectl`), ['db', 'info']])
    // A server that accepts the connection and never answers: connect_timeout (1 s here).
    silent = createServer(() => {})
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve))
    cases.push(['silent', withPassword(`postgres://pricectl@127.0.0.1:${(silent.address() as {port: number}).port}/pricectl?connect_timeout=1`), ['db', 'info']])
    // A server with password authentication. As root the server runs as another user: its
    // folder and the password file must be readable by it.
    const base = process.env.PRICECTL_TEST_RUN_DIR ? dirname(process.env.PRICECTL_TEST_RUN_DIR) : tmpdir()
    folder = mkdtempSync(join(base, 'pricectl-auth-test-'))
    chmodSync(folder, 0o755)
    writeFileSync(join(folder, 'password'), 'the-right-password\n', {mode: 0o644})
    cluster = await startCluster({initdbArgs: ['--auth=scram-sha-256', `--pwfile=${join(folder, 'password')}`], parent: folder})
    cases.push(['wrong password', withPassword(cluster.url), ['db', 'info']])

    const out = runMany(cases.map(([, url, args]) => ({args, env: {PRICECTL_DB: url}})))
    for (const [i, [name]] of cases.entries()) results.set(name, out[i])
  }, 120_000)

  afterAll(async () => {
    silent?.close()
    await cluster?.stop()
    if (folder) rmSync(folder, {force: true, recursive: true})
  })

  it('a database that does not exist: says to create it, with the createdb to run', () => {
    const {port} = new URL(url('missing database'))
    expectShortError(said('missing database'), url('missing database'), new RegExp(`database "pricectl_no_such_db" does not exist \\(create it first \\(createdb -h 127\\.0\\.0\\.1 -p ${port} pricectl_no_such_db, or CREATE DATABASE\\) or pass another --db\\)$`))
    // serve refuses to start the same way.
    expectShortError(said('missing database, serve'), url('missing database'), /database "pricectl_no_such_db" does not exist/)
  })

  it('a user the server does not know: says to check the user name and pg_hba.conf', () => {
    // A PRICECTL_TEST_PG_URL server with password authentication fails on the password first.
    if (process.env.PRICECTL_TEST_PG_URL && new URL(process.env.PRICECTL_TEST_PG_URL).password) {
      expectShortError(said('unknown user'), url('unknown user'), /password authentication failed for user "pricectl_no_such_role" \(check the password/)
      return
    }
    expectShortError(said('unknown user'), url('unknown user'), /role "pricectl_no_such_role" does not exist \(check the user name in the URL, and that the server's pg_hba\.conf lets pricectl_no_such_role connect to postgres from this host\)$/)
  })

  it('a host that does not resolve, a port nothing listens on, a server that never answers', () => {
    expectShortError(said('unknown host'), url('unknown host'), /ENOTFOUND no-such-host\.invalid \(check the host name no-such-host\.invalid in the URL\)$/)
    const port = refusedPort
    expectShortError(said('refused'), url('refused'), new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port} \\(nothing accepts connections on 127\\.0\\.0\\.1 port ${port}: check that the server runs and the URL's host and port\\)$`))
    expectShortError(said('silent'), url('silent'), /: no answer within 1 s \(check the host, the port and any firewall; \?connect_timeout=SECONDS in the URL waits longer\)$/)
  })

  describe('on a server with password authentication', () => {
    it('a wrong password: says to check it, and where it comes from', () => {
      expectShortError(said('wrong password'), url('wrong password'), /password authentication failed for user "postgres" \(check the password: in the URL, PGPASSWORD or ~\/\.pgpass\)$/)
    })
  })
})
