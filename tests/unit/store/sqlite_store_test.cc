#include "store/sqlite/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "store/sql/migrations.h"
#include "store/sqlite/detail/migrations.h"
#include "support/temp_dir.h"

namespace adserver::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kNow = 1'767'225'600;

Address Addr(uint8_t first, uint8_t last = 0) {
  Address a;
  a.bytes[0] = first;
  a.bytes[19] = last;
  return a;
}

Sha256Digest Hash(uint8_t n) {
  Sha256Digest d{};
  d.fill(n);
  return d;
}

// Record builders (designated initializers that skip fields trip -Wmissing-field-initializers).
CommunityRecord Comm(std::string name, std::string logo_url = "") {
  CommunityRecord c;
  c.name = std::move(name);
  c.logo_url = std::move(logo_url);
  return c;
}

PublisherRecord Pub(std::string name, std::vector<std::string> origins = {},
                    std::vector<Id> blocked = {}) {
  PublisherRecord p;
  p.name = std::move(name);
  p.allowed_origins = std::move(origins);
  p.blocked_communities = std::move(blocked);
  return p;
}

ApiKeyRecord Key(Id publisher_id, const Sha256Digest& hash, std::string prefix = "spk_test") {
  ApiKeyRecord k;
  k.publisher_id = publisher_id;
  k.hash = hash;
  k.prefix = std::move(prefix);
  return k;
}

ProjectRecord Proj(std::string slug, std::vector<ContractRef> contracts = {}, Id id = 0) {
  ProjectRecord p;
  p.id = id;
  p.slug = std::move(slug);
  p.name = "Project " + p.slug;
  p.contracts = std::move(contracts);
  return p;
}

FrequencyCap Cap(int32_t count, int32_t hours) {
  FrequencyCap f;
  f.count = count;
  f.hours = hours;
  return f;
}

SqliteOptions NoCreate() {
  SqliteOptions o;
  o.create_if_missing = false;
  return o;
}

// Runs one SQL statement on the file with a raw connection; returns the first column of the
// first row as an integer (or -1 when there is no row).
int64_t RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  int64_t value = -1;
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = OpenStore(); }

  std::unique_ptr<SqliteStore> OpenStore() {
    Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(path_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  CommunityRecord MakeCommunity(const std::string& name = "DeFi") {
    Result<CommunityRecord> c = store_->CreateCommunity(Comm(name, "https://logo/" + name), kNow);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }

  ProjectRecord MakeProject(const std::string& slug, std::vector<ContractRef> contracts = {}) {
    ProjectRecord p;
    p.slug = slug;
    p.name = "Project " + slug;
    p.contracts = std::move(contracts);
    Result<ProjectRecord> r = store_->CreateProject(p, kNow);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }

  CampaignRecord CampaignInput(Id community_id, std::vector<Id> targets) {
    CampaignRecord c;
    c.community_id = community_id;
    c.name = "Spring";
    c.bid_micros = 2'500'000;
    c.target_projects = std::move(targets);
    return c;
  }

  CampaignRecord MakeCampaign(Id community_id, std::vector<Id> targets) {
    Result<CampaignRecord> r = store_->CreateCampaign(CampaignInput(community_id, targets), kNow);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }

  AdRecord MakeAd(Id campaign_id, const std::string& headline = "Swap now") {
    AdRecord a;
    a.campaign_id = campaign_id;
    a.headline = headline;
    a.content = "Lowest fees";
    a.cta_url = "https://app.example/swap";
    a.cta_label = "Swap";
    Result<AdRecord> r = store_->CreateAd(a, kNow);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }

  uint64_t Counter() {
    Result<uint64_t> c = store_->ChangeCounter();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : 0;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.File("adserver.db");
  std::unique_ptr<SqliteStore> store_;
};

// ---- Open and migrations.

TEST_F(SqliteStoreTest, MigrationsAreAppliedOnceAndDataSurvivesReopen) {
  MakeProject("uniswap");
  store_.reset();
  store_ = OpenStore();
  ASSERT_NE(store_, nullptr);
  const int latest = sqlite_detail::LatestSchemaVersion();
  EXPECT_EQ(RawQuery(path_, "SELECT COUNT(*) FROM schema_migrations"), latest);
  EXPECT_EQ(RawQuery(path_, "SELECT MAX(version) FROM schema_migrations"), latest);
  EXPECT_GT(RawQuery(path_, "SELECT applied_at FROM schema_migrations"), 0);
  EXPECT_TRUE(store_->GetProjectBySlug("uniswap").ok());
}

// The one migration list (store/sql/migrations.h) as each engine's runner reads it: SQLite's
// versions are 1..N (its runner indexes by version), PostgreSQL's increase, and every text is
// a NUL-terminated literal (sqlite3_exec reads up to the NUL).
TEST(MigrationListTest, EachEngineReadsItsStepsInVersionOrder) {
  std::span<const sql::MigrationStep> sqlite = sql::MigrationsFor(sql::Engine::kSqlite);
  ASSERT_EQ(static_cast<int>(sqlite.size()), sqlite_detail::LatestSchemaVersion());
  for (size_t i = 0; i < sqlite.size(); ++i) {
    EXPECT_EQ(sqlite[i].version, static_cast<int64_t>(i) + 1);
    EXPECT_FALSE(sqlite[i].sql.empty()) << sqlite[i].version;
    EXPECT_EQ(sqlite[i].sql.data()[sqlite[i].sql.size()], '\0') << sqlite[i].version;
  }
  std::span<const sql::MigrationStep> postgres = sql::MigrationsFor(sql::Engine::kPostgres);
  ASSERT_FALSE(postgres.empty());
  for (size_t i = 0; i < postgres.size(); ++i) {
    EXPECT_FALSE(postgres[i].sql.empty()) << postgres[i].version;
    if (i > 0) {
      EXPECT_GT(postgres[i].version, postgres[i - 1].version);
    }
  }
  // A change written once for both engines reaches both: the index of reorged conversions
  // (SQLite 14, PostgreSQL 10) is the same text.
  EXPECT_EQ(sqlite[13].sql, postgres[9].sql);
  EXPECT_NE(sqlite[13].sql.find("conversions_reorged"), std::string_view::npos);
}

TEST_F(SqliteStoreTest, UsesWalMode) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_F(SqliteStoreTest, OpenRejectsNewerSchema) {
  store_.reset();
  RawQuery(path_, "INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)");
  Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInternal);
  EXPECT_THAT(s.status().message(), HasSubstr("newer"));
}

TEST_F(SqliteStoreTest, OpenMissingFileWithoutCreateIsUnavailable) {
  Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(dir_.File("missing.db"), NoCreate());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kUnavailable);
}

