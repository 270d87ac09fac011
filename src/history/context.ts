import {userInfo} from 'node:os'

import {nowIso} from '../clock.js'
import {maskApiKeys} from '../secrets.js'
import type {ChangeContext} from '../store/port/history.js'

/** The OS user running this process: `whoami`, else $USER, else "unknown". */
export function osUser(): string {
  try {
    const name = userInfo().username
    if (name) return name
  } catch {
    // No passwd entry for this uid (some containers).
  }
  return process.env.USER || process.env.LOGNAME || 'unknown'
}

/** Flags whose values never go into the history. */
const SECRET_FLAG = /(secret|token|password|passwd|api[-_]?key|credential|auth)/i

/**
 * The command line as the history shows it: `pricectl products update pro --country-price DE=9.99:EUR`,
 * with the value of any flag that looks like a secret replaced by "***", a full API key cut
 * to its prefix (`pk_AbC12xyz***`), and without --db
 * (the history is in that store).
 */
export function commandLine(bin: string, id: string | undefined, argv: readonly string[]): string {
  const out: string[] = [bin, ...(id ? id.split(':') : [])]
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const m = /^(--?[^=]+)(=.*)?$/.exec(a)
    // The store is the one the history is in: its path is noise.
    if (m && m[1] === '--db') {
      if (m[2] === undefined) i++
      continue
    }
    if (m && SECRET_FLAG.test(m[1])) {
      if (m[2] !== undefined) out.push(`${m[1]}=***`)
      else {
        out.push(a)
        if (i + 1 < argv.length && !argv[i + 1].startsWith('-')) {
          out.push('***')
          i++
        }
      }
      continue
    }
    // A key given as an argument (`keys revoke <key>`) is as secret as one given to a flag.
    const shown = maskApiKeys(a)
    out.push(/^[\w@%+=:,./-]+$/.test(a) ? shown : shellQuote(shown))
  }
  return out.join(' ')
}

function shellQuote(a: string): string {
  return `'${a.replaceAll("'", `'\\''`)}'`
}

/** The context of a command run by this OS user. */
export function commandContext(bin: string, id: string | undefined, argv: readonly string[]): ChangeContext {
  return {actor: osUser(), at: nowIso(), command: commandLine(bin, id, argv)}
}

/** The context of a server request made with an API key. */
export function requestContext(keyName: string | undefined, method: string, url: string): ChangeContext {
  return {actor: keyName === undefined ? 'server' : `key:${keyName}`, at: nowIso(), command: `${method} ${url.split('?')[0]}`}
}
