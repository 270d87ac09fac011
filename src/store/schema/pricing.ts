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

/**
 * Schema version 7: tax in prices (docs/tax.md). `tax_rates` holds the operator's rates,
 * dated like FX rates (a rate applies from `valid_from` on; one dated after today is
 * scheduled) and outranking the bundled table (src/tax/table.ts); `category` '' is the
 * country's standard rate, another a product tax category's. Rates are basis points
 * (hundredths of a percent). `tax_settings` holds the behaviour of the store (scope
 * 'store', subject ''), of a country (subject its code) and of a product (subject its
 * api_id, which also carries the product's tax category). Both are recorded in the history.
 */
export const TAX_PRICING_SQL = `
CREATE TABLE tax_rates (
  country    TEXT NOT NULL,
  category   TEXT NOT NULL DEFAULT '',
  valid_from TEXT NOT NULL,
  rate_bp    INTEGER NOT NULL CHECK (rate_bp >= 0 AND rate_bp < 10000),
  source     TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (country, category, valid_from)
);

CREATE TABLE tax_settings (
  scope      TEXT NOT NULL CHECK (scope IN ('store','country','product')),
  subject    TEXT NOT NULL,
  behavior   TEXT CHECK (behavior IN ('inclusive','exclusive')),
  category   TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (scope, subject)
);
`