TEST_F(SqliteStoreTest, WriteBlockedByAnotherWriterBeyondTimeoutIsUnavailable) {
  SqliteOptions options;
  options.busy_timeout = std::chrono::milliseconds(20);
  Result<std::unique_ptr<SqliteStore>> impatient = SqliteStore::Open(path_, options);
  ASSERT_TRUE(impatient.ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Result<CommunityRecord> r = (*impatient)->CreateCommunity(Comm("x"), kNow);
  EXPECT_EQ(r.status().code(), Code::kUnavailable) << r.status().ToString();
  // Reads still work while the other connection holds the write lock (WAL).
  EXPECT_TRUE((*impatient)->ListCommunities().ok());
  EXPECT_TRUE((*impatient)->ChangeCounter().ok());
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_TRUE((*impatient)->CreateCommunity(Comm("x"), kNow).ok());
}

TEST(SqliteStoreMemoryTest, InMemoryDatabaseWorks) {
  Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(":memory:");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->CreateCommunity(Comm("x"), kNow).ok());
  Result<std::vector<CommunityRecord>> list = (*s)->ListCommunities();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 1u);
}

// ---- Publishers and keys.

TEST_F(SqliteStoreTest, PublisherRoundTripsEveryField) {
  CommunityRecord c1 = MakeCommunity("a");
  CommunityRecord c2 = MakeCommunity("b");
  PublisherRecord in;
  in.id = 999;  // ignored
  in.name = "News \"Daily\" \xc3\xa9";
  in.allowed_origins = {"https://news.example", "https://m.news.example"};
  in.blocked_communities = {c2.id, c1.id};
  Result<PublisherRecord> created = store_->CreatePublisher(in, kNow);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_NE(created->id, 999);
  EXPECT_EQ(created->name, in.name);
  EXPECT_EQ(created->allowed_origins, in.allowed_origins);
  EXPECT_EQ(created->blocked_communities, in.blocked_communities);
  EXPECT_EQ(created->created_at, kNow);
  EXPECT_EQ(created->updated_at, kNow);

  Result<PublisherRecord> got = store_->GetPublisher(created->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->name, in.name);
  EXPECT_EQ(got->allowed_origins, in.allowed_origins);
  EXPECT_EQ(got->blocked_communities, in.blocked_communities);

  PublisherRecord update = *got;
  update.name = "Renamed";
  update.allowed_origins = {};
  update.blocked_communities = {c1.id};
  Result<PublisherRecord> updated = store_->UpdatePublisher(update, kNow + 10);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->name, "Renamed");
  EXPECT_THAT(updated->allowed_origins, IsEmpty());
  EXPECT_THAT(updated->blocked_communities, ElementsAre(c1.id));
  EXPECT_EQ(updated->created_at, kNow);
  EXPECT_EQ(updated->updated_at, kNow + 10);

  Result<std::vector<PublisherRecord>> list = store_->ListPublishers();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].name, "Renamed");
}

