import {z} from 'zod'

import {Envelope, Name} from './common.js'

/**
 * `pricectl serve` and `pricectl keys`: the key name a command accepts and what the
 * commands and the server's own endpoints (GET /healthz) print.
 */

export const KeyName = z.string({error: (iss) => (iss.input === undefined ? 'is required' : `expected a string, got ${JSON.stringify(iss.input)}`)}).pipe(Name)

export const KeyCreateInput = z.strictObject({name: KeyName})

export const KEY_STATUSES = ['active', 'revoked'] as const

/** A stored API key as lists show it: never the key itself, only its visible prefix. */
export const ApiKeyRecord = z.object({
  created_at: z.string(),
  id: z.number().int(),
  last_used_at: z.string().nullable(),
  name: z.string(),
  prefix: z.string(),
  revoked_at: z.string().nullable(),
  status: z.enum(KEY_STATUSES),
})
export type ApiKeyRecord = z.output<typeof ApiKeyRecord>

/** `keys create`: the key is in the output once and never again. */
export const KeyCreated = Envelope.extend({api_key: z.string(), key: ApiKeyRecord, success: z.literal(true)})
export type KeyCreated = z.output<typeof KeyCreated>
export const KeyList = Envelope.extend({keys: z.array(ApiKeyRecord), success: z.literal(true)})
export type KeyList = z.output<typeof KeyList>
export const KeyRevoked = Envelope.extend({key: ApiKeyRecord, success: z.literal(true)})
export type KeyRevoked = z.output<typeof KeyRevoked>

/**
 * GET /healthz (no key needed), 200: the store answers and has the expected schema. When the
 * store cannot be reached (PostgreSQL down) it is 503 with Retry-After and the error body
 * (common.ts ErrorBody), at once (docs/serve.md "Outages").
 */
export const Health = Envelope.extend({schema_version: z.number().int(), success: z.literal(true)})

/** What `serve --json` prints when the server has stopped. */
export const ServeStopped = Envelope.extend({
  requests: z.number().int(),
  signal: z.string(),
  success: z.literal(true),
  url: z.string(),
})
export type ServeStopped = z.output<typeof ServeStopped>
