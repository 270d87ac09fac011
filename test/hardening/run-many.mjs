/**
 * `node run-many.mjs ROOT COMMANDS_JSON`: run several pricectl commands one after another in
 * this one process, each as bin/run.js runs it (@oclif/core's `execute` on the package at ROOT,
 * the build in dist/), and write what each did, as a JSON array of {code, stderr, stdout}, to
 * file descriptor 3. COMMANDS_JSON is an array of {args, env?}: `env` is set for that command
 * and put back after it.
 *
 * A test that runs many commands in the same surroundings (a read-only mount namespace, another
 * user) pays node's and oclif's start-up once instead of once per command
 * (test/hardening/files.test.ts). Per command: stdout and stderr are what it wrote through
 * process.stdout.write / process.stderr.write (all pricectl and oclif output, console.* too);
 * the exit code is what the process would exit with: the code oclif's error handler passes to
 * process.exit (its `Exit.exit`, stubbed here, first call wins), else process.exitCode, else 0.
 */
import {execute} from '@oclif/core'
import {Exit} from '@oclif/core/handle'
import {writeSync} from 'node:fs'

const [root, list] = [process.argv[2], JSON.parse(process.argv[3])]
const results = []
const {stderr, stdout} = process
const writes = {stderr: stderr.write, stdout: stdout.write}
const exit = Exit.exit

/** A stream's write that appends to `sink` instead (same signature and result as a stream's). */
function capture(sink) {
  return (chunk, encoding, callback) => {
    sink.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8')
    const done = typeof encoding === 'function' ? encoding : callback
    if (done) process.nextTick(done)
    return true
  }
}

for (const {args, env = {}} of list) {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]))
  for (const [name, value] of Object.entries(env)) process.env[name] = value
  const out = {text: ''}
  const err = {text: ''}
  const drains = stdout.listeners('drain')
  let exited
  Exit.exit = (code = 0) => {
    exited ??= code
  }
  process.exitCode = undefined
  stdout.write = capture(out)
  stderr.write = capture(err)
  try {
    // bin/run.js: `await execute({dir: import.meta.url})`, oclif's run then its error handler.
    await execute({args, dir: root})
  } finally {
    stdout.write = writes.stdout
    stderr.write = writes.stderr
    Exit.exit = exit
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    // oclif's flush waits for a 'drain' that a captured write never emits.
    for (const listener of stdout.listeners('drain')) if (!drains.includes(listener)) stdout.removeListener('drain', listener)
  }
  results.push({code: exited ?? process.exitCode ?? 0, stderr: err.text, stdout: out.text})
}
process.exitCode = 0
writeSync(3, JSON.stringify(results))