TEST_F(SqliteStoreTest, PublisherPayoutRuleRoundTrips) {
  PublisherRecord in;
  in.name = "Default payout";
  Result<PublisherRecord> created = store_->CreatePublisher(in, kNow);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->payout.model, PayoutRule::Model::kRevshare);
  EXPECT_EQ(created->payout.percent, 70);

  PublisherRecord update = *created;
  update.payout = {.model = PayoutRule::Model::kCpm, .percent = 70, .cpm_micros = 10'500'000};
  Result<PublisherRecord> cpm = store_->UpdatePublisher(update, kNow + 1);
  ASSERT_TRUE(cpm.ok()) << cpm.status().ToString();
  EXPECT_EQ(cpm->payout.model, PayoutRule::Model::kCpm);
  EXPECT_EQ(cpm->payout.cpm_micros, 10'500'000);

  update.payout = {.model = PayoutRule::Model::kRevshare, .percent = 62.5};
  ASSERT_TRUE(store_->UpdatePublisher(update, kNow + 2).ok());
  Result<PublisherRecord> got = store_->GetPublisher(created->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->payout.model, PayoutRule::Model::kRevshare);
  EXPECT_EQ(got->payout.percent, 62.5);
  EXPECT_EQ(RawQuery(path_, "SELECT COUNT(*) FROM publishers WHERE payout_model = 'revshare'"), 1);
}

TEST_F(SqliteStoreTest, PublisherNotFound) {
  EXPECT_EQ(store_->GetPublisher(42).status().code(), Code::kNotFound);
  EXPECT_THAT(store_->GetPublisher(42).status().message(), HasSubstr("publisher 42 not found"));
  PublisherRecord p;
  p.id = 42;
  EXPECT_EQ(store_->UpdatePublisher(p, kNow).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeletePublisher(42).code(), Code::kNotFound);
}

TEST_F(SqliteStoreTest, PublisherBlockingMissingCommunityIsConflict) {
  PublisherRecord p;
  p.name = "x";
  p.blocked_communities = {77};
  Result<PublisherRecord> r = store_->CreatePublisher(p, kNow);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("community 77 does not exist"));
  EXPECT_THAT(*store_->ListPublishers(), IsEmpty());  // rolled back
}

TEST_F(SqliteStoreTest, ApiKeyLifecycle) {
  Result<PublisherRecord> pub = store_->CreatePublisher(Pub("p"), kNow);
  ASSERT_TRUE(pub.ok());
  ApiKeyRecord k;
  k.publisher_id = pub->id;
  k.hash = Hash(7);
  k.prefix = "spk_AbCd";
  k.test = true;
  Result<ApiKeyRecord> key = store_->CreateApiKey(k, kNow);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->hash, Hash(7));
  EXPECT_EQ(key->prefix, "spk_AbCd");
  EXPECT_TRUE(key->test);
  EXPECT_EQ(key->created_at, kNow);
  EXPECT_FALSE(key->revoked_at.has_value());

  Result<ApiKeyRecord> revoked = store_->RevokeApiKey(pub->id, key->id, kNow + 5);
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_EQ(revoked->revoked_at, kNow + 5);
  Result<ApiKeyRecord> again = store_->RevokeApiKey(pub->id, key->id, kNow + 99);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revoked_at, kNow + 5);  // keeps the first time

  Result<std::vector<ApiKeyRecord>> keys = store_->ListApiKeys(pub->id);
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].revoked_at, kNow + 5);
}

TEST_F(SqliteStoreTest, RevokeKeyOfAnotherPublisherIsNotFound) {
  Result<PublisherRecord> a = store_->CreatePublisher(Pub("a"), kNow);
  Result<PublisherRecord> b = store_->CreatePublisher(Pub("b"), kNow);
  Result<ApiKeyRecord> key = store_->CreateApiKey(Key(a->id, Hash(1), "spk_1"), kNow);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(store_->RevokeApiKey(b->id, key->id, kNow).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->RevokeApiKey(a->id, key->id + 100, kNow).status().code(), Code::kNotFound);
}

TEST_F(SqliteStoreTest, ApiKeyConflicts) {
  Result<PublisherRecord> pub = store_->CreatePublisher(Pub("p"), kNow);
  ASSERT_TRUE(store_->CreateApiKey(Key(pub->id, Hash(1)), kNow).ok());
  Result<ApiKeyRecord> dup = store_->CreateApiKey(Key(pub->id, Hash(1)), kNow);
  EXPECT_EQ(dup.status().code(), Code::kConflict);
  EXPECT_THAT(dup.status().message(), HasSubstr("same hash"));
  Result<ApiKeyRecord> orphan = store_->CreateApiKey(Key(555, Hash(2)), kNow);
  EXPECT_EQ(orphan.status().code(), Code::kConflict);
  EXPECT_THAT(orphan.status().message(), HasSubstr("publisher 555 does not exist"));
}

TEST_F(SqliteStoreTest, DeletePublisherCascadesKeys) {
  Result<PublisherRecord> pub = store_->CreatePublisher(Pub("p"), kNow);
  ASSERT_TRUE(store_->CreateApiKey(Key(pub->id, Hash(1)), kNow).ok());
  ASSERT_TRUE(store_->CreateApiKey(Key(pub->id, Hash(2)), kNow).ok());
  ASSERT_TRUE(store_->DeletePublisher(pub->id).ok());
  EXPECT_THAT(*store_->ListApiKeys(pub->id), IsEmpty());
  EXPECT_EQ(RawQuery(path_, "SELECT COUNT(*) FROM api_keys"), 0);
  // The hash is free again.
  Result<PublisherRecord> other = store_->CreatePublisher(Pub("q"), kNow);
  EXPECT_TRUE(store_->CreateApiKey(Key(other->id, Hash(1)), kNow).ok());
}

// ---- Communities.

