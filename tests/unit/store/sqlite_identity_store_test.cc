#include "store/sqlite/sqlite_identity_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace adserver::store {
namespace {

int64_t Count(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    n = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

// The IdentityStore contract (digest key, erasure order and sequence numbers) runs for SQLite and
// PostgreSQL alike in store_contract_test.cc; what is left here is SQLite's own upgrade path.

TEST(SqliteIdentityStoreTest, UpgradingDropsTheIdentityGraphTablesAndTheirRows) {
  testing::TempDir dir;
  std::string path = dir.File("adserver.db");
  {
    // The identity tables of schema version 3 (the identity-graph release), with rows.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* sql =
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT "
        "NULL);"
        "INSERT INTO schema_migrations VALUES (1, 0), (2, 0), (3, 0);"
        "CREATE TABLE identities (id BLOB PRIMARY KEY, kind INTEGER NOT NULL, last_seen INTEGER "
        "NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE identity_wallets (identity_id BLOB NOT NULL REFERENCES identities (id) ON "
        "DELETE CASCADE, wallet BLOB NOT NULL, last_seen INTEGER NOT NULL, PRIMARY KEY "
        "(identity_id, wallet)) WITHOUT ROWID;"
        "INSERT INTO identities VALUES (x'00112233445566778899aabbccddeeff', 1, 5);"
        "INSERT INTO identity_wallets VALUES (x'00112233445566778899aabbccddeeff', "
        "x'1111111111111111111111111111111111111111', 5);"
        // What later migrations alter (only the tables, for this test).
        "CREATE TABLE campaign_controls (campaign_id INTEGER PRIMARY KEY);"
        "CREATE TABLE publisher_controls (publisher_id INTEGER PRIMARY KEY);"
        "CREATE TABLE publishers (id INTEGER PRIMARY KEY);"
        "CREATE TABLE communities (id INTEGER PRIMARY KEY, name TEXT, logo_url TEXT);"
        "CREATE TABLE projects (id INTEGER PRIMARY KEY);"
        "CREATE TABLE campaigns (id INTEGER PRIMARY KEY);"
        "CREATE TABLE ads (id INTEGER PRIMARY KEY, headline TEXT, content TEXT, cta_url TEXT, "
        "cta_label TEXT, image_landscape TEXT, image_long_banner TEXT, image_short_banner "
        "TEXT);";
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto s = SqliteIdentityStore::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(Count(path,
                  "SELECT count(*) FROM sqlite_master WHERE name IN "
                  "('identities', 'identity_wallets')"),
            0);
  EXPECT_GE(Count(path, "SELECT max(version) FROM schema_migrations"), 4);
  EXPECT_EQ(Count(path, "SELECT count(*) FROM identity_erasures"), 0);
}

}  // namespace
}  // namespace adserver::store
