#include "store/sql/migrations.h"

#include <algorithm>
#include <vector>

namespace adserver::store::sql {
namespace {

// One schema change: its version in each engine's history (0: not in that engine) and its SQL,
// one text for both engines or each engine's own.
struct Migration {
  int64_t sqlite = 0;
  int64_t postgres = 0;
  std::string_view sql;           // both engines
  std::string_view sqlite_sql;    // SQLite's own (instead of `sql`)
  std::string_view postgres_sql;  // PostgreSQL's own (instead of `sql`)

  constexpr std::string_view SqlFor(Engine engine) const {
    std::string_view own = engine == Engine::kSqlite ? sqlite_sql : postgres_sql;
    return own.empty() ? sql : own;
  }
  constexpr int64_t VersionIn(Engine engine) const {
    return engine == Engine::kSqlite ? sqlite : postgres;
  }
};

// Append only: a migration that has shipped is never edited (a database applied it; a
// PostgreSQL node one release behind runs on the schema the newest one leaves); add a row.
// A new change is one row with both versions: `sql` when the text suits both engines, else
// `sqlite_sql` and `postgres_sql`.
// SQLite conventions: times are INTEGER Unix seconds, money INTEGER micros, booleans INTEGER
// 0/1, addresses BLOB(20), key hashes BLOB(32). PostgreSQL: the same as bigint and bytea.
// Child rows keep the caller's list order in `position`. Deleting a project that campaigns
// reference is refused (ON DELETE RESTRICT).
constexpr Migration kMigrations[] = {
    // --- The embedded store's first history (SQLite 1-13), from before cluster mode.
    {.sqlite = 1, .sqlite_sql = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('catalog_version', 0), ('activity_version', 0);

CREATE TABLE publishers (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  name            TEXT NOT NULL,
  allowed_origins TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);

CREATE TABLE communities (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT NOT NULL,
  logo_url   TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE publisher_blocked_communities (
  publisher_id INTEGER NOT NULL REFERENCES publishers (id) ON DELETE CASCADE,
  community_id INTEGER NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
  position     INTEGER NOT NULL,
  PRIMARY KEY (publisher_id, community_id)
) WITHOUT ROWID;
CREATE INDEX publisher_blocked_communities_by_community
  ON publisher_blocked_communities (community_id);

CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  publisher_id INTEGER NOT NULL REFERENCES publishers (id) ON DELETE CASCADE,
  key_hash     BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  prefix       TEXT NOT NULL,
  test         INTEGER NOT NULL CHECK (test IN (0, 1)),
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER
);
CREATE INDEX api_keys_by_publisher ON api_keys (publisher_id);

CREATE TABLE projects (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  slug       TEXT NOT NULL UNIQUE,
  name       TEXT NOT NULL,
  logo_url   TEXT NOT NULL DEFAULT '',
  category   TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE project_contracts (
  project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  chain_id   INTEGER NOT NULL,
  address    BLOB NOT NULL CHECK (length(address) = 20),
  position   INTEGER NOT NULL,
  PRIMARY KEY (chain_id, address)
) WITHOUT ROWID;
CREATE INDEX project_contracts_by_project ON project_contracts (project_id);

CREATE TABLE campaigns (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  community_id        INTEGER NOT NULL REFERENCES communities (id) ON DELETE RESTRICT,
  name                TEXT NOT NULL,
  status              TEXT NOT NULL CHECK (status IN ('draft', 'active', 'paused', 'ended')),
  starts_at           INTEGER,
  ends_at             INTEGER,
  pricing_model       TEXT NOT NULL CHECK (pricing_model IN ('CPM', 'CPC', 'CPA')),
  bid_micros          INTEGER NOT NULL,
  total_budget_micros INTEGER,
  daily_budget_micros INTEGER,
  chains              TEXT NOT NULL DEFAULT '',  -- comma-separated chain ids; '' = any chain
  recency_days        INTEGER,
  frequency_cap_count INTEGER,
  frequency_cap_hours INTEGER,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL,
  CHECK ((frequency_cap_count IS NULL) = (frequency_cap_hours IS NULL))
);
CREATE INDEX campaigns_by_community ON campaigns (community_id);

CREATE TABLE campaign_projects (
  campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  project_id  INTEGER NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
  kind        TEXT NOT NULL CHECK (kind IN ('target', 'exclude')),
  position    INTEGER NOT NULL,
  PRIMARY KEY (campaign_id, project_id, kind)
) WITHOUT ROWID;
CREATE INDEX campaign_projects_by_project ON campaign_projects (project_id);

CREATE TABLE ads (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id        INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  headline           TEXT NOT NULL,
  content            TEXT NOT NULL,
  cta_url            TEXT NOT NULL,
  cta_label          TEXT NOT NULL,
  image_landscape    TEXT NOT NULL DEFAULT '',
  image_long_banner  TEXT NOT NULL DEFAULT '',
  image_short_banner TEXT NOT NULL DEFAULT '',
  weight             INTEGER NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('active', 'paused')),
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
);
CREATE INDEX ads_by_campaign ON ads (campaign_id);

CREATE TABLE activity (
  wallet     BLOB NOT NULL CHECK (length(wallet) = 20),
  project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  chain_id   INTEGER NOT NULL,
  last_seen  INTEGER NOT NULL,
  count      INTEGER NOT NULL,
  PRIMARY KEY (wallet, project_id, chain_id)
) WITHOUT ROWID;
CREATE INDEX activity_by_project ON activity (project_id);
)sql"},
    // Identity graph (issue 3): identities (cookie or localId) and their linked wallets.
    {.sqlite = 2, .sqlite_sql = R"sql(
CREATE TABLE identities (
  id        BLOB PRIMARY KEY CHECK (length(id) = 16),
  kind      INTEGER NOT NULL CHECK (kind IN (1, 2)),  -- 1 cookie, 2 localId
  last_seen INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX identities_by_last_seen ON identities (last_seen);

CREATE TABLE identity_wallets (
  identity_id BLOB NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
  wallet      BLOB NOT NULL CHECK (length(wallet) = 20),
  last_seen   INTEGER NOT NULL,
  PRIMARY KEY (identity_id, wallet)
) WITHOUT ROWID;
CREATE INDEX identity_wallets_by_wallet ON identity_wallets (wallet);
CREATE INDEX identity_wallets_by_last_seen ON identity_wallets (last_seen);
)sql"},
    // Decision engine (issue 4): publisher/campaign/ad controls and campaign counters.
    {.sqlite = 3, .sqlite_sql = R"sql(
CREATE TABLE publisher_controls (
  publisher_id        INTEGER PRIMARY KEY REFERENCES publishers (id) ON DELETE CASCADE,
  allowed_communities TEXT NOT NULL DEFAULT '',  -- comma-separated community ids
  category_opt_ins    TEXT NOT NULL DEFAULT '',  -- comma-separated categories
  floor_cpm_micros    INTEGER,
  ab_arms             TEXT NOT NULL DEFAULT ''   -- comma-separated arm names
);

CREATE TABLE campaign_controls (
  campaign_id            INTEGER PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
  category               TEXT NOT NULL DEFAULT '',
  allowed_publishers     TEXT NOT NULL DEFAULT '',  -- comma-separated publisher ids
  pacing                 TEXT NOT NULL DEFAULT 'even' CHECK (pacing IN ('even', 'asap')),
  advertiser_project_id  INTEGER,
  exclude_existing_users INTEGER NOT NULL DEFAULT 0 CHECK (exclude_existing_users IN (0, 1))
);

CREATE TABLE ad_controls (
  ad_id  INTEGER PRIMARY KEY REFERENCES ads (id) ON DELETE CASCADE,
  ab_arm TEXT NOT NULL DEFAULT ''
);

-- Written asynchronously by the serving process; no foreign key, so a flush never fails on a
-- campaign deleted meanwhile.
CREATE TABLE campaign_counters (
  campaign_id        INTEGER PRIMARY KEY,
  total_spend_micros INTEGER NOT NULL,
  impressions        INTEGER NOT NULL,
  clicks             INTEGER NOT NULL,
  conversions        INTEGER NOT NULL,
  day                INTEGER NOT NULL,
  day_spend_micros   INTEGER NOT NULL,
  hour               INTEGER NOT NULL,
  hour_spend_micros  INTEGER NOT NULL
);
)sql"},
    // Identity redesign (issue 20): identities live in sealed cookies and localIds, so the
    // identity graph tables go; what remains server-side is the erasure list (keyed wallet
    // digests, never addresses) and the installation's digest key.
    {.sqlite = 4, .sqlite_sql = R"sql(
DROP TABLE identity_wallets;
DROP TABLE identities;

CREATE TABLE identity_erasures (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  digest    INTEGER NOT NULL UNIQUE,  -- SipHash-2-4 of the wallet under identity_meta.digest_key
  erased_at INTEGER NOT NULL
);
CREATE INDEX identity_erasures_by_time ON identity_erasures (erased_at);

CREATE TABLE identity_meta (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
) WITHOUT ROWID;
)sql"},
    // Events (issue 15): clicks (raw rows, 90 days), serving and click rollups per minute
    // (48 h), hour (400 days) and day (forever), and the installation's event secrets (the
    // click-token key when none is configured, the person-digest key).
    {.sqlite = 5, .sqlite_sql = R"sql(
CREATE TABLE clicks (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  decision_id     BLOB NOT NULL,     -- 16 bytes (UUIDv7)
  publisher_id    INTEGER NOT NULL,
  ad_unit_id      TEXT NOT NULL,
  campaign_id     INTEGER NOT NULL,
  ad_id           INTEGER NOT NULL,
  arm             TEXT NOT NULL,
  served_at       INTEGER NOT NULL,
  clicked_at      INTEGER NOT NULL,
  price_micros    INTEGER NOT NULL,  -- billed amount (0 unless billed)
  person          INTEGER NOT NULL,  -- keyed digest of the wallet set, never a wallet
  earlier_variant INTEGER NOT NULL CHECK (earlier_variant IN (0, 1)),
  status          TEXT NOT NULL CHECK (status IN ('billed', 'duplicate', 'expired'))
);
-- A decision bills at most one click.
CREATE UNIQUE INDEX clicks_billed_once ON clicks (decision_id) WHERE status = 'billed';
CREATE INDEX clicks_by_campaign ON clicks (campaign_id, id);
CREATE INDEX clicks_by_publisher ON clicks (publisher_id, id);
CREATE INDEX clicks_by_time ON clicks (clicked_at);

CREATE TABLE rollups_minute (
  bucket             INTEGER NOT NULL,  -- Unix seconds of the bucket's start
  publisher_id       INTEGER NOT NULL,
  ad_unit_id         TEXT NOT NULL,
  campaign_id        INTEGER NOT NULL,  -- 0: requests that filled nothing
  ad_id              INTEGER NOT NULL,
  arm                TEXT NOT NULL,
  requests           INTEGER NOT NULL DEFAULT 0,
  fills              INTEGER NOT NULL DEFAULT 0,
  no_fills           INTEGER NOT NULL DEFAULT 0,
  errors             INTEGER NOT NULL DEFAULT 0,
  impression_spend   INTEGER NOT NULL DEFAULT 0,  -- micros
  clicks             INTEGER NOT NULL DEFAULT 0,  -- billed
  duplicate_clicks   INTEGER NOT NULL DEFAULT 0,
  expired_clicks     INTEGER NOT NULL DEFAULT 0,
  click_spend        INTEGER NOT NULL DEFAULT 0,  -- micros
  PRIMARY KEY (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm)
) WITHOUT ROWID;
CREATE TABLE rollups_hour (
  bucket             INTEGER NOT NULL,  -- Unix seconds of the bucket's start
  publisher_id       INTEGER NOT NULL,
  ad_unit_id         TEXT NOT NULL,
  campaign_id        INTEGER NOT NULL,  -- 0: requests that filled nothing
  ad_id              INTEGER NOT NULL,
  arm                TEXT NOT NULL,
  requests           INTEGER NOT NULL DEFAULT 0,
  fills              INTEGER NOT NULL DEFAULT 0,
  no_fills           INTEGER NOT NULL DEFAULT 0,
  errors             INTEGER NOT NULL DEFAULT 0,
  impression_spend   INTEGER NOT NULL DEFAULT 0,  -- micros
  clicks             INTEGER NOT NULL DEFAULT 0,  -- billed
  duplicate_clicks   INTEGER NOT NULL DEFAULT 0,
  expired_clicks     INTEGER NOT NULL DEFAULT 0,
  click_spend        INTEGER NOT NULL DEFAULT 0,  -- micros
  PRIMARY KEY (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm)
) WITHOUT ROWID;
CREATE TABLE rollups_day (
  bucket             INTEGER NOT NULL,  -- Unix seconds of the bucket's start
  publisher_id       INTEGER NOT NULL,
  ad_unit_id         TEXT NOT NULL,
  campaign_id        INTEGER NOT NULL,  -- 0: requests that filled nothing
  ad_id              INTEGER NOT NULL,
  arm                TEXT NOT NULL,
  requests           INTEGER NOT NULL DEFAULT 0,
  fills              INTEGER NOT NULL DEFAULT 0,
  no_fills           INTEGER NOT NULL DEFAULT 0,
  errors             INTEGER NOT NULL DEFAULT 0,
  impression_spend   INTEGER NOT NULL DEFAULT 0,  -- micros
  clicks             INTEGER NOT NULL DEFAULT 0,  -- billed
  duplicate_clicks   INTEGER NOT NULL DEFAULT 0,
  expired_clicks     INTEGER NOT NULL DEFAULT 0,
  click_spend        INTEGER NOT NULL DEFAULT 0,  -- micros
  PRIMARY KEY (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm)
) WITHOUT ROWID;
CREATE INDEX rollups_day_by_campaign ON rollups_day (campaign_id, bucket);
CREATE INDEX rollups_day_by_publisher ON rollups_day (publisher_id, bucket);
CREATE INDEX rollups_hour_by_publisher ON rollups_hour (publisher_id, bucket);

CREATE TABLE events_meta (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
) WITHOUT ROWID;
)sql"},
    // Advertiser keys (sak_..., SHA-256 at rest; catalog data like api_keys) and advertiser
    // events of POST /v1/events (issue 15): raw rows kept 90 days, counts per community,
    // campaign (0 = none) and name kept forever.
    {.sqlite = 6, .sqlite_sql = R"sql(
CREATE TABLE advertiser_keys (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  community_id INTEGER NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
  key_hash     BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  prefix       TEXT NOT NULL,
  test         INTEGER NOT NULL CHECK (test IN (0, 1)),
  created_at   INTEGER NOT NULL,
  revoked_at   INTEGER
);
CREATE INDEX advertiser_keys_by_community ON advertiser_keys (community_id);

CREATE TABLE advertiser_events (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  community_id INTEGER NOT NULL,
  key_id       INTEGER NOT NULL,
  name         TEXT NOT NULL,
  url          TEXT,              -- NULL: none sent
  decision_id  BLOB CHECK (decision_id IS NULL OR length(decision_id) = 16),  -- from spclid
  campaign_id  INTEGER,           -- the campaign of the decision's click; NULL: none
  person       INTEGER NOT NULL,  -- keyed digest of the wallet set, never a wallet
  created_at   INTEGER NOT NULL
);
CREATE INDEX advertiser_events_by_campaign ON advertiser_events (campaign_id, id);
CREATE INDEX advertiser_events_by_community ON advertiser_events (community_id, id);
CREATE INDEX advertiser_events_by_time ON advertiser_events (created_at);

CREATE TABLE advertiser_event_counts (
  community_id INTEGER NOT NULL,
  campaign_id  INTEGER NOT NULL,  -- 0: not linked to a campaign
  name         TEXT NOT NULL,
  count        INTEGER NOT NULL,
  PRIMARY KEY (community_id, campaign_id, name)
) WITHOUT ROWID;
CREATE INDEX advertiser_event_counts_by_campaign ON advertiser_event_counts (campaign_id);
-- An event's spclid finds its click (any status) by decision id.
CREATE INDEX clicks_by_decision ON clicks (decision_id);
)sql"},
    // Onchain conversions (issue 15): the campaign's conversion rule, attributed conversions,
    // and their counts and spend in the rollups.
    {.sqlite = 7, .sqlite_sql = R"sql(
ALTER TABLE campaign_controls ADD COLUMN conversion_projects TEXT;  -- NULL: no rule
ALTER TABLE campaign_controls ADD COLUMN conversion_kind TEXT NOT NULL DEFAULT 'any'
  CHECK (conversion_kind IN ('any', 'new', 'returning'));
ALTER TABLE campaign_controls ADD COLUMN conversion_returning_after_days INTEGER NOT NULL DEFAULT 45;
ALTER TABLE campaign_controls ADD COLUMN conversion_window_days INTEGER NOT NULL DEFAULT 14;
ALTER TABLE campaign_controls ADD COLUMN conversion_once_per_person INTEGER NOT NULL DEFAULT 1;

CREATE TABLE conversions (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id      INTEGER NOT NULL,
  ad_id            INTEGER NOT NULL,
  publisher_id     INTEGER NOT NULL,
  ad_unit_id       TEXT NOT NULL,
  arm              TEXT NOT NULL,
  decision_id      BLOB NOT NULL,
  wallet           BLOB NOT NULL,     -- 20 bytes: the wallet of the onchain transaction
  person           INTEGER NOT NULL,  -- keyed digest of the exposed wallet set
  chain_id         INTEGER NOT NULL,
  tx_hash          BLOB NOT NULL,
  log_index        INTEGER NOT NULL,  -- -1: a transaction to the contract, no log
  block_number     INTEGER NOT NULL,
  block_hash       BLOB NOT NULL,
  block_time       INTEGER NOT NULL,
  touch            TEXT NOT NULL CHECK (touch IN ('click', 'view')),
  exposed_at       INTEGER NOT NULL,  -- the attributed serve (or click) time
  price_micros     INTEGER NOT NULL,  -- billed CPA (0 for other models)
  confirmed        INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
  status           TEXT NOT NULL CHECK (status IN ('billed', 'reorged')),
  recorded_at      INTEGER NOT NULL,
  reverted_at      INTEGER
);
-- A transaction (log) counts once per campaign while its block stands.
CREATE UNIQUE INDEX conversions_once ON conversions (chain_id, tx_hash, log_index, campaign_id)
  WHERE status = 'billed';
CREATE INDEX conversions_by_campaign ON conversions (campaign_id, id);
CREATE INDEX conversions_by_publisher ON conversions (publisher_id, id);
CREATE INDEX conversions_by_person ON conversions (campaign_id, person, block_time);
CREATE INDEX conversions_by_block ON conversions (chain_id, block_number);
-- Attribution finds a person's last click on a campaign.
CREATE INDEX clicks_by_person ON clicks (campaign_id, person, clicked_at);

ALTER TABLE rollups_minute ADD COLUMN conversions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_minute ADD COLUMN conversion_spend INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_hour ADD COLUMN conversions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_hour ADD COLUMN conversion_spend INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_day ADD COLUMN conversions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_day ADD COLUMN conversion_spend INTEGER NOT NULL DEFAULT 0;
)sql"},
    // Reports (issue 16): each publisher's payout rule (revenue share of spend, or a guaranteed
    // CPM per served impression) and the index reports by campaign read hourly rollups with.
    {.sqlite = 8, .sqlite_sql = R"sql(
ALTER TABLE publishers ADD COLUMN payout_model TEXT NOT NULL DEFAULT 'revshare'
  CHECK (payout_model IN ('revshare', 'cpm'));
ALTER TABLE publishers ADD COLUMN payout_percent REAL NOT NULL DEFAULT 70
  CHECK (payout_percent >= 0 AND payout_percent <= 100);
ALTER TABLE publishers ADD COLUMN payout_cpm_micros INTEGER NOT NULL DEFAULT 0
  CHECK (payout_cpm_micros >= 0);
CREATE INDEX rollups_hour_by_campaign ON rollups_hour (campaign_id, bucket);
)sql"},
    // Accounts and creative review (issue 16): users with one role, their bearer tokens
    // (SHA-256 at rest), console sessions (hashed id, CSRF token, expiry), and the review state
    // of ads (existing ads stay approved).
    {.sqlite = 9, .sqlite_sql = R"sql(
CREATE TABLE users (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  email         TEXT NOT NULL,
  email_key     TEXT NOT NULL UNIQUE,  -- lower-cased email
  password_hash TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('operator', 'publisher', 'advertiser')),
  publisher_id  INTEGER REFERENCES publishers (id) ON DELETE CASCADE,
  community_id  INTEGER REFERENCES communities (id) ON DELETE CASCADE,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  CHECK ((role = 'operator' AND publisher_id IS NULL AND community_id IS NULL) OR
         (role = 'publisher' AND publisher_id IS NOT NULL AND community_id IS NULL) OR
         (role = 'advertiser' AND community_id IS NOT NULL AND publisher_id IS NULL))
);
CREATE TABLE user_tokens (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  hash       BLOB NOT NULL UNIQUE,
  prefix     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE INDEX user_tokens_by_prefix ON user_tokens (prefix);
CREATE INDEX user_tokens_by_user ON user_tokens (user_id, id);
CREATE TABLE console_sessions (
  id_hash      BLOB PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX console_sessions_by_user ON console_sessions (user_id);
ALTER TABLE ads ADD COLUMN review_status TEXT NOT NULL DEFAULT 'approved'
  CHECK (review_status IN ('approved', 'pending', 'rejected'));
ALTER TABLE ads ADD COLUMN review_reason TEXT NOT NULL DEFAULT '';
)sql"},
    // Click commits (issue 15): attribution looks up billed clicks only, so its index holds
    // those alone; a duplicate or expired click no longer writes an entry there.
    {.sqlite = 10, .sqlite_sql = R"sql(
DROP INDEX clicks_by_person;
CREATE INDEX clicks_by_person ON clicks (campaign_id, person, clicked_at) WHERE status = 'billed';
)sql"},
    // Per-publisher rate limits (issue 18): requests per second and burst; NULL = unlimited.
    {.sqlite = 11, .sqlite_sql = R"sql(
ALTER TABLE publisher_controls ADD COLUMN rate_per_second REAL CHECK (rate_per_second > 0);
ALTER TABLE publisher_controls ADD COLUMN rate_burst INTEGER CHECK (rate_burst > 0);
)sql"},
    // Invalid traffic (issue 18): a click status `invalid` with its reason and the client's
    // truncated address (the status CHECK changes, so the table is rebuilt with its ids and
    // AUTOINCREMENT sequence: the rollup mark relies on ids only growing), invalid clicks in the
    // rollups and per reason per day, and invalid advertiser events (stored with their reason,
    // counted apart from the valid ones).
    {.sqlite = 12, .sqlite_sql = R"sql(
CREATE TABLE clicks_new (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  decision_id     BLOB NOT NULL,     -- 16 bytes (UUIDv7)
  publisher_id    INTEGER NOT NULL,
  ad_unit_id      TEXT NOT NULL,
  campaign_id     INTEGER NOT NULL,
  ad_id           INTEGER NOT NULL,
  arm             TEXT NOT NULL,
  served_at       INTEGER NOT NULL,
  clicked_at      INTEGER NOT NULL,
  price_micros    INTEGER NOT NULL,  -- billed amount (0 unless billed)
  person          INTEGER NOT NULL,  -- keyed digest of the wallet set, never a wallet
  earlier_variant INTEGER NOT NULL CHECK (earlier_variant IN (0, 1)),
  status          TEXT NOT NULL CHECK (status IN ('billed', 'duplicate', 'expired', 'invalid')),
  reason          TEXT NOT NULL DEFAULT '',  -- invalid only: the failed check
  ip              TEXT NOT NULL DEFAULT ''   -- client address truncated to /24 or /48
);
INSERT INTO clicks_new (id, decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm,
                        served_at, clicked_at, price_micros, person, earlier_variant, status)
  SELECT id, decision_id, publisher_id, ad_unit_id, campaign_id, ad_id, arm, served_at,
         clicked_at, price_micros, person, earlier_variant, status FROM clicks ORDER BY id;
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'clicks_new', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'clicks_new');
UPDATE sqlite_sequence SET seq = max(seq, COALESCE((SELECT seq FROM sqlite_sequence
                                                    WHERE name = 'clicks'), 0))
  WHERE name = 'clicks_new';
DROP TABLE clicks;
ALTER TABLE clicks_new RENAME TO clicks;
CREATE UNIQUE INDEX clicks_billed_once ON clicks (decision_id) WHERE status = 'billed';
CREATE INDEX clicks_by_campaign ON clicks (campaign_id, id);
CREATE INDEX clicks_by_publisher ON clicks (publisher_id, id);
CREATE INDEX clicks_by_time ON clicks (clicked_at);
CREATE INDEX clicks_by_decision ON clicks (decision_id);
CREATE INDEX clicks_by_person ON clicks (campaign_id, person, clicked_at) WHERE status = 'billed';
ALTER TABLE rollups_minute ADD COLUMN invalid_clicks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_hour ADD COLUMN invalid_clicks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_day ADD COLUMN invalid_clicks INTEGER NOT NULL DEFAULT 0;
CREATE TABLE invalid_clicks_day (
  bucket       INTEGER NOT NULL,  -- Unix seconds of the day's start
  publisher_id INTEGER NOT NULL,
  campaign_id  INTEGER NOT NULL,
  reason       TEXT NOT NULL,
  clicks       INTEGER NOT NULL,
  PRIMARY KEY (campaign_id, bucket, publisher_id, reason)
) WITHOUT ROWID;
CREATE INDEX invalid_clicks_day_by_publisher ON invalid_clicks_day (publisher_id, bucket);
ALTER TABLE advertiser_events ADD COLUMN invalid_reason TEXT;  -- NULL: valid
CREATE TABLE advertiser_event_invalid_counts (
  community_id INTEGER NOT NULL,
  campaign_id  INTEGER NOT NULL,  -- 0: no click linked
  reason       TEXT NOT NULL,
  count        INTEGER NOT NULL,
  PRIMARY KEY (community_id, campaign_id, reason)
) WITHOUT ROWID;
)sql"},
    // Invalid served impressions (issue 18): counted apart from the valid fills in the rollups
    // and per reason per day.
    {.sqlite = 13, .sqlite_sql = R"sql(
ALTER TABLE rollups_minute ADD COLUMN invalid_fills INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_hour ADD COLUMN invalid_fills INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_day ADD COLUMN invalid_fills INTEGER NOT NULL DEFAULT 0;
CREATE TABLE invalid_impressions_day (
  bucket       INTEGER NOT NULL,  -- Unix seconds of the day's start
  publisher_id INTEGER NOT NULL,
  campaign_id  INTEGER NOT NULL,
  reason       TEXT NOT NULL,
  impressions  INTEGER NOT NULL,
  PRIMARY KEY (campaign_id, bucket, publisher_id, reason)
) WITHOUT ROWID;
CREATE INDEX invalid_impressions_day_by_publisher ON invalid_impressions_day (publisher_id, bucket);
)sql"},
    // --- Cluster mode's first schema (PostgreSQL 1-9): what SQLite had by then, and the
    // cluster's own tables.
    {.postgres = 1, .postgres_sql = R"sql(
-- Decision counters per campaign (issue 4), absolute values upserted by each serving process.
CREATE TABLE campaign_counters (
  campaign_id bigint PRIMARY KEY,
  total_spend_micros bigint NOT NULL,
  impressions bigint NOT NULL,
  clicks bigint NOT NULL,
  conversions bigint NOT NULL,
  day bigint NOT NULL,
  day_spend_micros bigint NOT NULL,
  hour bigint NOT NULL,
  hour_spend_micros bigint NOT NULL
);
-- Identity erasures (issue 20): keyed wallet digests (uint64 stored as bigint), one row per
-- digest; seq orders them for the nodes that follow the list.
CREATE TABLE identity_meta (
  name text PRIMARY KEY,
  value bytea NOT NULL
);
CREATE SEQUENCE identity_erasure_seq;
CREATE TABLE identity_erasures (
  digest bigint PRIMARY KEY,
  erased_at bigint NOT NULL,
  seq bigint NOT NULL UNIQUE
);
CREATE INDEX identity_erasures_erased_at ON identity_erasures (erased_at);
)sql"},
    {.postgres = 2, .postgres_sql = R"sql(
-- Versions of what nodes follow (inventory, ...): bumped in the writing transaction, which
-- also NOTIFYs adserver_changes (store/postgres/pg_change_feed.h).
CREATE TABLE change_versions (
  name text PRIMARY KEY,
  version bigint NOT NULL
);
)sql"},
    {.postgres = 3, .postgres_sql = R"sql(
-- The inventory (issue 17 item 3): the tables of the SQLite adapter's inventory, same names,
-- columns and constraints (the SQL in store/sql runs on both). Booleans stay 0/1 integers and
-- list columns comma-separated text (allowed_origins a JSON array), as there.
CREATE TABLE publishers (
  id                bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name              text NOT NULL,
  allowed_origins   text NOT NULL DEFAULT '[]',
  created_at        bigint NOT NULL,
  updated_at        bigint NOT NULL,
  payout_model      text NOT NULL DEFAULT 'revshare' CHECK (payout_model IN ('revshare', 'cpm')),
  payout_percent    double precision NOT NULL DEFAULT 70
                    CHECK (payout_percent >= 0 AND payout_percent <= 100),
  payout_cpm_micros bigint NOT NULL DEFAULT 0 CHECK (payout_cpm_micros >= 0)
);
CREATE TABLE communities (
  id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name       text NOT NULL,
  logo_url   text NOT NULL DEFAULT '',
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE TABLE publisher_blocked_communities (
  publisher_id bigint NOT NULL REFERENCES publishers (id) ON DELETE CASCADE,
  community_id bigint NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
  position     bigint NOT NULL,
  PRIMARY KEY (publisher_id, community_id)
);
CREATE INDEX publisher_blocked_communities_by_community
  ON publisher_blocked_communities (community_id);
CREATE TABLE api_keys (
  id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  publisher_id bigint NOT NULL REFERENCES publishers (id) ON DELETE CASCADE,
  key_hash     bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  prefix       text NOT NULL,
  test         bigint NOT NULL CHECK (test IN (0, 1)),
  created_at   bigint NOT NULL,
  revoked_at   bigint
);
CREATE INDEX api_keys_by_publisher ON api_keys (publisher_id);
CREATE TABLE advertiser_keys (
  id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  community_id bigint NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
  key_hash     bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  prefix       text NOT NULL,
  test         bigint NOT NULL CHECK (test IN (0, 1)),
  created_at   bigint NOT NULL,
  revoked_at   bigint
);
CREATE INDEX advertiser_keys_by_community ON advertiser_keys (community_id);
CREATE TABLE projects (
  id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  slug       text NOT NULL UNIQUE,
  name       text NOT NULL,
  logo_url   text NOT NULL DEFAULT '',
  category   text NOT NULL DEFAULT '',
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE TABLE project_contracts (
  project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  chain_id   bigint NOT NULL,
  address    bytea NOT NULL CHECK (length(address) = 20),
  position   bigint NOT NULL,
  PRIMARY KEY (chain_id, address)
);
CREATE INDEX project_contracts_by_project ON project_contracts (project_id);
CREATE TABLE campaigns (
  id                  bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  community_id        bigint NOT NULL REFERENCES communities (id) ON DELETE RESTRICT,
  name                text NOT NULL,
  status              text NOT NULL CHECK (status IN ('draft', 'active', 'paused', 'ended')),
  starts_at           bigint,
  ends_at             bigint,
  pricing_model       text NOT NULL CHECK (pricing_model IN ('CPM', 'CPC', 'CPA')),
  bid_micros          bigint NOT NULL,
  total_budget_micros bigint,
  daily_budget_micros bigint,
  chains              text NOT NULL DEFAULT '',
  recency_days        bigint,
  frequency_cap_count bigint,
  frequency_cap_hours bigint,
  created_at          bigint NOT NULL,
  updated_at          bigint NOT NULL,
  CHECK ((frequency_cap_count IS NULL) = (frequency_cap_hours IS NULL))
);
CREATE INDEX campaigns_by_community ON campaigns (community_id);
CREATE TABLE campaign_projects (
  campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE RESTRICT,
  kind        text NOT NULL CHECK (kind IN ('target', 'exclude')),
  position    bigint NOT NULL,
  PRIMARY KEY (campaign_id, project_id, kind)
);
CREATE INDEX campaign_projects_by_project ON campaign_projects (project_id);
CREATE TABLE ads (
  id                 bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  campaign_id        bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  headline           text NOT NULL,
  content            text NOT NULL,
  cta_url            text NOT NULL,
  cta_label          text NOT NULL,
  image_landscape    text NOT NULL DEFAULT '',
  image_long_banner  text NOT NULL DEFAULT '',
  image_short_banner text NOT NULL DEFAULT '',
  weight             bigint NOT NULL,
  status             text NOT NULL CHECK (status IN ('active', 'paused')),
  created_at         bigint NOT NULL,
  updated_at         bigint NOT NULL,
  review_status      text NOT NULL DEFAULT 'approved'
                     CHECK (review_status IN ('approved', 'pending', 'rejected')),
  review_reason      text NOT NULL DEFAULT ''
);
CREATE INDEX ads_by_campaign ON ads (campaign_id);
CREATE TABLE publisher_controls (
  publisher_id        bigint PRIMARY KEY REFERENCES publishers (id) ON DELETE CASCADE,
  allowed_communities text NOT NULL DEFAULT '',
  category_opt_ins    text NOT NULL DEFAULT '',
  floor_cpm_micros    bigint,
  ab_arms             text NOT NULL DEFAULT '',
  rate_per_second     double precision CHECK (rate_per_second > 0),
  rate_burst          bigint CHECK (rate_burst > 0)
);
CREATE TABLE campaign_controls (
  campaign_id                     bigint PRIMARY KEY REFERENCES campaigns (id) ON DELETE CASCADE,
  category                        text NOT NULL DEFAULT '',
  allowed_publishers              text NOT NULL DEFAULT '',
  pacing                          text NOT NULL DEFAULT 'even' CHECK (pacing IN ('even', 'asap')),
  advertiser_project_id           bigint,
  exclude_existing_users          bigint NOT NULL DEFAULT 0
                                  CHECK (exclude_existing_users IN (0, 1)),
  conversion_projects             text,
  conversion_kind                 text NOT NULL DEFAULT 'any'
                                  CHECK (conversion_kind IN ('any', 'new', 'returning')),
  conversion_returning_after_days bigint NOT NULL DEFAULT 45,
  conversion_window_days          bigint NOT NULL DEFAULT 14,
  conversion_once_per_person      bigint NOT NULL DEFAULT 1
);
CREATE TABLE ad_controls (
  ad_id  bigint PRIMARY KEY REFERENCES ads (id) ON DELETE CASCADE,
  ab_arm text NOT NULL DEFAULT ''
);
)sql"},
    {.postgres = 4, .postgres_sql = R"sql(
-- Accounts (issue 16): users, their API tokens and console sessions, as in the SQLite adapter.
CREATE TABLE users (
  id            bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  email         text NOT NULL,
  email_key     text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  role          text NOT NULL CHECK (role IN ('operator', 'publisher', 'advertiser')),
  publisher_id  bigint REFERENCES publishers (id) ON DELETE CASCADE,
  community_id  bigint REFERENCES communities (id) ON DELETE CASCADE,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  CHECK ((role = 'operator' AND publisher_id IS NULL AND community_id IS NULL) OR
         (role = 'publisher' AND publisher_id IS NOT NULL AND community_id IS NULL) OR
         (role = 'advertiser' AND community_id IS NOT NULL AND publisher_id IS NULL))
);
CREATE TABLE user_tokens (
  id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  hash       bytea NOT NULL UNIQUE,
  prefix     text NOT NULL,
  created_at bigint NOT NULL,
  revoked_at bigint
);
CREATE INDEX user_tokens_by_prefix ON user_tokens (prefix);
CREATE INDEX user_tokens_by_user ON user_tokens (user_id, id);
CREATE TABLE console_sessions (
  id_hash      bytea PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  created_at   bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  expires_at   bigint NOT NULL
);
CREATE INDEX console_sessions_by_user ON console_sessions (user_id);
)sql"},
    {.postgres = 5, .postgres_sql = R"sql(
-- Events (issue 17 item 7): the SQLite adapter's event tables (its migrations 5, 6, 7, 8, 12
-- and 13 as they leave them), same names, columns and constraints, so the SQL in store/sql runs
-- on both. Click ids come from a sequence without a per-session cache (ids grow in the order
-- nodes insert; click inserts are serialised, so they also commit in that order: the rollup
-- mark relies on it).
CREATE TABLE clicks (
  id              bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  decision_id     bytea NOT NULL,   -- 16 bytes (UUIDv7)
  publisher_id    bigint NOT NULL,
  ad_unit_id      text NOT NULL,
  campaign_id     bigint NOT NULL,
  ad_id           bigint NOT NULL,
  arm             text NOT NULL,
  served_at       bigint NOT NULL,
  clicked_at      bigint NOT NULL,
  price_micros    bigint NOT NULL,  -- billed amount (0 unless billed)
  person          bigint NOT NULL,  -- keyed digest of the wallet set, never a wallet
  earlier_variant bigint NOT NULL CHECK (earlier_variant IN (0, 1)),
  status          text NOT NULL CHECK (status IN ('billed', 'duplicate', 'expired', 'invalid')),
  reason          text NOT NULL DEFAULT '',  -- invalid only: the failed check
  ip              text NOT NULL DEFAULT ''   -- client address truncated to /24 or /48
);
-- A decision bills at most one click, whichever node stores it.
CREATE UNIQUE INDEX clicks_billed_once ON clicks (decision_id) WHERE status = 'billed';
CREATE INDEX clicks_by_campaign ON clicks (campaign_id, id);
CREATE INDEX clicks_by_publisher ON clicks (publisher_id, id);
CREATE INDEX clicks_by_time ON clicks (clicked_at);
CREATE INDEX clicks_by_decision ON clicks (decision_id);
CREATE INDEX clicks_by_person ON clicks (campaign_id, person, clicked_at) WHERE status = 'billed';

CREATE TABLE rollups_minute (
  bucket           bigint NOT NULL,  -- Unix seconds of the bucket's start
  publisher_id     bigint NOT NULL,
  ad_unit_id       text NOT NULL,
  campaign_id      bigint NOT NULL,  -- 0: requests that filled nothing
  ad_id            bigint NOT NULL,
  arm              text NOT NULL,
  requests         bigint NOT NULL DEFAULT 0,
  fills            bigint NOT NULL DEFAULT 0,
  no_fills         bigint NOT NULL DEFAULT 0,
  errors           bigint NOT NULL DEFAULT 0,
  impression_spend bigint NOT NULL DEFAULT 0,  -- micros
  clicks           bigint NOT NULL DEFAULT 0,  -- billed
  duplicate_clicks bigint NOT NULL DEFAULT 0,
  expired_clicks   bigint NOT NULL DEFAULT 0,
  click_spend      bigint NOT NULL DEFAULT 0,  -- micros
  conversions      bigint NOT NULL DEFAULT 0,
  conversion_spend bigint NOT NULL DEFAULT 0,
  invalid_clicks   bigint NOT NULL DEFAULT 0,
  invalid_fills    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm)
);
CREATE TABLE rollups_hour (LIKE rollups_minute INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  PRIMARY KEY (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm));
CREATE TABLE rollups_day (LIKE rollups_minute INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  PRIMARY KEY (bucket, publisher_id, ad_unit_id, campaign_id, ad_id, arm));
CREATE INDEX rollups_day_by_campaign ON rollups_day (campaign_id, bucket);
CREATE INDEX rollups_day_by_publisher ON rollups_day (publisher_id, bucket);
CREATE INDEX rollups_hour_by_publisher ON rollups_hour (publisher_id, bucket);
CREATE INDEX rollups_hour_by_campaign ON rollups_hour (campaign_id, bucket);
CREATE TABLE invalid_clicks_day (
  bucket       bigint NOT NULL,  -- Unix seconds of the day's start
  publisher_id bigint NOT NULL,
  campaign_id  bigint NOT NULL,
  reason       text NOT NULL,
  clicks       bigint NOT NULL,
  PRIMARY KEY (campaign_id, bucket, publisher_id, reason)
);
CREATE INDEX invalid_clicks_day_by_publisher ON invalid_clicks_day (publisher_id, bucket);
CREATE TABLE invalid_impressions_day (
  bucket       bigint NOT NULL,  -- Unix seconds of the day's start
  publisher_id bigint NOT NULL,
  campaign_id  bigint NOT NULL,
  reason       text NOT NULL,
  impressions  bigint NOT NULL,
  PRIMARY KEY (campaign_id, bucket, publisher_id, reason)
);
CREATE INDEX invalid_impressions_day_by_publisher ON invalid_impressions_day (publisher_id, bucket);

-- The installation's event secrets (bytes). The click rollup mark, which SQLite keeps in
-- events_meta with them (untyped there), is a bigint in events_marks.
CREATE TABLE events_meta (
  name  text PRIMARY KEY,
  value bytea NOT NULL
);
CREATE TABLE events_marks (
  name  text PRIMARY KEY,
  value bigint NOT NULL
);
INSERT INTO events_marks (name, value) VALUES ('clicks_rolled_up_to', 0);

CREATE TABLE conversions (
  id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  campaign_id  bigint NOT NULL,
  ad_id        bigint NOT NULL,
  publisher_id bigint NOT NULL,
  ad_unit_id   text NOT NULL,
  arm          text NOT NULL,
  decision_id  bytea NOT NULL,
  wallet       bytea NOT NULL,   -- 20 bytes: the wallet of the onchain transaction
  person       bigint NOT NULL,  -- keyed digest of the exposed wallet set
  chain_id     bigint NOT NULL,
  tx_hash      bytea NOT NULL,
  log_index    bigint NOT NULL,  -- -1: a transaction to the contract, no log
  block_number bigint NOT NULL,
  block_hash   bytea NOT NULL,
  block_time   bigint NOT NULL,
  touch        text NOT NULL CHECK (touch IN ('click', 'view')),
  exposed_at   bigint NOT NULL,  -- the attributed serve (or click) time
  price_micros bigint NOT NULL,  -- billed CPA (0 for other models)
  confirmed    bigint NOT NULL CHECK (confirmed IN (0, 1)),
  status       text NOT NULL CHECK (status IN ('billed', 'reorged')),
  recorded_at  bigint NOT NULL,
  reverted_at  bigint
);
-- A transaction (log) counts once per campaign while its block stands.
CREATE UNIQUE INDEX conversions_once ON conversions (chain_id, tx_hash, log_index, campaign_id)
  WHERE status = 'billed';
CREATE INDEX conversions_by_campaign ON conversions (campaign_id, id);
CREATE INDEX conversions_by_publisher ON conversions (publisher_id, id);
CREATE INDEX conversions_by_person ON conversions (campaign_id, person, block_time);
CREATE INDEX conversions_by_block ON conversions (chain_id, block_number);

CREATE TABLE advertiser_events (
  id             bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  community_id   bigint NOT NULL,
  key_id         bigint NOT NULL,
  name           text NOT NULL,
  url            text,              -- NULL: none sent
  decision_id    bytea CHECK (decision_id IS NULL OR length(decision_id) = 16),  -- from spclid
  campaign_id    bigint,            -- the campaign of the decision's click; NULL: none
  person         bigint NOT NULL,   -- keyed digest of the wallet set, never a wallet
  created_at     bigint NOT NULL,
  invalid_reason text               -- NULL: valid
);
CREATE INDEX advertiser_events_by_campaign ON advertiser_events (campaign_id, id);
CREATE INDEX advertiser_events_by_community ON advertiser_events (community_id, id);
CREATE INDEX advertiser_events_by_time ON advertiser_events (created_at);
CREATE TABLE advertiser_event_counts (
  community_id bigint NOT NULL,
  campaign_id  bigint NOT NULL,  -- 0: not linked to a campaign
  name         text NOT NULL,
  count        bigint NOT NULL,
  PRIMARY KEY (community_id, campaign_id, name)
);
CREATE INDEX advertiser_event_counts_by_campaign ON advertiser_event_counts (campaign_id);
CREATE TABLE advertiser_event_invalid_counts (
  community_id bigint NOT NULL,
  campaign_id  bigint NOT NULL,  -- 0: no click linked
  reason       text NOT NULL,
  count        bigint NOT NULL,
  PRIMARY KEY (community_id, campaign_id, reason)
);
)sql"},
    {.postgres = 6, .postgres_sql = R"sql(
-- Wallet activity (issue 17 item 4), as the SQLite adapter's activity table: the source of truth
-- of every node's LMDB replica (cluster/activity_replica.h). Ids are positive, as the LMDB index
-- needs them.
CREATE TABLE wallet_activity (
  wallet     bytea NOT NULL CHECK (length(wallet) = 20),
  project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  chain_id   bigint NOT NULL CHECK (chain_id > 0),
  last_seen  bigint NOT NULL,
  count      bigint NOT NULL,
  PRIMARY KEY (wallet, project_id, chain_id)
);
CREATE INDEX wallet_activity_by_project ON wallet_activity (project_id);
-- The change log replicas follow: the resulting values of every changed row (last_seen and
-- count NULL: the row was deleted), whatever changed it (a project's cascade included: the
-- triggers below write it). Writers of wallet_activity, and deleters of projects, take the
-- advisory lock 7017861054799635316 ("adsrvact") before their first row and hold it to commit,
-- so seqs commit in order: a follower reading past seq S never misses one committing later.
-- changed_at: the server's clock at logging (Unix seconds), so it grows with seq.
CREATE SEQUENCE activity_change_seq;
CREATE TABLE activity_changes (
  seq        bigint PRIMARY KEY,
  wallet     bytea NOT NULL,
  project_id bigint NOT NULL,
  chain_id   bigint NOT NULL,
  last_seen  bigint,
  count      bigint,
  changed_at bigint NOT NULL
);
CREATE INDEX activity_changes_by_time ON activity_changes (changed_at);
-- The newest seq pruned from the log (or skipped by a TRUNCATE): a follower behind it
-- bootstraps again.
CREATE TABLE activity_log (
  id             int PRIMARY KEY CHECK (id = 1),
  pruned_through bigint NOT NULL
);
INSERT INTO activity_log (id, pruned_through) VALUES (1, 0);
CREATE FUNCTION activity_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7017861054799635316);
  RETURN NULL;
END $$;
-- After logging n rows: bumps the "activity" change version and notifies (pg_change_feed.h).
CREATE FUNCTION activity_notify(changed_count bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF changed_count = 0 THEN RETURN; END IF;
  INSERT INTO change_versions (name, version) VALUES ('activity', 1)
    ON CONFLICT (name) DO UPDATE SET version = change_versions.version + 1;
  PERFORM pg_notify('adserver_changes', 'activity');
END $$;
CREATE FUNCTION activity_log_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(7017861054799635316);
  INSERT INTO activity_changes (seq, wallet, project_id, chain_id, last_seen, count, changed_at)
    SELECT nextval('activity_change_seq'), r.wallet, r.project_id, r.chain_id, r.last_seen,
           r.count, extract(epoch FROM clock_timestamp())::bigint
    FROM (SELECT * FROM new_rows ORDER BY wallet, project_id, chain_id) r;
  GET DIAGNOSTICS n = ROW_COUNT;
  PERFORM activity_notify(n);
  RETURN NULL;
END $$;
CREATE FUNCTION activity_log_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n bigint; m bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(7017861054799635316);
  -- A row whose key changed: the old key is gone.
  INSERT INTO activity_changes (seq, wallet, project_id, chain_id, last_seen, count, changed_at)
    SELECT nextval('activity_change_seq'), o.wallet, o.project_id, o.chain_id, NULL, NULL,
           extract(epoch FROM clock_timestamp())::bigint
    FROM old_rows o
    WHERE NOT EXISTS (SELECT 1 FROM new_rows r WHERE r.wallet = o.wallet AND
                      r.project_id = o.project_id AND r.chain_id = o.chain_id);
  GET DIAGNOSTICS m = ROW_COUNT;
  INSERT INTO activity_changes (seq, wallet, project_id, chain_id, last_seen, count, changed_at)
    SELECT nextval('activity_change_seq'), r.wallet, r.project_id, r.chain_id, r.last_seen,
           r.count, extract(epoch FROM clock_timestamp())::bigint
    FROM (SELECT * FROM new_rows ORDER BY wallet, project_id, chain_id) r;
  GET DIAGNOSTICS n = ROW_COUNT;
  PERFORM activity_notify(n + m);
  RETURN NULL;
END $$;
CREATE FUNCTION activity_log_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(7017861054799635316);
  INSERT INTO activity_changes (seq, wallet, project_id, chain_id, last_seen, count, changed_at)
    SELECT nextval('activity_change_seq'), o.wallet, o.project_id, o.chain_id, NULL, NULL,
           extract(epoch FROM clock_timestamp())::bigint
    FROM (SELECT * FROM old_rows ORDER BY wallet, project_id, chain_id) o;
  GET DIAGNOSTICS n = ROW_COUNT;
  PERFORM activity_notify(n);
  RETURN NULL;
END $$;
-- A TRUNCATE cannot be logged row by row: every follower bootstraps again.
CREATE FUNCTION activity_log_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7017861054799635316);
  DELETE FROM activity_changes;
  UPDATE activity_log SET pruned_through = nextval('activity_change_seq');
  PERFORM activity_notify(1);
  RETURN NULL;
END $$;
CREATE TRIGGER wallet_activity_lock BEFORE INSERT OR UPDATE OR DELETE ON wallet_activity
  FOR EACH STATEMENT EXECUTE FUNCTION activity_lock();
CREATE TRIGGER projects_activity_lock BEFORE DELETE ON projects
  FOR EACH STATEMENT EXECUTE FUNCTION activity_lock();
CREATE TRIGGER wallet_activity_inserted AFTER INSERT ON wallet_activity
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION activity_log_inserted();
CREATE TRIGGER wallet_activity_updated AFTER UPDATE ON wallet_activity
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION activity_log_updated();
CREATE TRIGGER wallet_activity_deleted AFTER DELETE ON wallet_activity
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION activity_log_deleted();
CREATE TRIGGER wallet_activity_truncated BEFORE TRUNCATE ON wallet_activity
  FOR EACH STATEMENT EXECUTE FUNCTION activity_log_truncated();
)sql"},
    {.postgres = 7, .postgres_sql = R"sql(
-- Decision counters per node (cluster mode, issue 17): each node upserts the absolute values of
-- what it served and billed; the cluster's counters are the sum over nodes.
CREATE TABLE node_campaign_counters (
  node_id text NOT NULL,
  campaign_id bigint NOT NULL,
  total_spend_micros bigint NOT NULL,
  impressions bigint NOT NULL,
  clicks bigint NOT NULL,
  conversions bigint NOT NULL,
  day bigint NOT NULL,
  day_spend_micros bigint NOT NULL,
  hour bigint NOT NULL,
  hour_spend_micros bigint NOT NULL,
  PRIMARY KEY (node_id, campaign_id)
);
CREATE INDEX node_campaign_counters_by_campaign ON node_campaign_counters (campaign_id);
)sql"},
    {.postgres = 8, .postgres_sql = R"sql(
-- The live indexer's ledger per chain (cluster mode, issue 17 item 4; store/chain_ledger.h), so
-- that whichever node leads a chain's indexer continues where the last leader stopped: the next
-- block to apply, the last 64 applied blocks (reorg checks) and, for each, the value before it
-- of every activity entry it changed (last_seen and count NULL: the entry was absent), written
-- in the same transaction as the block's activity.
CREATE TABLE chain_checkpoints (
  chain_id   bigint PRIMARY KEY CHECK (chain_id > 0),
  next_block bigint NOT NULL CHECK (next_block >= 0)
);
CREATE TABLE chain_blocks (
  chain_id    bigint NOT NULL REFERENCES chain_checkpoints (chain_id) ON DELETE CASCADE,
  number      bigint NOT NULL,
  hash        text NOT NULL,
  parent_hash text NOT NULL,
  PRIMARY KEY (chain_id, number)
);
CREATE TABLE chain_block_undo (
  chain_id   bigint NOT NULL,
  number     bigint NOT NULL,
  wallet     bytea NOT NULL,
  project_id bigint NOT NULL,
  last_seen  bigint,
  count      bigint,
  PRIMARY KEY (chain_id, number, wallet, project_id),
  FOREIGN KEY (chain_id, number) REFERENCES chain_blocks (chain_id, number) ON DELETE CASCADE
);
)sql"},
    {.postgres = 9, .postgres_sql = R"sql(
-- Exposures of every node (cluster mode, issue 17; store/postgres/postgres_exposure_store.h):
-- appended, one row per (wallet, campaign, decision), so that a conversion is attributed to an
-- ad served by any node. The primary key serves a pair's newest rows by a backward scan;
-- exposure_sweeps: when a node last started an expiry sweep (one at a time across the cluster).
CREATE TABLE exposures (
  wallet          bytea NOT NULL,
  campaign_id     bigint NOT NULL,
  exposed_at      bigint NOT NULL,
  decision_id     bytea NOT NULL,
  ad_id           bigint NOT NULL,
  publisher_id    bigint NOT NULL,
  person          bigint NOT NULL,
  arm             bytea NOT NULL,
  ad_unit_id      bytea NOT NULL,
  prior_last_seen bigint NOT NULL,
  PRIMARY KEY (wallet, campaign_id, exposed_at, decision_id)
);
CREATE TABLE exposure_sweeps (
  id         int PRIMARY KEY CHECK (id = 1),
  started_at bigint NOT NULL
);
INSERT INTO exposure_sweeps (id, started_at) VALUES (1, 0);
)sql"},
    // --- Since then each change lands in both engines in one row (tables only a cluster
    // has: PostgreSQL only).
    // Conversions a reorg took back, by when: how a server follows the reverts another process
    // (the CLI's indexer) makes (SqlEvents::ReorgedConversionsSince).
    {.sqlite = 14, .postgres = 10, .sql = R"sql(
CREATE INDEX conversions_reorged ON conversions (reverted_at, id) WHERE status = 'reorged';
)sql"},
    {.postgres = 11, .postgres_sql = R"sql(
-- Budget takes the CLI owes Redis for the conversions it billed (PostgresEventsStore::
-- BillConversionsTo): written in the transaction that records (or reverts) the conversions,
-- deleted once Redis has taken (given back) the amount (PostgresStore::DrainBudgetTakes). A
-- killed CLI leaves them here for the next one.
CREATE TABLE budget_takes (
  id          bigserial PRIMARY KEY,
  campaign_id bigint NOT NULL,
  micros      bigint NOT NULL,
  recorded_at bigint NOT NULL
);
)sql"},
    // The last approved creative of each ad (issue 39): what serves and where clicks go while an
    // edit waits for review. NULL when no version was approved; approved ads start with their own.
    {.sqlite = 15, .postgres = 12, .sql = R"sql(
ALTER TABLE ads ADD COLUMN approved_headline TEXT;
ALTER TABLE ads ADD COLUMN approved_content TEXT;
ALTER TABLE ads ADD COLUMN approved_cta_url TEXT;
ALTER TABLE ads ADD COLUMN approved_cta_label TEXT;
ALTER TABLE ads ADD COLUMN approved_image_landscape TEXT;
ALTER TABLE ads ADD COLUMN approved_image_long_banner TEXT;
ALTER TABLE ads ADD COLUMN approved_image_short_banner TEXT;
UPDATE ads SET approved_headline = headline, approved_content = content,
  approved_cta_url = cta_url, approved_cta_label = cta_label,
  approved_image_landscape = image_landscape, approved_image_long_banner = image_long_banner,
  approved_image_short_banner = image_short_banner
  WHERE review_status = 'approved';
)sql"},
    // Bearer tokens expire (issue 39): tokens issued before get 90 days from the upgrade.
    {.sqlite = 16,
     .postgres = 13,
     .sqlite_sql = R"sql(
ALTER TABLE user_tokens ADD COLUMN expires_at INTEGER;
UPDATE user_tokens SET expires_at = CAST(strftime('%s', 'now') AS INTEGER) + 7776000
  WHERE revoked_at IS NULL;
)sql",
     .postgres_sql = R"sql(
-- Bearer tokens expire (issue 39), as in SQLite: tokens issued before get 90 days from the upgrade.
ALTER TABLE user_tokens ADD COLUMN expires_at bigint;
UPDATE user_tokens SET expires_at = extract(epoch from now())::bigint + 7776000
  WHERE revoked_at IS NULL;
)sql"},
    // Issue 39. A project's owner community, verified by an operator (only its campaigns count
    // the project's transactions as conversions), and communities' requests for it. A
    // community's brand (name, logo) reviewed like ads: the approved one serves.
    {.sqlite = 17,
     .postgres = 14,
     .sqlite_sql = R"sql(
ALTER TABLE projects ADD COLUMN owner_community_id INTEGER
  REFERENCES communities (id) ON DELETE SET NULL;
CREATE TABLE project_ownership_requests (
  project_id   INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  community_id INTEGER NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
  note         TEXT NOT NULL DEFAULT '',
  requested_at INTEGER NOT NULL,
  PRIMARY KEY (project_id, community_id)
) WITHOUT ROWID;
CREATE INDEX project_ownership_requests_by_community
  ON project_ownership_requests (community_id, project_id);
ALTER TABLE communities ADD COLUMN review_status TEXT NOT NULL DEFAULT 'approved'
  CHECK (review_status IN ('approved', 'pending', 'rejected'));
ALTER TABLE communities ADD COLUMN review_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE communities ADD COLUMN approved_name TEXT;
ALTER TABLE communities ADD COLUMN approved_logo_url TEXT;
UPDATE communities SET approved_name = name, approved_logo_url = logo_url;
)sql",
     .postgres_sql = R"sql(
-- Issue 39, as in SQLite: projects' verified owner communities and the requests for it;
-- communities' brand reviewed like ads (the approved name and logo serve).
ALTER TABLE projects ADD COLUMN owner_community_id bigint
  REFERENCES communities (id) ON DELETE SET NULL;
CREATE TABLE project_ownership_requests (
  project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  community_id bigint NOT NULL REFERENCES communities (id) ON DELETE CASCADE,
  note         text NOT NULL DEFAULT '',
  requested_at bigint NOT NULL,
  PRIMARY KEY (project_id, community_id)
);
CREATE INDEX project_ownership_requests_by_community
  ON project_ownership_requests (community_id, project_id);
ALTER TABLE communities ADD COLUMN review_status text NOT NULL DEFAULT 'approved'
  CHECK (review_status IN ('approved', 'pending', 'rejected'));
ALTER TABLE communities ADD COLUMN review_reason text NOT NULL DEFAULT '';
ALTER TABLE communities ADD COLUMN approved_name text;
ALTER TABLE communities ADD COLUMN approved_logo_url text;
UPDATE communities SET approved_name = name, approved_logo_url = logo_url;
)sql"},
    // Issue 37: a conversion attributed past its campaign's total budget is recorded
    // 'over_budget' (listed and counted, never billed). SQLite cannot change a CHECK in place:
    // the table is rebuilt (https://www.sqlite.org/lang_altertable.html, "other kinds of table
    // schema changes"), keeping every id (the AUTOINCREMENT sequence follows the copied rows).
    // The rollups count them apart (reports show them beside the billed ones).
    {.sqlite = 18,
     .postgres = 15,
     .sqlite_sql = R"sql(
CREATE TABLE conversions_new (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id      INTEGER NOT NULL,
  ad_id            INTEGER NOT NULL,
  publisher_id     INTEGER NOT NULL,
  ad_unit_id       TEXT NOT NULL,
  arm              TEXT NOT NULL,
  decision_id      BLOB NOT NULL,
  wallet           BLOB NOT NULL,
  person           INTEGER NOT NULL,
  chain_id         INTEGER NOT NULL,
  tx_hash          BLOB NOT NULL,
  log_index        INTEGER NOT NULL,
  block_number     INTEGER NOT NULL,
  block_hash       BLOB NOT NULL,
  block_time       INTEGER NOT NULL,
  touch            TEXT NOT NULL CHECK (touch IN ('click', 'view')),
  exposed_at       INTEGER NOT NULL,
  price_micros     INTEGER NOT NULL,
  confirmed        INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
  status           TEXT NOT NULL CHECK (status IN ('billed', 'reorged', 'over_budget')),
  recorded_at      INTEGER NOT NULL,
  reverted_at      INTEGER,
  reverted_seq     INTEGER  -- the revert's number, in commit order (NULL: not reverted)
);
INSERT INTO conversions_new (id, campaign_id, ad_id, publisher_id, ad_unit_id, arm, decision_id,
  wallet, person, chain_id, tx_hash, log_index, block_number, block_hash, block_time, touch,
  exposed_at, price_micros, confirmed, status, recorded_at, reverted_at)
  SELECT id, campaign_id, ad_id, publisher_id, ad_unit_id, arm, decision_id, wallet, person,
    chain_id, tx_hash, log_index, block_number, block_hash, block_time, touch, exposed_at,
    price_micros, confirmed, status, recorded_at, reverted_at FROM conversions;
DROP TABLE conversions;
ALTER TABLE conversions_new RENAME TO conversions;
CREATE UNIQUE INDEX conversions_once ON conversions (chain_id, tx_hash, log_index, campaign_id)
  WHERE status = 'billed';
CREATE INDEX conversions_by_campaign ON conversions (campaign_id, id);
CREATE INDEX conversions_by_publisher ON conversions (publisher_id, id);
CREATE INDEX conversions_by_person ON conversions (campaign_id, person, block_time);
CREATE INDEX conversions_by_block ON conversions (chain_id, block_number);
CREATE INDEX conversions_reorged ON conversions (reverted_at, id) WHERE status = 'reorged';
CREATE INDEX conversions_by_revert_seq ON conversions (reverted_seq)
  WHERE reverted_seq IS NOT NULL;
-- Where the flushed campaign_counters stand in the conversions table (issue 37): every billed
-- conversion up to conversion_id and every revert up to revert_seq is in them. Written in the
-- transaction that saves the counters; no row = unknown (counters from before).
CREATE TABLE counter_marks (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  conversion_id INTEGER NOT NULL,
  revert_seq    INTEGER NOT NULL
);
-- Issue 36 item 9: a campaign valued greedily (0) even when the server explores.
ALTER TABLE campaign_controls ADD COLUMN explore INTEGER NOT NULL DEFAULT 1
  CHECK (explore IN (0, 1));
ALTER TABLE rollups_minute ADD COLUMN over_budget_conversions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_hour ADD COLUMN over_budget_conversions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups_day ADD COLUMN over_budget_conversions INTEGER NOT NULL DEFAULT 0;
)sql",
     .postgres_sql = R"sql(
-- Issue 37, as in SQLite: a conversion attributed past its campaign's total budget is recorded
-- 'over_budget' (listed and counted, never billed).
ALTER TABLE conversions DROP CONSTRAINT conversions_status_check;
ALTER TABLE conversions ADD CONSTRAINT conversions_status_check
  CHECK (status IN ('billed', 'reorged', 'over_budget'));
ALTER TABLE conversions ADD COLUMN reverted_seq bigint;
CREATE INDEX conversions_by_revert_seq ON conversions (reverted_seq)
  WHERE reverted_seq IS NOT NULL;
-- Issue 36 item 9, as in SQLite: a campaign valued greedily (0) even when the server explores.
ALTER TABLE campaign_controls ADD COLUMN explore bigint NOT NULL DEFAULT 1
  CHECK (explore IN (0, 1));
ALTER TABLE rollups_minute ADD COLUMN over_budget_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE rollups_hour ADD COLUMN over_budget_conversions bigint NOT NULL DEFAULT 0;
ALTER TABLE rollups_day ADD COLUMN over_budget_conversions bigint NOT NULL DEFAULT 0;
)sql"},
    // Issue 37 item 3: the node that billed a click or a conversion, and the node that undid a
    // conversion (cluster mode; the events tables' SQL is shared, so the columns exist here
    // too and stay NULL: the embedded server's counters are reconciled with counter_marks).
    {.sqlite = 19,
     .postgres = 16,
     .sqlite_sql = R"sql(
ALTER TABLE clicks ADD COLUMN node_id TEXT;
ALTER TABLE conversions ADD COLUMN node_id TEXT;
ALTER TABLE conversions ADD COLUMN reverted_by TEXT;
)sql",
     .postgres_sql = R"sql(
