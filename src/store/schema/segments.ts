/** Audiences, packages and campaigns: the segmentation layers of a price. */
export const SEGMENTS_SQL = `
CREATE TABLE audiences (
  id         INTEGER PRIMARY KEY,
  api_id     TEXT NOT NULL UNIQUE,
  name       TEXT NOT NULL,
  priority   INTEGER NOT NULL DEFAULT 0,
  rules_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- Per product: a multiplier of the localized price, or a fixed local price.
CREATE TABLE audience_prices (
  audience_id  INTEGER NOT NULL REFERENCES audiences(id) ON DELETE CASCADE,
  product_id   INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  multiplier   REAL,
  amount_minor INTEGER,
  currency     TEXT,
  PRIMARY KEY (audience_id, product_id)
);

CREATE TABLE packages (
  id             INTEGER PRIMARY KEY,
  api_id         TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  countries_json TEXT NOT NULL DEFAULT '[]',
  audience_id    INTEGER REFERENCES audiences(id) ON DELETE SET NULL,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

CREATE TABLE package_products (
  package_id INTEGER NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  PRIMARY KEY (package_id, product_id)
);

CREATE TABLE campaigns (
  id             INTEGER PRIMARY KEY,
  api_id         TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  coupon_id      INTEGER NOT NULL REFERENCES coupons(id) ON DELETE CASCADE,
  countries_json TEXT NOT NULL DEFAULT '[]',
  audience_id    INTEGER REFERENCES audiences(id) ON DELETE SET NULL,
  active_from    TEXT,
  active_till    TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
`