TEST_F(SqliteStoreTest, CommunityCrud) {
  CommunityRecord c = MakeCommunity("DeFi");
  EXPECT_EQ(c.name, "DeFi");
  EXPECT_EQ(c.logo_url, "https://logo/DeFi");
  EXPECT_EQ(c.created_at, kNow);
  c.name = "Gaming";
  c.logo_url = "";
  Result<CommunityRecord> updated = store_->UpdateCommunity(c, kNow + 1);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->name, "Gaming");
  EXPECT_EQ(updated->logo_url, "");
  EXPECT_EQ(updated->updated_at, kNow + 1);
  EXPECT_EQ(store_->GetCommunity(c.id)->name, "Gaming");
  EXPECT_EQ(store_->ListCommunities()->size(), 1u);
  ASSERT_TRUE(store_->DeleteCommunity(c.id).ok());
  EXPECT_EQ(store_->GetCommunity(c.id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeleteCommunity(c.id).code(), Code::kNotFound);
  c.id = 1234;
  EXPECT_EQ(store_->UpdateCommunity(c, kNow).status().code(), Code::kNotFound);
}

TEST_F(SqliteStoreTest, DeletingCommunityUsedByCampaignIsConflict) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord p = MakeProject("uniswap");
  MakeCampaign(c.id, {p.id});
  Status s = store_->DeleteCommunity(c.id);
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_THAT(s.message(), HasSubstr("used by campaigns"));
}

TEST_F(SqliteStoreTest, DeletingCommunityRemovesPublisherBlocks) {
  CommunityRecord c = MakeCommunity();
  Result<PublisherRecord> pub = store_->CreatePublisher(Pub("p", {}, {c.id}), kNow);
  ASSERT_TRUE(pub.ok());
  ASSERT_TRUE(store_->DeleteCommunity(c.id).ok());
  EXPECT_THAT(store_->GetPublisher(pub->id)->blocked_communities, IsEmpty());
}

// ---- Projects.

TEST_F(SqliteStoreTest, ProjectRoundTripsEveryField) {
  ProjectRecord in;
  in.slug = "uniswap";
  in.name = "Uniswap";
  in.logo_url = "https://logo/uni";
  in.category = "dex";
  in.contracts = {{1, Addr(0xab, 1)}, {137, Addr(0x01, 2)}};
  Result<ProjectRecord> p = store_->CreateProject(in, kNow);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->slug, "uniswap");
  EXPECT_EQ(p->name, "Uniswap");
  EXPECT_EQ(p->logo_url, "https://logo/uni");
  EXPECT_EQ(p->category, "dex");
  EXPECT_EQ(p->contracts, in.contracts);
  EXPECT_EQ(p->created_at, kNow);

  Result<ProjectRecord> by_slug = store_->GetProjectBySlug("uniswap");
  ASSERT_TRUE(by_slug.ok());
  EXPECT_EQ(by_slug->id, p->id);
  EXPECT_EQ(by_slug->contracts, in.contracts);
  EXPECT_EQ(store_->GetProjectBySlug("nope").status().code(), Code::kNotFound);

  ProjectRecord update = *p;
  update.slug = "uniswap-v3";
  update.logo_url = "";
  update.category = "";
  update.contracts = {{10, Addr(0x05)}};
  Result<ProjectRecord> updated = store_->UpdateProject(update, kNow + 3);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->slug, "uniswap-v3");
  EXPECT_EQ(updated->contracts, update.contracts);
  EXPECT_EQ(updated->updated_at, kNow + 3);
  EXPECT_EQ(store_->GetProject(p->id)->contracts, update.contracts);
  EXPECT_EQ(store_->ListProjects()->size(), 1u);
  // The old contracts are free again.
  EXPECT_TRUE(store_->CreateProject(Proj("other", {in.contracts[0]}), kNow).ok());
}

TEST_F(SqliteStoreTest, ProjectNotFound) {
  EXPECT_EQ(store_->GetProject(5).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->UpdateProject(Proj("x", {}, 5), kNow).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeleteProject(5).code(), Code::kNotFound);
}

TEST_F(SqliteStoreTest, DuplicateSlugIsConflict) {
  MakeProject("uniswap");
  Result<ProjectRecord> dup = store_->CreateProject(Proj("uniswap"), kNow);
  EXPECT_EQ(dup.status().code(), Code::kConflict);
  EXPECT_THAT(dup.status().message(), HasSubstr("project slug 'uniswap' already exists"));
  ProjectRecord other = MakeProject("sushi");
  other.slug = "uniswap";
  EXPECT_EQ(store_->UpdateProject(other, kNow).status().code(), Code::kConflict);
}

TEST_F(SqliteStoreTest, DuplicateContractIsConflict) {
  MakeProject("x", {{1, Addr(0xab)}});
  Result<ProjectRecord> dup = store_->CreateProject(Proj("y", {{1, Addr(0xab)}}), kNow);
  EXPECT_EQ(dup.status().code(), Code::kConflict);
  EXPECT_THAT(dup.status().message(), HasSubstr("contract 1:" + FormatAddress(Addr(0xab)) +
                                                " already belongs to project 'x'"));
  EXPECT_EQ(store_->GetProjectBySlug("y").status().code(), Code::kNotFound);  // rolled back
  // Same address on another chain is fine.
  EXPECT_TRUE(store_->CreateProject(Proj("z", {{10, Addr(0xab)}}), kNow).ok());
}

