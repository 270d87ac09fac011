/**
 * Subscriptions, charges and the events applied to them. Amounts are integer minor
 * units of the record's currency; USD columns are integer cents computed at the FX rate
 * of the record's created date, so history does not move when rates are refreshed.
 *
 * The unique key (user_id, origin, origin_id) is the spec's path; it leads with user_id
 * so "everything of a user" (lists, experiment attribution) uses the same index.
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
  amount_minor           INTEGER CHECK (amount_minor >= 0),
  amount_usd_minor       INTEGER,          -- USD cents at the rate of the created date
  amount_usd_monthly_minor INTEGER,        -- USD cents per month (NULL for one-time)
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
  amount_minor           INTEGER CHECK (amount_minor >= 0),
  amount_refunded_minor  INTEGER NOT NULL DEFAULT 0 CHECK (amount_refunded_minor >= 0),
  amount_usd_minor       INTEGER,
  amount_refunded_usd_minor INTEGER NOT NULL DEFAULT 0,
  metadata_json          TEXT,
  latest_event_timestamp INTEGER NOT NULL,
  latest_event_id        TEXT NOT NULL,
  UNIQUE (user_id, origin, origin_id)
);
-- No index on charges.product_id: charges are the high-volume table and an index costs
-- about a tenth of a bulk import; product filters and product deletes scan instead.
CREATE INDEX charges_created ON charges (created);

-- Every event applied by a single write (create, update, delete), so the same
-- notification twice is applied once. A delete stays here as a tombstone: an older
-- create arriving after it does not bring the record back. Bulk imports do not add
-- rows: an export row's event is recognised by the record's latest_event_id.
CREATE TABLE events (
  event_id   TEXT PRIMARY KEY,
  kind       TEXT NOT NULL CHECK (kind IN ('subscription','charge')),
  action     TEXT NOT NULL CHECK (action IN ('create','update','delete')),
  record_key TEXT NOT NULL,          -- JSON [user_id, origin, origin_id]
  timestamp  INTEGER NOT NULL,
  applied_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX events_tombstones ON events (kind, record_key) WHERE action = 'delete';
`

/**
 * Schema version 4: partial updates in any order (docs/revenue.md, "Events in any order").
 * `field_events` is the record's field order (FieldEvents of src/store/port/revenue.ts as
 * JSON): NULL when the record was written whole by its latest event, which is every record
 * an import or a create wrote and no partial update touched since, so the import's hot path
 * neither reads nor writes it. `pending_fields` keeps partial updates of records that do not
 * exist yet (PendingFields as JSON), one row per record, until a create makes the record.
 */
export const REVENUE_ORDER_SQL = `
ALTER TABLE subscriptions ADD COLUMN field_events TEXT;
ALTER TABLE charges ADD COLUMN field_events TEXT;

CREATE TABLE pending_fields (
  kind       TEXT NOT NULL CHECK (kind IN ('subscription','charge')),
  record_key TEXT NOT NULL,          -- JSON [user_id, origin, origin_id]
  pending    TEXT NOT NULL,          -- JSON {latest, fields}
  PRIMARY KEY (kind, record_key)
) WITHOUT ROWID;
`

/**
 * Schema version 5: the history of subscriptions (docs/revenue.md, "Subscription history").
 * One row per event a subscription took (an import row, an applied single write): the
 * subscription as that event showed it, trial dates kept whatever the status. The report
 * derives each subscription's state over time from its events, so the order rows and files
 * were delivered in does not matter. Event ids are unique per subscription (an import row's
 * id is its moment, precedence and fingerprint: the same row again is the same event). No
 * foreign key on product_id: the history keeps the plan an event named.
 */
export const SUBSCRIPTION_EVENTS_SQL = `
CREATE TABLE subscription_events (
  user_id                  TEXT NOT NULL,
  origin                   TEXT NOT NULL,
  origin_id                TEXT NOT NULL,
  event_id                 TEXT NOT NULL,
  event_timestamp          INTEGER NOT NULL,
  product_id               INTEGER,
  country                  TEXT,
  created                  INTEGER,
  interval                 TEXT,
  interval_count           INTEGER,
  status                   TEXT NOT NULL,
  cancel_at                INTEGER,
  canceled_at              INTEGER,
  trial_start              INTEGER,
  trial_end                INTEGER,
  currency                 TEXT,
  amount_minor             INTEGER,
  amount_usd_monthly_minor INTEGER,
  PRIMARY KEY (user_id, origin, origin_id, event_id)
) WITHOUT ROWID;
`

/** Every subscription a store held before version 5 starts its history with its record, as of its latest event. */
export const SUBSCRIPTION_EVENTS_BACKFILL_SQL = `
INSERT INTO subscription_events (user_id, origin, origin_id, event_id, event_timestamp, product_id, country, created, interval, interval_count,
  status, cancel_at, canceled_at, trial_start, trial_end, currency, amount_minor, amount_usd_monthly_minor)
SELECT user_id, origin, origin_id, latest_event_id, latest_event_timestamp, product_id, country, created, interval, interval_count,
  status, cancel_at, canceled_at, trial_start, trial_end, currency, amount_minor, amount_usd_monthly_minor FROM subscriptions;
`

/**
 * Schema version 6: tax (docs/revenue.md, "Tax"). A charge's `amount_minor` is what the
 * customer paid (gross); `tax_minor` is the tax part of it, so its net is `amount_minor -
 * tax_minor`. The USD columns split the same way: `tax_usd_minor` is the tax's share of
 * `amount_usd_minor`, `tax_refunded_usd_minor` its share of `amount_refunded_usd_minor` (a
 * refund returns tax in proportion). A subscription's `tax_minor` is the tax part of its
 * `amount_minor` per billing interval, and its history keeps it per event: MRR is net of
 * it. Records written before this version had no tax: 0, so their net is their amount.
 */
export const TAX_SQL = `
ALTER TABLE charges ADD COLUMN tax_minor INTEGER NOT NULL DEFAULT 0 CHECK (tax_minor >= 0);
ALTER TABLE charges ADD COLUMN tax_usd_minor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN tax_refunded_usd_minor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN tax_minor INTEGER NOT NULL DEFAULT 0 CHECK (tax_minor >= 0);
ALTER TABLE subscription_events ADD COLUMN tax_minor INTEGER NOT NULL DEFAULT 0;
`
