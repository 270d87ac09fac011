import {statSync} from 'node:fs'
import {MessageChannel, Worker} from 'node:worker_threads'

import {workerUrl} from '../workers.js'
import type {MainMessage, WorkerInput, WorkerMessage} from './worker.js'

/**
 * Start the import's reader (worker.ts, run by reader-worker.ts in a worker thread: located
 * by ../workers.ts) and read its messages.
 */
export type Pipeline = {
  close(): Promise<void>
  messages: AsyncGenerator<WorkerMessage>
  send(m: MainMessage): void
}

export type PipelineOptions = {
  /**
   * The layout message for the file's header, sent as soon as the worker reads it (the
   * importer knows the layout beforehand): a worker reading ahead of the writer does not
   * wait for the writer to reach its file. The header message is still delivered.
   */
  onHeader?: (header: string[]) => MainMessage
  /** Regular files up to this size (bytes) are read in this thread; default IN_THREAD_MAX_BYTES. */
  inThreadMaxBytes?: number
}

/** The import worker's old-generation limit (MB): about four times what it keeps alive. */
export const WORKER_OLD_GENERATION_MB = 48

/** The import worker's young-generation limit (MB). */
export const WORKER_YOUNG_GENERATION_MB = 32

/**
 * Regular files up to this size are read in the writer's thread, over a MessageChannel: a
 * worker costs about 0.3 s to start and load the engine, more than reading such a file
 * beside the writer takes (docs/performance.md, "Import").
 */
export const IN_THREAD_MAX_BYTES = 1024 * 1024

/** How long an import waits for its reader thread to stop when asked before terminating it. */
const STOP_WAIT_MS = 5000

type Reader = {
  close(): Promise<void>
  on(event: 'error' | 'exit' | 'message', listener: (value: any) => void): unknown
  postMessage(m: MainMessage): void
}

function readerWorker(input: WorkerInput): Reader {
  const worker = new Worker(workerUrl('import/reader-worker'), {
    // Parsing allocates a string per cell: a roomier young generation lets them die there
    // (32 MB, not 12: the reader, which also stages the rows, is the import's critical path,
    // and fewer scavenges cut its CPU ~10% for ~16 MB of peak RSS).
    // The old generation is capped: V8 otherwise lets it grow to ~80 MB of garbage between
    // two full collections, which is most of the import's peak RSS; the worker's live data
    // stays near 12 MB (a batch's rejects, bounded, and the matcher's caches).
    resourceLimits: {maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB},
    workerData: input,
  })
  let exited = false
  const exit = new Promise<void>((resolve) => worker.once('exit', resolve)).then(() => {
    exited = true
  })
  return {
    close: async () => {
      if (exited) return
      // Asked, not terminated: see reader-worker.ts. A reader that does not stop within
      // STOP_WAIT_MS (it never should: it handles messages between reads) is terminated.
      worker.postMessage({type: 'stop'} satisfies MainMessage)
      const late = setTimeout(() => void worker.terminate(), STOP_WAIT_MS)
      await exit
      clearTimeout(late)
    },
    on: (event, listener) => worker.on(event, listener),
    postMessage: (m) => worker.postMessage(m),
  }
}

async function readerInThread(input: WorkerInput): Promise<Reader> {
  const {readExport} = await import('./worker.js')
  const {port1, port2} = new MessageChannel()
  readExport(input, port2)
  return {
    close: async () => {
      port1.close()
      port2.close()
    },
    on: (event, listener) => (event === 'message' ? port1.on('message', listener) : port1),
    postMessage: (m) => port1.postMessage(m),
  }
}

function smallFile(path: string, max: number): boolean {
  try {
    const s = statSync(path)
    return s.isFile() && s.size <= max
  } catch {
    return false
  }
}

export async function startPipeline(input: WorkerInput, options: PipelineOptions = {}): Promise<Pipeline> {
  const worker = smallFile(input.file, options.inThreadMaxBytes ?? IN_THREAD_MAX_BYTES) ? await readerInThread(input) : readerWorker(input)
  const queue: WorkerMessage[] = []
  let waiting: (() => void) | undefined
  let failure: Error | undefined
  let exited = false
  const wakeUp = () => {
    const w = waiting
    waiting = undefined
    w?.()
  }
  worker.on('message', (m: WorkerMessage) => {
    if (m.type === 'header' && options.onHeader) worker.postMessage(options.onHeader(m.header))
    queue.push(m)
    wakeUp()
  })
  worker.on('error', (error) => {
    failure = error
    wakeUp()
  })
  worker.on('exit', () => {
    exited = true
    wakeUp()
  })
  async function* messages(): AsyncGenerator<WorkerMessage> {
    for (;;) {
      if (queue.length > 0) {
        const m = queue.shift()!
        yield m
        if (m.type === 'end' || m.type === 'error') return
        continue
      }
      if (failure) throw failure
      if (exited) throw new Error('the import worker stopped unexpectedly')
      await new Promise<void>((resolve) => {
        waiting = resolve
      })
    }
  }
  return {
    close: () => worker.close(),
    messages: messages(),
    send: (m) => worker.postMessage(m),
  }
}
