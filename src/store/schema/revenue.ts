/**
 * Subscriptions, charges and the events applied to them. USD columns are integer
 * cents computed at the rate of the record's created date.
 */
export const REVENUE_SQL = `
CREATE TABLE subscriptions (
  id                     INTEGER PRIMARY KEY,
  user_id                TEXT NOT NULL,
  origin                 TEXT NOT NULL CHECK (origin IN ('gateway_a','gateway_b','gateway_c')),
  origin_id              TEXT NOT NULL,
  product_id             INTEGER REFERENCES products(id) ON DELETE SET NULL,
  country                TEXT,
  created                INTEGER,
  interval               TEXT,
  interval_count         INTEGER,
  status                 TEXT NOT NULL CHECK (status IN ('pending','trialing','active','canceled')),
  cancel_at              INTEGER,
  canceled_at            INTEGER,
  trial_start            INTEGER,
  trial_end              INTEGER,
  currency               TEXT,
  amount_minor           INTEGER,
  amount_usd_minor       INTEGER,
  amount_usd_monthly_minor INTEGER,
  latest_event_timestamp INTEGER NOT NULL,
  latest_event_id        TEXT NOT NULL,
  UNIQUE (user_id, origin, origin_id)
);
CREATE INDEX subscriptions_product ON subscriptions (product_id);
CREATE INDEX subscriptions_created ON subscriptions (created);

CREATE TABLE charges (
  id                     INTEGER PRIMARY KEY,
  user_id                TEXT NOT NULL,
  origin                 TEXT NOT NULL CHECK (origin IN ('gateway_a','gateway_b','gateway_c')),
  origin_id              TEXT NOT NULL,
  product_id             INTEGER REFERENCES products(id) ON DELETE SET NULL,
  country                TEXT,
  created                INTEGER,
  status                 TEXT NOT NULL CHECK (status IN ('pending','succeeded','failed')),
  currency               TEXT,
  amount_minor           INTEGER,
  amount_refunded_minor  INTEGER NOT NULL DEFAULT 0,
  amount_usd_minor       INTEGER,
  amount_refunded_usd_minor INTEGER NOT NULL DEFAULT 0,
  metadata_json          TEXT,
  latest_event_timestamp INTEGER NOT NULL,
  latest_event_id        TEXT NOT NULL,
  UNIQUE (user_id, origin, origin_id)
);
CREATE INDEX charges_product ON charges (product_id);
CREATE INDEX charges_created ON charges (created);

-- Every applied event id, so the same notification twice is applied once.
CREATE TABLE events (
  event_id   TEXT PRIMARY KEY,
  kind       TEXT NOT NULL,          -- subscription | charge
  record_key TEXT NOT NULL,          -- user_id/origin/origin_id
  timestamp  INTEGER NOT NULL,
  applied_at TEXT NOT NULL
) WITHOUT ROWID;
`
