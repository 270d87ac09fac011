/**
 * Catalog tables: settings, products and what hangs off them, coupons, users, FX rates.
 * Money columns end in `_minor`: integers in the currency's smallest unit.
 */
export const CATALOG_SQL = `
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE products (
  id             INTEGER PRIMARY KEY,
  api_id         TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL UNIQUE,
  base_px_minor  INTEGER NOT NULL CHECK (base_px_minor >= 0),           -- USD cents
  interval       TEXT NOT NULL CHECK (interval IN ('day','week','month','year','one_time')),
  interval_count INTEGER NOT NULL CHECK (interval_count >= 1),
  min_px_minor   INTEGER CHECK (min_px_minor >= 0),                     -- USD cents, bounds of experimental prices
  max_px_minor   INTEGER CHECK (max_px_minor >= 0),
  baseline_id    INTEGER REFERENCES products(id) ON DELETE SET NULL,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

CREATE TABLE country_prices (
  product_id   INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  country      TEXT NOT NULL,
  currency     TEXT NOT NULL,
  amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
  position     INTEGER NOT NULL,
  PRIMARY KEY (product_id, country)
);

-- One row per integration object; gateway_ref is the object's id field
-- (gateway_a_product_id, gateway_c_plan_id or gateway_d_plan_id).
CREATE TABLE product_integrations (
  id             INTEGER PRIMARY KEY,
  product_id     INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  position       INTEGER NOT NULL,
  type           TEXT NOT NULL CHECK (type IN ('gateway_a','gateway_a_with_interval','gateway_c','gateway_d')),
  gateway_ref    TEXT NOT NULL,
  interval       TEXT,
  interval_count INTEGER,
  currency       TEXT
);
CREATE INDEX product_integrations_ref ON product_integrations (type, gateway_ref);
CREATE INDEX product_integrations_product ON product_integrations (product_id);

CREATE TABLE feature_groups (
  id          INTEGER PRIMARY KEY,
  api_id      TEXT NOT NULL UNIQUE,
  name        TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE product_features (
  id          INTEGER PRIMARY KEY,
  product_id  INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  api_id      TEXT NOT NULL,
  name        TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL CHECK (status IN ('active','inactive')),
  type        TEXT NOT NULL CHECK (type IN ('boolean','numeric')),
  unit        TEXT,
  group_id    INTEGER REFERENCES feature_groups(id) ON DELETE SET NULL,
  value       REAL NOT NULL DEFAULT 0,
  UNIQUE (product_id, api_id)
);

-- A free trial offered with a product: interval_count intervals, e.g. 14 x day.
CREATE TABLE product_trials (
  product_id     INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  position       INTEGER NOT NULL,
  interval       TEXT NOT NULL CHECK (interval IN ('day','week','month','year')),
  interval_count INTEGER NOT NULL CHECK (interval_count >= 1),
  PRIMARY KEY (product_id, position)
);

-- A percentage coupon keeps its percent; a fixed-amount coupon keeps integer minor
-- units of its currency, so money stays exact.
CREATE TABLE coupons (
  id           INTEGER PRIMARY KEY,
  api_id       TEXT NOT NULL UNIQUE,
  name         TEXT NOT NULL,
  currency     TEXT,
  coupon_type  TEXT NOT NULL CHECK (coupon_type IN ('percentage','fixed_amount')),
  percent      REAL CHECK (percent > 0 AND percent <= 100),
  amount_minor INTEGER CHECK (amount_minor > 0),
  active_from  TEXT,
  active_till  TEXT,
  status       TEXT NOT NULL CHECK (status IN ('ACTIVE','NOT_ACTIVE')),
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  CHECK ((coupon_type = 'percentage' AND percent IS NOT NULL AND amount_minor IS NULL AND currency IS NULL)
      OR (coupon_type = 'fixed_amount' AND amount_minor IS NOT NULL AND percent IS NULL AND currency IS NOT NULL))
);

-- The same coupon in a payment gateway (at most one per source).
CREATE TABLE coupon_external_coupons (
  id          INTEGER PRIMARY KEY,
  coupon_id   INTEGER NOT NULL REFERENCES coupons(id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  source      TEXT NOT NULL CHECK (source IN ('GATEWAY_A','GATEWAY_C','GATEWAY_D')),
  external_id TEXT NOT NULL,
  UNIQUE (coupon_id, source)
);

CREATE TABLE users (
  user_id    TEXT PRIMARY KEY,
  country    TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Units of currency per 1 USD on a date; revenue converts at the nearest earlier date.
CREATE TABLE fx_rates (
  currency TEXT NOT NULL,
  date     TEXT NOT NULL,
  rate     REAL NOT NULL CHECK (rate > 0),
  source   TEXT NOT NULL,
  PRIMARY KEY (currency, date)
) WITHOUT ROWID;
`