TEST_F(SqliteStoreTest, DeletingReferencedProjectIsConflict) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord target = MakeProject("a");
  ProjectRecord excluded = MakeProject("b");
  CampaignRecord in = CampaignInput(c.id, {target.id});
  in.exclude_projects = {excluded.id};
  Result<CampaignRecord> campaign = store_->CreateCampaign(in, kNow);
  ASSERT_TRUE(campaign.ok());
  Status s = store_->DeleteProject(target.id);
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_THAT(s.message(), HasSubstr("referenced by campaign " + std::to_string(campaign->id)));
  EXPECT_EQ(store_->DeleteProject(excluded.id).code(), Code::kConflict);
  ASSERT_TRUE(store_->DeleteCampaign(campaign->id).ok());
  EXPECT_TRUE(store_->DeleteProject(target.id).ok());
}

TEST_F(SqliteStoreTest, DeletingProjectRemovesItsActivityAndContracts) {
  ProjectRecord p = MakeProject("a", {{1, Addr(1)}});
  ProjectRecord q = MakeProject("b");
  ASSERT_TRUE(
      store_->RecordActivity({{Addr(9), p.id, 1, 100, 1}, {Addr(9), q.id, 1, 100, 1}}).ok());
  uint64_t activity_before = *store_->ActivityChangeCounter();
  ASSERT_TRUE(store_->DeleteProject(p.id).ok());
  EXPECT_GT(*store_->ActivityChangeCounter(), activity_before);
  Result<std::vector<ActivityRecord>> rows = store_->ActivityForWallet(Addr(9));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].project_id, q.id);
  EXPECT_EQ(RawQuery(path_, "SELECT COUNT(*) FROM project_contracts"), 0);
}

// ---- Campaigns and ads.

TEST_F(SqliteStoreTest, CampaignRoundTripsEveryField) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord a = MakeProject("a");
  ProjectRecord b = MakeProject("b");
  ProjectRecord x = MakeProject("x");
  CampaignRecord in;
  in.community_id = c.id;
  in.name = "Full";
  in.status = CampaignStatus::kPaused;
  in.starts_at = kNow - 100;
  in.ends_at = kNow + 100;
  in.pricing_model = PricingModel::kCpc;
  in.bid_micros = 123'456;
  in.total_budget_micros = 9'000'000;
  in.daily_budget_micros = 1'000'000;
  in.target_projects = {b.id, a.id};
  in.exclude_projects = {x.id};
  in.chains = {137, 1, 10};
  in.recency_days = 30;
  in.frequency_cap = Cap(3, 24);
  Result<CampaignRecord> r = store_->CreateCampaign(in, kNow);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const CampaignRecord& got : {*r, *store_->GetCampaign(r->id)}) {
    EXPECT_EQ(got.community_id, c.id);
    EXPECT_EQ(got.name, "Full");
    EXPECT_EQ(got.status, CampaignStatus::kPaused);
    EXPECT_EQ(got.starts_at, kNow - 100);
    EXPECT_EQ(got.ends_at, kNow + 100);
    EXPECT_EQ(got.pricing_model, PricingModel::kCpc);
    EXPECT_EQ(got.bid_micros, 123'456);
    EXPECT_EQ(got.total_budget_micros, 9'000'000);
    EXPECT_EQ(got.daily_budget_micros, 1'000'000);
    EXPECT_EQ(got.target_projects, in.target_projects);
    EXPECT_EQ(got.exclude_projects, in.exclude_projects);
    EXPECT_EQ(got.chains, in.chains);
    EXPECT_EQ(got.recency_days, 30);
    EXPECT_EQ(got.frequency_cap, (Cap(3, 24)));
    EXPECT_EQ(got.created_at, kNow);
    EXPECT_EQ(got.updated_at, kNow);
  }

  // Clearing every optional field.
  CampaignRecord update = *r;
  update.status = CampaignStatus::kEnded;
  update.pricing_model = PricingModel::kCpa;
  update.starts_at.reset();
  update.ends_at.reset();
  update.total_budget_micros.reset();
  update.daily_budget_micros.reset();
  update.exclude_projects.clear();
  update.target_projects = {x.id};
  update.chains.clear();
  update.recency_days.reset();
  update.frequency_cap.reset();
  Result<CampaignRecord> u = store_->UpdateCampaign(update, kNow + 7);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  Result<CampaignRecord> got = store_->GetCampaign(r->id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, CampaignStatus::kEnded);
  EXPECT_EQ(got->pricing_model, PricingModel::kCpa);
  EXPECT_FALSE(got->starts_at.has_value());
  EXPECT_FALSE(got->ends_at.has_value());
  EXPECT_FALSE(got->total_budget_micros.has_value());
  EXPECT_FALSE(got->daily_budget_micros.has_value());
  EXPECT_THAT(got->exclude_projects, IsEmpty());
  EXPECT_THAT(got->target_projects, ElementsAre(x.id));
  EXPECT_THAT(got->chains, IsEmpty());
  EXPECT_FALSE(got->recency_days.has_value());
  EXPECT_FALSE(got->frequency_cap.has_value());
  EXPECT_EQ(got->created_at, kNow);
  EXPECT_EQ(got->updated_at, kNow + 7);
  EXPECT_EQ(store_->ListCampaigns()->size(), 1u);
}

