import {spawn} from 'node:child_process'
import {join} from 'node:path'

import {ROOT} from './run.js'

/**
 * One answer typed on the terminal once its prompt is up: a string is typed followed by
 * Enter once inquirer's prompt marker (PROMPT) has appeared; `text` is the same with the
 * output to wait for named (`after`); `keys` are typed as they are ('\x03' is Ctrl-C).
 */
export type TerminalAnswer = string | {after?: RegExp | string; keys: string} | {after?: RegExp | string; text: string}

/** inquirer's prompt marker: "?" then a space, with colour codes between them or not ("? Base price", "Did you mean X? (Y/n)"). */
export const PROMPT = /\?(?:\u001B\[[\d;]*m)* /

export type TerminalRun = {code: number; output: string}

/**
 * Run bin/run.js on a real pseudo-terminal: `script -qfec CMD /dev/null` (util-linux), with
 * CI unset so the command may prompt (src/cli/tty.ts). The output (stdout and stderr, as the
 * terminal shows them) is watched, and each answer is typed as soon as the text it waits for
 * has appeared since the previous answer: no fixed pauses. A raw key such as Ctrl-C must wait
 * for its prompt too, or it would be the terminal's SIGINT rather than a key the prompt
 * reads (inquirer puts the terminal in raw mode before it draws the prompt).
 *
 * stdin stays open until the command exits (at its end `script` would send the command an
 * end of file). The run fails, with the output so far, when the command has not exited
 * within `timeoutMs`, or exits while answers are left untyped: never a silent pass.
 */
export function onTerminal(args: string[], answers: TerminalAnswer[] = [], options: {env?: Record<string, string | undefined>; timeoutMs?: number} = {}): Promise<TerminalRun> {
  const command = [process.execPath, join(ROOT, 'bin', 'run.js'), ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  const env: Record<string, string | undefined> = {...process.env, ...options.env}
  delete env.CI
  const timeoutMs = options.timeoutMs ?? 30_000
  const pending = answers.map((a) => (typeof a === 'string' ? {after: PROMPT, typed: `${a}\r`} : 'keys' in a ? {after: a.after ?? PROMPT, typed: a.keys} : {after: a.after ?? PROMPT, typed: `${a.text}\r`}))
  return new Promise<TerminalRun>((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {cwd: ROOT, env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe']})
    let output = ''
    /** Where the output since the last answer starts. */
    let since = 0
    let failed = false
    const fail = (why: string) => {
      if (failed) return
      failed = true
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${why}\n$ pricectl ${args.join(' ')}\n--- output so far ---\n${output}`))
    }
    const timer = setTimeout(() => fail(`the command on a terminal did not exit within ${timeoutMs} ms (${pending.length > 0 ? `answer ${answers.length - pending.length + 1} of ${answers.length} waits for ${String(pending[0].after)}` : `every answer typed`})`), timeoutMs)
    const typeWhatIsDue = () => {
      while (pending.length > 0) {
        const {after, typed} = pending[0]
        const shown = output.slice(since)
        if (!(typeof after === 'string' ? shown.includes(after) : after.test(shown))) return
        pending.shift()
        since = output.length
        child.stdin.write(typed)
      }
    }
    const seen = (chunk: string) => {
      output += chunk
      typeWhatIsDue()
    }
    child.stdout.setEncoding('utf8').on('data', seen)
    child.stderr.setEncoding('utf8').on('data', seen)
    // The command may exit before it reads what was typed last.
    child.stdin.on('error', () => {})
    child.on('error', (error) => fail(`could not start script (util-linux): ${error.message}`))
    child.on('close', (code, signal) => {
      child.stdin.end()
      if (failed) return
      if (pending.length > 0) return fail(`the command exited (${code ?? signal}) before the output showed ${String(pending[0].after)} for answer ${answers.length - pending.length + 1} of ${answers.length}`)
      clearTimeout(timer)
      resolve({code: code ?? 1, output})
    })
  })
}
