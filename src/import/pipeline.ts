import {closeSync, openSync, readSync, statSync} from 'node:fs'
import {MessageChannel, Worker} from 'node:worker_threads'

import {workerUrl} from '../workers.js'
import type {ChunkMessage, Chunks, MainMessage, TakeoverMessage, WorkerInput, WorkerMessage} from './worker.js'

/**
 * Start the import's readers (worker.ts, run by reader-worker.ts in worker threads: located
 * by ../workers.ts) and read their messages, in file order.
 *
 * A large file may be read by several threads at once (PipelineOptions.readers), each its own
 * chunks of about `chunkBytes` in turn (worker.ts, Chunks), into stages of its own; every chunk
 * ends a batch. Their messages are merged here in chunk order, so the writer sees one reader:
 * stages numbered across the threads (two each), and rows, bytes and reject lines counted from
 * the file's start (each chunk adds its own to what the chunks before it counted). A chunk's
 * messages are passed on only once the chunk before it ended at a record's end; when one does
 * not (a quoted field with line breaks spans it), its thread reads on alone to the file's end
 * and the others stop: what they read from there on never reaches the writer.
 */
export type Pipeline = {
  close(): Promise<void>
  messages: AsyncGenerator<PipelineMessage>
  send(m: MainMessage): void
  /** The stages this pipeline's readers fill (indexes into WorkerInput.stages), each to be freed once the writer reaches the file. */
  stages: readonly number[]
}

/** What the writer sees of the readers. */
export type PipelineMessage = Exclude<WorkerMessage, ChunkMessage | TakeoverMessage>

export type PipelineOptions = {
  /**
   * The layout message for the file's header, sent as soon as the worker reads it (the
   * importer knows the layout beforehand): a worker reading ahead of the writer does not
   * wait for the writer to reach its file. The header message is still delivered.
   */
  onHeader?: (header: string[]) => MainMessage
  /** Regular files up to this size (bytes) are read in this thread; default IN_THREAD_MAX_BYTES. */
  inThreadMaxBytes?: number
  /**
   * Threads that read a file larger than chunkBytes at once (default 1); WorkerInput.stages
   * holds two stages for each. `header`: the file's header as read first (the other threads
   * begin after it).
   */
  readers?: number
  header?: readonly string[]
  /** The chunks' size (bytes) with several readers; default CHUNK_BYTES. */
  chunkBytes?: number
}

/**
 * The chunks of a file read by several threads: about 90,000 export rows, under a batch of
 * PostgreSQL's (each chunk ends a batch), and few enough that starting a chunk costs nothing
 * measurable.
 */
export const CHUNK_BYTES = 24 * 1024 * 1024

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

/**
 * The file's record delimiter (CRLF or not) from its first line break, when its first line
 * (the header) is read on CsvReader's short road; undefined otherwise (no line break, a quote
 * or a lone CR before it), and the file is read by one thread.
 */
function firstLineDelimiter(file: string): boolean | undefined {
  const fd = openSync(file, 'r')
  try {
    const buf = Buffer.allocUnsafe(64 * 1024)
    const n = readSync(fd, buf, 0, buf.length, 0)
    const lf = buf.subarray(0, n).indexOf(10)
    if (lf === -1) return undefined
    const line = buf.subarray(0, lf)
    const cr = line.indexOf(13)
    if (line.includes(34) || (cr !== -1 && cr !== lf - 1)) return undefined
    return cr === lf - 1
  } finally {
    closeSync(fd)
  }
}

export async function startPipeline(input: WorkerInput, options: PipelineOptions = {}): Promise<Pipeline> {
  const readers = options.readers ?? 1
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES
  if (readers > 1 && options.header !== undefined && !smallFile(input.file, Math.max(chunkBytes, options.inThreadMaxBytes ?? IN_THREAD_MAX_BYTES))) {
    const crlf = firstLineDelimiter(input.file)
    if (crlf !== undefined) return chunked(input, options, {bytes: chunkBytes, crlf, header: [...options.header], index: 0, readers})
  }
  const worker = smallFile(input.file, options.inThreadMaxBytes ?? IN_THREAD_MAX_BYTES) ? await readerInThread(input) : readerWorker(input)
  return {...single(worker, options), stages: [0, 1]}
}

/** The messages of one reader, as it sends them. */
function single(worker: Reader, options: PipelineOptions): Omit<Pipeline, 'stages'> {
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
  async function* messages(): AsyncGenerator<PipelineMessage> {
    for (;;) {
      if (queue.length > 0) {
        const m = queue.shift()! as PipelineMessage
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

/** Several readers of one file, each its own chunks (see Pipeline), merged in chunk order. */
function chunked(input: WorkerInput, options: PipelineOptions, chunks: Chunks): Pipeline {
  const n = chunks.readers
  const workers = Array.from({length: n}, (_, r) => readerWorker({...input, chunks: {...chunks, index: r}, stages: input.stages.slice(2 * r, 2 * r + 2)}))
  // The others begin after the header: their layout is the one the header's gets.
  const layout = options.onHeader?.([...chunks.header])
  const readers = workers.map((w, r) => {
    if (r > 0 && layout) w.postMessage(layout)
    return single(w, r === 0 ? options : {})
  })
  const closeAll = () => Promise.all(readers.map((r) => r.close())).then(() => {})
  async function* messages(): AsyncGenerator<PipelineMessage> {
    // What the chunks passed on counted: reject lines, rows and bytes are counted from the file's start.
    let lines = 0
    let read = 0
    let bytes = 0
    let only: number | undefined
    for (let k = 0; ; ) {
      const r = only ?? k % n
      const next = await readers[r].messages.next()
      if (next.done) return
      const m = next.value as WorkerMessage
      switch (m.type) {
        case 'chunk': {
          lines += m.lines
          read += m.read
          bytes += m.bytes
          k++
          break
        }

        case 'takeover': {
          // The chunk after this one began inside a record: this reader reads on to the file's
          // end, and the others stop (what they read from there is never passed on).
          only = r
          await Promise.all(readers.map((other, i) => (i === r ? undefined : other.close())))
          break
        }

        case 'end': {
          yield {bytes, type: 'end'}
          return
        }

        case 'staged': {
          yield {...m, bytes: bytes + m.bytes, read: read + m.read, rejects: m.rejects.map(([line, reason, cells]) => [line + lines, reason, cells]), stage: 2 * r + m.stage}
          break
        }

        case 'progress': {
          yield {...m, bytes: bytes + m.bytes, read: read + m.read}
          break
        }

        default: {
          yield m
          if (m.type === 'error') return
        }
      }
    }
  }
  return {
    close: closeAll,
    messages: messages(),
    send(m) {
      if (m.type === 'free') readers[m.stage >> 1].send({stage: m.stage & 1, type: 'free'})
      else for (const r of readers) r.send(m)
    },
    stages: Array.from({length: 2 * n}, (_, i) => i),
  }
}