TEST_F(SqliteStoreTest, CampaignWithMissingReferencesIsConflict) {
  ProjectRecord p = MakeProject("a");
  Result<CampaignRecord> r = store_->CreateCampaign(CampaignInput(7, {p.id}), kNow);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("community 7 does not exist"));

  CommunityRecord c = MakeCommunity();
  r = store_->CreateCampaign(CampaignInput(c.id, {p.id, 999}), kNow);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("project 999 does not exist"));
  EXPECT_THAT(*store_->ListCampaigns(), IsEmpty());  // rolled back

  CampaignRecord ok = MakeCampaign(c.id, {p.id});
  ok.community_id = 8;
  r = store_->UpdateCampaign(ok, kNow);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("community 8 does not exist"));
  EXPECT_EQ(store_->GetCampaign(ok.id)->community_id, c.id);
}

TEST_F(SqliteStoreTest, CampaignNotFound) {
  Result<CampaignRecord> r = store_->GetCampaign(5);
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("campaign 5 not found"));
  CommunityRecord c = MakeCommunity();
  CampaignRecord in = CampaignInput(c.id, {});
  in.id = 5;
  EXPECT_EQ(store_->UpdateCampaign(in, kNow).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeleteCampaign(5).code(), Code::kNotFound);
}

TEST_F(SqliteStoreTest, AdRoundTripsEveryField) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord p = MakeProject("a");
  CampaignRecord camp = MakeCampaign(c.id, {p.id});
  AdRecord in;
  in.campaign_id = camp.id;
  in.headline = "H";
  in.content = "C";
  in.cta_url = "https://u";
  in.cta_label = "Go";
  in.images = {"https://img/land", "", "https://img/short"};
  in.weight = 5;
  in.status = AdStatus::kPaused;
  Result<AdRecord> ad = store_->CreateAd(in, kNow);
  ASSERT_TRUE(ad.ok()) << ad.status().ToString();
  for (const AdRecord& got : {*ad, *store_->GetAd(ad->id)}) {
    EXPECT_EQ(got.campaign_id, camp.id);
    EXPECT_EQ(got.headline, "H");
    EXPECT_EQ(got.content, "C");
    EXPECT_EQ(got.cta_url, "https://u");
    EXPECT_EQ(got.cta_label, "Go");
    EXPECT_EQ(got.images, in.images);
    EXPECT_EQ(got.weight, 5);
    EXPECT_EQ(got.status, AdStatus::kPaused);
    EXPECT_EQ(got.created_at, kNow);
  }
  AdRecord update = *ad;
  update.images = {"", "https://img/long", ""};
  update.status = AdStatus::kActive;
  update.weight = 1;
  Result<AdRecord> u = store_->UpdateAd(update, kNow + 2);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->images, update.images);
  EXPECT_EQ(u->status, AdStatus::kActive);
  EXPECT_EQ(u->updated_at, kNow + 2);
  ASSERT_TRUE(store_->DeleteAd(ad->id).ok());
  EXPECT_EQ(store_->GetAd(ad->id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeleteAd(ad->id).code(), Code::kNotFound);
  EXPECT_EQ(store_->UpdateAd(update, kNow).status().code(), Code::kNotFound);
}

TEST_F(SqliteStoreTest, AdForMissingCampaignIsConflict) {
  AdRecord a;
  a.campaign_id = 31;
  Result<AdRecord> r = store_->CreateAd(a, kNow);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_THAT(r.status().message(), HasSubstr("campaign 31 does not exist"));
}

TEST_F(SqliteStoreTest, ListAdsFiltersByCampaignAndDeleteCampaignCascades) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord p = MakeProject("a");
  CampaignRecord one = MakeCampaign(c.id, {p.id});
  CampaignRecord two = MakeCampaign(c.id, {p.id});
  MakeAd(one.id, "1a");
  MakeAd(two.id, "2a");
  MakeAd(one.id, "1b");
  EXPECT_EQ(store_->ListAds(std::nullopt)->size(), 3u);
  Result<std::vector<AdRecord>> of_one = store_->ListAds(one.id);
  ASSERT_TRUE(of_one.ok());
  ASSERT_EQ(of_one->size(), 2u);
  EXPECT_EQ((*of_one)[0].headline, "1a");
  EXPECT_EQ((*of_one)[1].headline, "1b");

  ASSERT_TRUE(store_->DeleteCampaign(one.id).ok());
  EXPECT_THAT(*store_->ListAds(one.id), IsEmpty());
  EXPECT_EQ(store_->ListAds(std::nullopt)->size(), 1u);
  EXPECT_EQ(RawQuery(path_, "SELECT COUNT(*) FROM campaign_projects"), 1);
}

// ---- Activity.

