/**
 * Price calculation tables: rounding rules, localization factors, gateway price
 * settings, locks (the stored quote per user or IP).
 */
export const PRICING_SQL = `
CREATE TABLE rounding_rules (
  currency   TEXT PRIMARY KEY,
  rule       TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE localization_factors (
  country TEXT PRIMARY KEY,
  factor  REAL NOT NULL CHECK (factor > 0),
  year    INTEGER,
  source  TEXT NOT NULL
);

CREATE TABLE gateways (
  gateway             TEXT PRIMARY KEY CHECK (gateway IN ('gateway_a','gateway_b','gateway_c','gateway_d')),
  accepted_currencies TEXT NOT NULL,             -- JSON array of codes, or "*" for any
  fallback_currency   TEXT NOT NULL DEFAULT 'USD',
  amount_format       TEXT NOT NULL CHECK (amount_format IN ('minor','decimal'))
);

-- The quote a user (or an anonymous IP) got; later calls return it unchanged.
CREATE TABLE locks (
  lock_key      TEXT PRIMARY KEY,                -- user_id, or the IP when no user id
  user_id       TEXT,
  ip            TEXT,
  anonymous     INTEGER NOT NULL DEFAULT 0,
  country       TEXT NOT NULL,
  currency      TEXT NOT NULL,
  package_id    TEXT,
  experiment_id INTEGER NOT NULL DEFAULT 0,
  arm_id        TEXT NOT NULL DEFAULT '0',
  quote_json    TEXT NOT NULL,                   -- audience, per-product prices, coupons, explain data
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX locks_anonymous_ip ON locks (ip) WHERE anonymous = 1;
`