-- Issue 37 item 3: each node's counters reconcile with the events it billed. A click or
-- conversion records the node that billed it (NULL: the CLI, or a click a node buffered while
-- PostgreSQL was away, counted when it was buffered), a revert the node that undid it; each
-- counters flush saves, in its transaction, the node's marks: every click and conversion the
-- node billed up to click_id and conversion_id, and every revert it made up to revert_seq, is
-- in its node_campaign_counters rows. A node starting adds what it billed past its marks.
ALTER TABLE clicks ADD COLUMN node_id text;
ALTER TABLE conversions ADD COLUMN node_id text;
ALTER TABLE conversions ADD COLUMN reverted_by text;
CREATE INDEX clicks_by_node ON clicks (node_id, id) WHERE node_id IS NOT NULL;
CREATE INDEX conversions_by_node ON conversions (node_id, id) WHERE node_id IS NOT NULL;
CREATE INDEX conversions_by_reverting_node ON conversions (reverted_by, reverted_seq)
  WHERE reverted_by IS NOT NULL;
CREATE TABLE node_counter_marks (
  node_id       text PRIMARY KEY,
  click_id      bigint NOT NULL,
  conversion_id bigint NOT NULL,
  revert_seq    bigint NOT NULL,
  saved_at      bigint NOT NULL
);
)sql"},
    // Issue 40: a project's ticker (searchable) and the lists it came from, one
    // "package@version" per line.
    {.sqlite = 20, .postgres = 17, .sql = R"sql(
ALTER TABLE projects ADD COLUMN symbol TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN sources TEXT NOT NULL DEFAULT '';
)sql"},
    // Issue 38 item 3: an archived campaign or ad (archived_at: when) is never served and is
    // left out of lists unless asked for; its billed events and reports stay.
    {.sqlite = 21,
     .postgres = 18,
     .sqlite_sql = R"sql(
ALTER TABLE campaigns ADD COLUMN archived_at INTEGER;
ALTER TABLE ads ADD COLUMN archived_at INTEGER;
)sql",
     .postgres_sql = R"sql(