TEST_F(SqliteStoreTest, RecordActivityUpsertsMaxLastSeenAndSumsCount) {
  ProjectRecord p = MakeProject("a");
  ASSERT_TRUE(store_->RecordActivity({{Addr(1), p.id, 1, 500, 2}}).ok());
  ASSERT_TRUE(store_->RecordActivity({{Addr(1), p.id, 1, 300, 5}}).ok());  // older
  Result<std::vector<ActivityRecord>> rows = store_->ActivityForWallet(Addr(1));
  ASSERT_TRUE(rows.ok());
  EXPECT_THAT(*rows, ElementsAre(ActivityRecord{Addr(1), p.id, 1, 500, 7}));
  // Same key twice in one batch, plus a newer time.
  ASSERT_TRUE(
      store_->RecordActivity({{Addr(1), p.id, 1, 900, 1}, {Addr(1), p.id, 1, 800, 1}}).ok());
  EXPECT_THAT(*store_->ActivityForWallet(Addr(1)),
              ElementsAre(ActivityRecord{Addr(1), p.id, 1, 900, 9}));
  EXPECT_THAT(*store_->ActivityForWallet(Addr(2)), IsEmpty());
}

TEST_F(SqliteStoreTest, RecordActivityWithUnknownProjectWritesNothing) {
  ProjectRecord p = MakeProject("a");
  uint64_t before = *store_->ActivityChangeCounter();
  Status s = store_->RecordActivity(
      {{Addr(1), p.id, 1, 100, 1}, {Addr(2), p.id + 50, 1, 100, 1}, {Addr(3), p.id, 1, 1, 1}});
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_THAT(s.message(), HasSubstr("project " + std::to_string(p.id + 50) + " does not exist"));
  int rows = 0;
  ASSERT_TRUE(store_->ScanActivity([&](const ActivityRecord&) { ++rows; }).ok());
  EXPECT_EQ(rows, 0);
  EXPECT_EQ(*store_->ActivityChangeCounter(), before);
}

TEST_F(SqliteStoreTest, ScanActivityIsOrderedByWallet) {
  ProjectRecord p = MakeProject("a");
  ProjectRecord q = MakeProject("b");
  ASSERT_TRUE(store_
                  ->RecordActivity({{Addr(0xf0), p.id, 1, 1, 1},
                                    {Addr(0x01, 9), q.id, 1, 2, 1},
                                    {Addr(0x80), p.id, 137, 3, 1},
                                    {Addr(0x01, 1), p.id, 1, 4, 1},
                                    {Addr(0x80), p.id, 1, 5, 1}})
                  .ok());
  std::vector<ActivityRecord> seen;
  ASSERT_TRUE(store_->ScanActivity([&](const ActivityRecord& r) { seen.push_back(r); }).ok());
  ASSERT_EQ(seen.size(), 5u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1].wallet, seen[i].wallet);
  EXPECT_EQ(seen[0].wallet, Addr(0x01, 1));
  EXPECT_EQ(seen[4].wallet, Addr(0xf0));
}

TEST_F(SqliteStoreTest, ScanActivityCallbackMayUseTheStore) {
  ProjectRecord p = MakeProject("a");
  ASSERT_TRUE(store_->RecordActivity({{Addr(1), p.id, 1, 1, 1}}).ok());
  int ok_calls = 0;
  ASSERT_TRUE(store_
                  ->ScanActivity([&](const ActivityRecord& r) {
                    ok_calls += store_->GetProject(r.project_id).ok();
                    ok_calls += store_->RecordActivity({{Addr(2), p.id, 1, 1, 1}}).ok();
                  })
                  .ok());
  EXPECT_EQ(ok_calls, 2);
}

