#include "store/sqlite/detail/migrations.h"

#include <span>
#include <string>

#include "common/check.h"

namespace adserver::store::sqlite_detail {
namespace {

struct Migration {
  int version;
  const char* sql;
};

// Append-only: never edit a migration that has shipped; add a new one instead.
// Conventions: times are INTEGER Unix seconds, money INTEGER micros, booleans INTEGER 0/1,
// addresses BLOB(20), key hashes BLOB(32). Child rows keep the caller's list order in
// `position`. Deleting a project that campaigns reference is refused (ON DELETE RESTRICT).
constexpr Migration kMigrations[] = {
    {1, R"sql(
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
    {2, R"sql(
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
    {3, R"sql(
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
    {4, R"sql(
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
    {5, R"sql(
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
    {6, R"sql(
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
    {7, R"sql(
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
    {8, R"sql(
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
    {9, R"sql(
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
    {10, R"sql(
DROP INDEX clicks_by_person;
CREATE INDEX clicks_by_person ON clicks (campaign_id, person, clicked_at) WHERE status = 'billed';
)sql"},
    // Per-publisher rate limits (issue 18): requests per second and burst; NULL = unlimited.
    {11, R"sql(
ALTER TABLE publisher_controls ADD COLUMN rate_per_second REAL CHECK (rate_per_second > 0);
ALTER TABLE publisher_controls ADD COLUMN rate_burst INTEGER CHECK (rate_burst > 0);
)sql"},
    // Invalid traffic (issue 18): a click status `invalid` with its reason and the client's
    // truncated address (the status CHECK changes, so the table is rebuilt with its ids and
    // AUTOINCREMENT sequence: the rollup mark relies on ids only growing), invalid clicks in the
    // rollups and per reason per day, and invalid advertiser events (stored with their reason,
    // counted apart from the valid ones).
    {12, R"sql(
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
    {13, R"sql(
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
    // Conversions a reorg took back, by when: how a server follows the reverts another process
    // (the CLI's indexer) makes (SqlEvents::ReorgedConversionsSince).
    {14, R"sql(
CREATE INDEX conversions_reorged ON conversions (reverted_at, id) WHERE status = 'reorged';
)sql"},
    // The last approved creative of each ad (issue 39): what serves and where clicks go while an
    // edit waits for review. NULL when no version was approved; approved ads start with their own.
    {15, R"sql(
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
    {16, R"sql(
ALTER TABLE user_tokens ADD COLUMN expires_at INTEGER;
UPDATE user_tokens SET expires_at = CAST(strftime('%s', 'now') AS INTEGER) + 7776000
  WHERE revoked_at IS NULL;
)sql"},
    // Issue 39. A project's owner community, verified by an operator (only its campaigns count
    // the project's transactions as conversions), and communities' requests for it. A
    // community's brand (name, logo) reviewed like ads: the approved one serves.
    {17, R"sql(
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
)sql"},
    // Issue 37: a conversion attributed past its campaign's total budget is recorded
    // 'over_budget' (listed and counted, never billed). SQLite cannot change a CHECK in place:
    // the table is rebuilt (https://www.sqlite.org/lang_altertable.html, "other kinds of table
    // schema changes"), keeping every id (the AUTOINCREMENT sequence follows the copied rows).
    // The rollups count them apart (reports show them beside the billed ones).
    {18, R"sql(
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
)sql"},
    // Issue 37 item 3: the node that billed a click or a conversion, and the node that undid a
    // conversion (cluster mode; the events tables' SQL is shared, so the columns exist here
    // too and stay NULL: the embedded server's counters are reconciled with counter_marks).
    {19, R"sql(
ALTER TABLE clicks ADD COLUMN node_id TEXT;
ALTER TABLE conversions ADD COLUMN node_id TEXT;
ALTER TABLE conversions ADD COLUMN reverted_by TEXT;
)sql"},
    // Issue 40: a project's ticker (searchable) and the lists it came from, one
    // "package@version" per line.
    {20, R"sql(
ALTER TABLE projects ADD COLUMN symbol TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN sources TEXT NOT NULL DEFAULT '';
)sql"},
    // Issue 38 item 3: an archived campaign or ad (archived_at: when) is never served and is
    // left out of lists unless asked for; its billed events and reports stay.
    {21, R"sql(
ALTER TABLE campaigns ADD COLUMN archived_at INTEGER;
ALTER TABLE ads ADD COLUMN archived_at INTEGER;
)sql"},
};

Result<int> CurrentVersion(Connection& conn) {
  ADS_ASSIGN_OR_RETURN(Statement stmt,
                       conn.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
  ADS_ASSIGN_OR_RETURN(bool row, stmt.Step());
  ADS_CHECK(row) << "aggregate query returned no row";
  return static_cast<int>(stmt.Int(0));
}

// Applies the migration after the current version, if any, in one write transaction.
// Sets `done` when the database is up to date.
Status ApplyNext(Connection& conn, bool& done) {
  ADS_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn, Transaction::Kind::kWrite));
  ADS_ASSIGN_OR_RETURN(int current, CurrentVersion(conn));
  const int latest = LatestSchemaVersion();
  if (current > latest) {
    return InternalError("database schema version " + std::to_string(current) +
                         " is newer than this binary supports (" + std::to_string(latest) +
                         "); upgrade adserver");
  }
  done = current == latest;
  if (done) return txn.Commit();
  const Migration& m = kMigrations[current];  // versions are 1..N in order
  Status applied = conn.Exec(m.sql);
  if (!applied.ok()) {
    return Status(applied.code(),
                  "migration " + std::to_string(m.version) + ": " + applied.message());
  }
  {
    ADS_ASSIGN_OR_RETURN(Statement insert,
                         conn.Prepare("INSERT INTO schema_migrations (version, applied_at) "
                                      "VALUES (?1, CAST(strftime('%s', 'now') AS INTEGER))"));
    ADS_RETURN_IF_ERROR(insert.Bind(1, int64_t{m.version}).Run());
  }
  return txn.Commit();
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(std::size(kMigrations)); }

Status ApplyMigrations(Connection& conn) {
  for (size_t i = 0; i < std::size(kMigrations); ++i) {
    ADS_CHECK(kMigrations[i].version == static_cast<int>(i) + 1) << "migrations out of order";
  }
  ADS_RETURN_IF_ERROR(
      conn.Exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"));
  for (bool done = false; !done;) {
    ADS_RETURN_IF_ERROR(ApplyNext(conn, done));
  }
  return OkStatus();
}

}  // namespace adserver::store::sqlite_detail