-- Issue 38 item 3, as in SQLite: an archived campaign or ad (archived_at: when) is never
-- served and is left out of lists unless asked for; its billed events and reports stay.
ALTER TABLE campaigns ADD COLUMN archived_at bigint;
ALTER TABLE ads ADD COLUMN archived_at bigint;
)sql"},
    {.postgres = 19, .postgres_sql = R"sql(
-- Issue 36 item 6: each node's per-placement counts (absolute impressions and clicks or
-- conversions per campaign and publisher), so that every node learns a campaign's factor on a
-- publisher from the cluster's traffic. seq (one sequence) orders the writes: a node reads the
-- others' rows written since its last read by an index range.
CREATE SEQUENCE node_placement_seq;
CREATE TABLE node_placement_counters (
  node_id      text NOT NULL,
  campaign_id  bigint NOT NULL,
  publisher_id bigint NOT NULL,
  impressions  bigint NOT NULL,
  events       bigint NOT NULL,
  seq          bigint NOT NULL,
  PRIMARY KEY (node_id, campaign_id, publisher_id)
);
CREATE INDEX node_placement_counters_by_seq ON node_placement_counters (seq);
)sql"},
    // Issue 36 item 5: per placement within a publisher, one row per node, campaign, publisher
    // and ad unit (decision::AdUnitKey of the adUnitId: a 64-bit hash, its bits as a bigint),
    // seq from the same sequence. A table of its own, so that node_placement_counters keeps its
    // key and nodes one release behind keep saving their rows during a rolling upgrade.
    {.postgres = 20, .postgres_sql = R"sql(
CREATE TABLE node_unit_counters (
  node_id      text NOT NULL,
  campaign_id  bigint NOT NULL,
  publisher_id bigint NOT NULL,
  ad_unit      bigint NOT NULL,
  impressions  bigint NOT NULL,
  events       bigint NOT NULL,
  seq          bigint NOT NULL,
  PRIMARY KEY (node_id, campaign_id, publisher_id, ad_unit)
);
CREATE INDEX node_unit_counters_by_seq ON node_unit_counters (seq);
)sql"},
};

