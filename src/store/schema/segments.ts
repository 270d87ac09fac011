/**
 * Audiences, packages and campaigns: the segmentation layers of a price.
 * Segment references to an audience have no ON DELETE action on purpose: deleting an
 * audience that a package or campaign is segmented on must not silently widen that
 * segment to everyone (`audiences delete --force` removes them explicitly).
 */
export const SEGMENTS_SQL = `
-- rules_json: a JSON array of rules, all of which must hold (docs/segments.md).
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
  position     INTEGER NOT NULL DEFAULT 0,
  multiplier   REAL CHECK (multiplier > 0),
  amount_minor INTEGER CHECK (amount_minor >= 0),
  currency     TEXT,
  PRIMARY KEY (audience_id, product_id),
  CHECK ((multiplier IS NOT NULL AND amount_minor IS NULL AND currency IS NULL)
      OR (multiplier IS NULL AND amount_minor IS NOT NULL AND currency IS NOT NULL))
);

CREATE TABLE packages (
  id             INTEGER PRIMARY KEY,
  api_id         TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  countries_json TEXT NOT NULL DEFAULT '[]',
  audience_id    INTEGER REFERENCES audiences(id),
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);

CREATE TABLE package_products (
  package_id INTEGER NOT NULL REFERENCES packages(id) ON DELETE CASCADE,
  product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
  position   INTEGER NOT NULL,
  PRIMARY KEY (package_id, product_id)
);

-- products_json: api_ids the campaign is limited to ('[]' = every product of the quote).
CREATE TABLE campaigns (
  id             INTEGER PRIMARY KEY,
  api_id         TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  coupon_id      INTEGER NOT NULL REFERENCES coupons(id) ON DELETE CASCADE,
  countries_json TEXT NOT NULL DEFAULT '[]',
  audience_id    INTEGER REFERENCES audiences(id),
  products_json  TEXT NOT NULL DEFAULT '[]',
  active_from    TEXT,
  active_till    TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
`
