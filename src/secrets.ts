/**
 * API keys in text that is kept or printed (the history's command lines, the access log): a
 * full key (`pk_` and 43 base64url characters, src/server/keys.ts) keeps the prefix that
 * `keys list` shows and loses the rest; the value of an `api_key` query parameter is masked
 * whatever its shape (a wrong key may be a real key of another system).
 */
const FULL_KEY = /\bpk_([A-Za-z0-9_-]{8})[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g
const KEY_PARAM = /([?&]api_key=)[^&#\s"]*/gi

export function maskApiKeys(text: string): string {
  if (!text.includes('pk_') && !/api_key=/i.test(text)) return text
  return text.replace(FULL_KEY, 'pk_$1***').replace(KEY_PARAM, '$1***')
}