TEST_F(SqliteStoreTest, RecordsHundredThousandRowsInOneBatch) {
  ProjectRecord p = MakeProject("a");
  std::vector<ActivityRecord> rows;
  rows.reserve(100'000);
  for (int i = 0; i < 100'000; ++i) {
    Address w;
    w.bytes[0] = static_cast<uint8_t>(i >> 16);
    w.bytes[1] = static_cast<uint8_t>(i >> 8);
    w.bytes[2] = static_cast<uint8_t>(i);
    rows.push_back({w, p.id, 1 + i % 3, kNow, 1});
  }
  ASSERT_TRUE(store_->RecordActivity(rows).ok());
  ASSERT_TRUE(store_->RecordActivity(rows).ok());
  int64_t n = 0, total = 0;
  ASSERT_TRUE(store_
                  ->ScanActivity([&](const ActivityRecord& r) {
                    ++n;
                    total += r.count;
                  })
                  .ok());
  EXPECT_EQ(n, 100'000);
  EXPECT_EQ(total, 200'000);
}

// ---- Change counters and catalog.

TEST_F(SqliteStoreTest, ChangeCounterMovesOnEveryCatalogWriteAndIsSeenByOtherConnections) {
  std::unique_ptr<SqliteStore> other = OpenStore();
  ASSERT_NE(other, nullptr);
  uint64_t c0 = Counter();
  CommunityRecord c = MakeCommunity();
  uint64_t c1 = Counter();
  EXPECT_GT(c1, c0);
  EXPECT_EQ(*other->ChangeCounter(), c1);

  ASSERT_TRUE(other->CreateProject(Proj("from-other"), kNow).ok());
  uint64_t c2 = Counter();
  EXPECT_GT(c2, c1);
  EXPECT_TRUE(store_->GetProjectBySlug("from-other").ok());

  // Activity moves only the activity counter.
  uint64_t a0 = *store_->ActivityChangeCounter();
  ASSERT_TRUE(
      store_->RecordActivity({{Addr(1), store_->GetProjectBySlug("from-other")->id, 1, 1, 1}})
          .ok());
  EXPECT_EQ(Counter(), c2);
  EXPECT_GT(*other->ActivityChangeCounter(), a0);

  // A failed write changes nothing.
  EXPECT_FALSE(store_->CreateProject(Proj("from-other"), kNow).ok());
  EXPECT_EQ(Counter(), c2);
  ASSERT_TRUE(store_->DeleteCommunity(c.id).ok());
  EXPECT_GT(*other->ChangeCounter(), c2);
}

TEST_F(SqliteStoreTest, LoadCatalogDataReturnsEverything) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord p = MakeProject("a", {{1, Addr(1)}});
  CampaignRecord camp = MakeCampaign(c.id, {p.id});
  AdRecord ad = MakeAd(camp.id);
  Result<PublisherRecord> pub = store_->CreatePublisher(Pub("p", {"https://o"}, {c.id}), kNow);
  ASSERT_TRUE(store_->CreateApiKey(Key(pub->id, Hash(1)), kNow).ok());
  Result<ApiKeyRecord> revoked = store_->CreateApiKey(Key(pub->id, Hash(2)), kNow);
  ASSERT_TRUE(store_->RevokeApiKey(pub->id, revoked->id, kNow).ok());

  Result<CatalogData> d = store_->LoadCatalogData();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->publishers.size(), 1u);
  EXPECT_THAT(d->publishers[0].allowed_origins, ElementsAre("https://o"));
  EXPECT_THAT(d->publishers[0].blocked_communities, ElementsAre(c.id));
  ASSERT_EQ(d->api_keys.size(), 2u);
  EXPECT_TRUE(d->api_keys[1].revoked_at.has_value());
  ASSERT_EQ(d->communities.size(), 1u);
  EXPECT_EQ(d->communities[0].name, c.name);
  ASSERT_EQ(d->projects.size(), 1u);
  EXPECT_EQ(d->projects[0].contracts, p.contracts);
  ASSERT_EQ(d->campaigns.size(), 1u);
  EXPECT_THAT(d->campaigns[0].target_projects, ElementsAre(p.id));
  ASSERT_EQ(d->ads.size(), 1u);
  EXPECT_EQ(d->ads[0].id, ad.id);
}

// ---- Concurrency.

TEST_F(SqliteStoreTest, ConcurrentUseFromFourThreads) {
  CommunityRecord c = MakeCommunity();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::string slug = "p-" + std::to_string(t) + "-" + std::to_string(i);
        Result<ProjectRecord> p =
            store_->CreateProject(Proj(slug, {{t + 1, Addr(static_cast<uint8_t>(i))}}), kNow);
        if (!p.ok()) {
          ++failures;
          continue;
        }
        Result<CampaignRecord> camp = store_->CreateCampaign(CampaignInput(c.id, {p->id}), kNow);
        Status act = store_->RecordActivity({{Addr(static_cast<uint8_t>(t)), p->id, 1, i, 1}});
        Result<CatalogData> d = store_->LoadCatalogData();
        Result<uint64_t> counter = store_->ChangeCounter();
        if (!camp.ok() || !act.ok() || !d.ok() || !counter.ok() ||
            !store_->GetProjectBySlug(slug).ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(store_->ListProjects()->size(), 100u);
  EXPECT_EQ(store_->ListCampaigns()->size(), 100u);
}

TEST_F(SqliteStoreTest, TwoProcessesWriteTheSameFile) {
  CommunityRecord c = MakeCommunity();
  ProjectRecord p = MakeProject("shared");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Child: its own store on the same file; exit code reports success.
    int code = 0;
    {
      Result<std::unique_ptr<SqliteStore>> s = SqliteStore::Open(path_);
      if (!s.ok()) _exit(2);
      for (int i = 0; i < 50; ++i) {
        if (!(*s)->RecordActivity({{Addr(1), p.id, 1, i, 1}}).ok()) code = 3;
        if (!(*s)->CreateProject(Proj("child-" + std::to_string(i)), kNow).ok()) code = 4;
      }
    }
    _exit(code);
  }
  int failures = 0;
  for (int i = 0; i < 50; ++i) {
    failures += !store_->RecordActivity({{Addr(1), p.id, 1, 1000 + i, 1}}).ok();
    failures += !store_->CreateProject(Proj("parent-" + std::to_string(i)), kNow).ok();
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(store_->ListProjects()->size(), 101u);
  EXPECT_THAT(*store_->ActivityForWallet(Addr(1)),
              ElementsAre(ActivityRecord{Addr(1), p.id, 1, 1049, 100}));
}

}  // namespace
}  // namespace adserver::store
