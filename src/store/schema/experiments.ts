/** Price and packaging experiments, their arms, and exposures (locks that got an arm). */
export const EXPERIMENTS_SQL = `
CREATE TABLE experiments (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  type           TEXT NOT NULL CHECK (type IN ('price','packaging')),
  status         TEXT NOT NULL CHECK (status IN ('draft','running','stopped')),
  allocation     TEXT NOT NULL CHECK (allocation IN ('thompson','uniform')),
  audience_id    INTEGER REFERENCES audiences(id) ON DELETE SET NULL,
  countries_json TEXT NOT NULL DEFAULT '[]',
  seed           INTEGER,
  created_at     TEXT NOT NULL,
  started_at     TEXT,
  stopped_at     TEXT
);

CREATE TABLE experiment_products (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  product_id    INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  PRIMARY KEY (experiment_id, product_id)
);

CREATE TABLE arms (
  experiment_id   INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  arm_id          TEXT NOT NULL,      -- 'baseline' or the arm's id
  multiplier      REAL,
  usd_price_minor INTEGER,
  products_json   TEXT,               -- packaging: product api_ids to select
  PRIMARY KEY (experiment_id, arm_id)
);

CREATE TABLE exposures (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  user_id       TEXT NOT NULL,
  arm_id        TEXT NOT NULL,
  exposed_at    INTEGER NOT NULL,
  PRIMARY KEY (experiment_id, user_id)
);
CREATE INDEX exposures_arm ON exposures (experiment_id, arm_id);
`
