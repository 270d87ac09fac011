/**
 * `node --import ./record-loads.mjs`: append every module the process resolves, with the
 * module that imported it, to the JSONL file $PRICECTL_RECORD_LOADS (test/library/api.test.ts
 * checks what the library entry loads at import time).
 */
import {appendFileSync} from 'node:fs'
import {register} from 'node:module'
import {isMainThread} from 'node:worker_threads'

if (isMainThread) register(import.meta.url)

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  appendFileSync(process.env.PRICECTL_RECORD_LOADS, JSON.stringify({from: context.parentURL, url: result.url}) + '\n')
  return result
}
