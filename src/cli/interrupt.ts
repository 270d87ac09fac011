import type {InterruptSignal} from '../errors.js'

/**
 * SIGINT and SIGTERM during long work (an import), and the terminal state a progress bar
 * changes. One place owns both so that whatever ends the process — the work finishing, an
 * error, Ctrl-C, SIGTERM, process.exit() or an uncaught exception — the terminal is given
 * back as it was: cursor shown, line wrap on.
 */

/** Show the cursor (DECTCEM) and turn line wrap back on (DECAWM): what a progress bar turns off. */
export const TERMINAL_RESTORE = '\u001B[?25h\u001B[?7h'

/** The exit code of a process stopped by the signal: 128 + its number. */
export const SIGNAL_EXIT: Record<InterruptSignal, number> = {SIGINT: 130, SIGTERM: 143}

/** Streams whose terminal is changed (cursor hidden, wrap off) right now. */
const held = new Set<NodeJS.WriteStream>()

function restoreAll(): void {
  for (const stream of held) {
    try {
      // Synchronous on a terminal (a TTY write stream), so it is out before the process ends.
      stream.write(TERMINAL_RESTORE)
    } catch {}
  }
  held.clear()
}

let hooked = false

/**
 * The terminal of `stream` is about to be changed (cursor hidden, line wrap off): until the
 * returned release() is called, any end of the process restores it. release() restores it
 * too (after the bar's own stop has, it is a no-op on screen) and is safe to call twice.
 */
export function holdTerminal(stream: NodeJS.WriteStream): () => void {
  if (!hooked) {
    hooked = true
    // 'exit' runs on process.exit() and on an uncaught exception or rejection; a signal
    // without a handler ends the process without it, hence the handlers of interruptible().
    process.on('exit', restoreAll)
  }
  held.add(stream)
  return () => {
    if (!held.delete(stream)) return
    try {
      stream.write(TERMINAL_RESTORE)
    } catch {}
  }
}

/**
 * Run `work` with SIGINT and SIGTERM turned into an abort of its signal (the reason is the
 * signal's name): the work stops between two transactions and throws, its own cleanup
 * (finally blocks: temporary files, stage folders) runs, and the command exits 130 or 143
 * with its message. A second signal while it stops ends the process at once (the terminal
 * is still restored; temporary files left are swept by the next import).
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const on = (name: InterruptSignal) => () => {
    if (controller.signal.aborted) {
      restoreAll()
      process.exit(SIGNAL_EXIT[name])
    }
    controller.abort(name)
  }
  const onInt = on('SIGINT')
  const onTerm = on('SIGTERM')
  process.on('SIGINT', onInt).on('SIGTERM', onTerm)
  try {
    return await work(controller.signal)
  } finally {
    process.removeListener('SIGINT', onInt).removeListener('SIGTERM', onTerm)
  }
}
