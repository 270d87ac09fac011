/**
 * API keys of `pricectl serve`. Only a SHA-256 hash of each key is stored (a key is 32
 * random bytes, so a fast hash is enough: there is nothing to brute-force); `prefix` is
 * the visible start of the key, so operators can tell keys apart in lists and logs.
 * A key is revoked by setting `revoked_at`; the server reads this row on every request.
 */
export const KEYS_SQL = `
CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL,
  prefix       TEXT NOT NULL UNIQUE,
  hash         TEXT NOT NULL UNIQUE,          -- hex SHA-256 of the whole key
  created_at   TEXT NOT NULL,
  revoked_at   TEXT,
  last_used_at TEXT                           -- written at most every few seconds, not per request
);
`