// Every row names an engine and has SQL for each engine it names (never both `sql` and an
// engine's own); SQLite's versions are 1..N (its runner indexes by version), PostgreSQL's
// distinct (its runner applies them in order, skipping those a database has).
constexpr bool ListIsWellFormed() {
  int64_t sqlite_count = 0, sqlite_sum = 0;
  for (const Migration& m : kMigrations) {
    if (m.sqlite <= 0 && m.postgres <= 0) return false;
    if (!m.sql.empty() && (!m.sqlite_sql.empty() || !m.postgres_sql.empty())) return false;
    if (m.sqlite > 0 && m.SqlFor(Engine::kSqlite).empty()) return false;
    if (m.postgres > 0 && m.SqlFor(Engine::kPostgres).empty()) return false;
    if (m.sqlite <= 0 && !m.sqlite_sql.empty()) return false;
    if (m.postgres <= 0 && !m.postgres_sql.empty()) return false;
    if (m.sqlite > 0) {
      ++sqlite_count;
      sqlite_sum += m.sqlite;
    }
    for (const Migration& other : kMigrations) {
      if (&other == &m) continue;
      if (m.sqlite > 0 && other.sqlite == m.sqlite) return false;
      if (m.postgres > 0 && other.postgres == m.postgres) return false;
    }
  }
  // Distinct positive versions summing to 1 + ... + n are exactly 1..n.
  return sqlite_sum == sqlite_count * (sqlite_count + 1) / 2;
}
static_assert(ListIsWellFormed(), "kMigrations: see ListIsWellFormed");

std::vector<MigrationStep> StepsOf(Engine engine) {
  std::vector<MigrationStep> steps;
  for (const Migration& m : kMigrations) {
    if (m.VersionIn(engine) > 0) steps.push_back({m.VersionIn(engine), m.SqlFor(engine)});
  }
  std::sort(steps.begin(), steps.end(),
            [](const MigrationStep& a, const MigrationStep& b) { return a.version < b.version; });
  return steps;
}

}  // namespace

std::span<const MigrationStep> MigrationsFor(Engine engine) {
  static const std::vector<MigrationStep> sqlite = StepsOf(Engine::kSqlite);
  static const std::vector<MigrationStep> postgres = StepsOf(Engine::kPostgres);
  return engine == Engine::kSqlite ? sqlite : postgres;
}

}  // namespace adserver::store::sql
