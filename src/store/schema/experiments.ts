/**
 * Price and packaging experiments, their arms, and exposures (locks that got an arm).
 * Conversions are not stored here: they are read from subscriptions and charges, so
 * records written one by one and bulk imports count alike.
 */
export const EXPERIMENTS_SQL = `
CREATE TABLE experiments (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  type           TEXT NOT NULL CHECK (type IN ('price','packaging')),
  status         TEXT NOT NULL CHECK (status IN ('draft','running','stopped')),
  allocation     TEXT NOT NULL CHECK (allocation IN ('thompson','uniform')),
  -- No ON DELETE action: deleting a targeted audience must not widen the experiment
  -- to everyone (audiences delete refuses while an experiment targets it).
  audience_id    INTEGER REFERENCES audiences(id),
  countries_json TEXT NOT NULL DEFAULT '[]',
  seed           INTEGER NOT NULL,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  started_at     TEXT,
  stopped_at     TEXT
);
CREATE INDEX experiments_status ON experiments (status);

CREATE TABLE experiment_products (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  product_id    INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  PRIMARY KEY (experiment_id, product_id)
);

CREATE TABLE arms (
  experiment_id   INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  arm_id          TEXT NOT NULL,      -- 'baseline', a number, or a name
  position        INTEGER NOT NULL,
  multiplier      REAL CHECK (multiplier > 0),
  usd_price_minor INTEGER CHECK (usd_price_minor >= 0),
  products_json   TEXT,               -- packaging: product api_ids to select
  PRIMARY KEY (experiment_id, arm_id)
);

-- One row per visitor and experiment. user_id is the lock key (the user id, or the IP
-- of an anonymous lock, as the price result's user_id); anonymous rows never convert
-- until a user adopts the lock.
CREATE TABLE exposures (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  user_id       TEXT NOT NULL,
  anonymous     INTEGER NOT NULL DEFAULT 0,
  arm_id        TEXT NOT NULL,
  exposed_at    INTEGER NOT NULL,     -- UNIX seconds; conversions created earlier do not count
  PRIMARY KEY (experiment_id, user_id)
);
CREATE INDEX exposures_arm ON exposures (experiment_id, arm_id);
`
