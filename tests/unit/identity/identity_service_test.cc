#include "identity/identity_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "store/sqlite/sqlite_identity_store.h"
#include "support/temp_dir.h"

namespace adserver::identity {
namespace {

using ::testing::ElementsAre;

Address W(uint8_t n) {
  Address a;
  a.bytes.fill(n);
  return a;
}

std::vector<Address> Wallets(const WalletLinks& links) {
  std::vector<Address> out;
  for (const WalletLink& l : links.view()) out.push_back(l.wallet);
  return out;
}

class IdentityServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.keys = "1:" + std::string(64, 'a');
    options_.retention_seconds = 1000;
    store_ = Open();
  }
  std::unique_ptr<store::SqliteIdentityStore> Open() {
    auto s = store::SqliteIdentityStore::Open(dir_.File("adserver.db"));
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<IdentityService> Make(store::IdentityStore* store) {
    auto svc = IdentityService::Create(store, clock_, options_);
    EXPECT_TRUE(svc.ok());
    EXPECT_TRUE((*svc)->Load().ok());
    return std::move(*svc);
  }
  std::unique_ptr<IdentityService> Make() { return Make(store_.get()); }
  int64_t Now() const { return clock_.NowSeconds(); }
  // A cookie linking `wallets` (first = most recent), sealed now.
  std::string Cookie(const IdentityService& svc, std::vector<Address> wallets) {
    IdentityToken t;
    t.id = IdentityService::NewId();
    MergeWallets(t.wallets, wallets, Now(), kMaxWalletsPerIdentity);
    return svc.Seal(TokenKind::kCookie, t, Now());
  }

  testing::TempDir dir_;
  FakeClock clock_;
  IdentityOptions options_;
  std::unique_ptr<store::SqliteIdentityStore> store_;
};

TEST_F(IdentityServiceTest, OpensWhatItSealed) {
  auto svc = Make();
  std::string value = Cookie(*svc, {W(1), W(2)});
  auto opened = svc->Open(TokenKind::kCookie, value, Now());
  ASSERT_TRUE(opened.has_value());
  EXPECT_THAT(Wallets(opened->token.wallets), ElementsAre(W(1), W(2)));
  EXPECT_FALSE(opened->reseal);
  EXPECT_FALSE(svc->Open(TokenKind::kLocalId, value, Now()).has_value());
}

TEST_F(IdentityServiceTest, ErasureStopsEveryIssuedTokenFromResolvingToTheWallet) {
  auto svc = Make();
  std::string both = Cookie(*svc, {W(1), W(2)});
  std::string only_w1 = Cookie(*svc, {W(1)});
  clock_.Advance(std::chrono::seconds(5));
  auto erased = svc->EraseWallet(W(1));
  ASSERT_TRUE(erased.ok()) << erased.status().message();
  EXPECT_EQ(erased->erased_at, Now());
  auto opened = svc->Open(TokenKind::kCookie, both, Now());
  ASSERT_TRUE(opened.has_value());
  EXPECT_THAT(Wallets(opened->token.wallets), ElementsAre(W(2)));
  EXPECT_TRUE(opened->reseal) << "re-seal so the client stops carrying it";
  EXPECT_FALSE(svc->Open(TokenKind::kCookie, only_w1, Now())) << "nothing left: no identity";
  EXPECT_EQ(svc->ErasedAt(W(1)), Now());
  EXPECT_FALSE(svc->ErasedAt(W(2)));
}

TEST_F(IdentityServiceTest, AWalletPresentedAgainAfterItsErasureLinksAgain) {
  auto svc = Make();
  ASSERT_TRUE(svc->EraseWallet(W(1)).ok());
  clock_.Advance(std::chrono::seconds(1));
  std::string value = Cookie(*svc, {W(1)});
  auto opened = svc->Open(TokenKind::kCookie, value, Now());
  ASSERT_TRUE(opened.has_value());
  EXPECT_THAT(Wallets(opened->token.wallets), ElementsAre(W(1)));
}

TEST_F(IdentityServiceTest, ErasuresAreDurableAndReachOtherProcessesOnSync) {
  auto server = Make();
  std::string value = Cookie(*server, {W(1), W(2)});
  clock_.Advance(std::chrono::seconds(1));
  {
    // Another process (the CLI) on the same database.
    auto cli_store = Open();
    auto cli = Make(cli_store.get());
    ASSERT_TRUE(cli->EraseWallet(W(2)).ok());
  }
  EXPECT_THAT(Wallets(server->Open(TokenKind::kCookie, value, Now())->token.wallets),
              ElementsAre(W(1), W(2)))
      << "not synchronised yet";
  ASSERT_TRUE(server->Sync().ok());
  EXPECT_THAT(Wallets(server->Open(TokenKind::kCookie, value, Now())->token.wallets),
              ElementsAre(W(1)));
  // A restart reads the list back (same digest key from the database).
  server.reset();
  auto restarted = Make();
  EXPECT_EQ(restarted->erasure_count(), 1u);
  EXPECT_THAT(Wallets(restarted->Open(TokenKind::kCookie, value, Now())->token.wallets),
              ElementsAre(W(1)));
}

TEST_F(IdentityServiceTest, TheBackgroundThreadSyncsAndStopsPromptly) {
  options_.flush_interval = std::chrono::milliseconds(10);
  auto server = Make();
  server->Start();
  auto cli_store = Open();
  auto cli = Make(cli_store.get());
  ASSERT_TRUE(cli->EraseWallet(W(3)).ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server->ErasedAt(W(3)) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(server->ErasedAt(W(3)).has_value());
  server->Stop();
  server->Stop();  // idempotent
}

TEST_F(IdentityServiceTest, LinksPastRetentionAreDroppedAndErasuresPrunedAfterIt) {
  auto svc = Make();
  std::string value = Cookie(*svc, {W(1)});
  clock_.Advance(std::chrono::seconds(400));
  IdentityToken t = svc->Open(TokenKind::kCookie, value, Now())->token;
  std::vector<Address> w2 = {W(2)};
  MergeWallets(t.wallets, w2, Now(), kMaxWalletsPerIdentity);
  std::string both = svc->Seal(TokenKind::kCookie, t, Now());
  ASSERT_TRUE(svc->EraseWallet(W(9)).ok());
  clock_.Advance(std::chrono::seconds(700));  // W(1) last seen 1100 s ago, W(2) 700 s ago
  auto opened = svc->Open(TokenKind::kCookie, both, Now());
  ASSERT_TRUE(opened.has_value());
  EXPECT_THAT(Wallets(opened->token.wallets), ElementsAre(W(2)));
  EXPECT_TRUE(opened->reseal);
  EXPECT_EQ(*svc->Prune(), 0) << "the erasure is 700 s old, retention 1000 s";
  clock_.Advance(std::chrono::seconds(400));
  EXPECT_EQ(*svc->Prune(), 1);
  EXPECT_EQ(svc->erasure_count(), 0u);
  EXPECT_EQ(Make()->erasure_count(), 0u) << "gone from the store too";
}

TEST_F(IdentityServiceTest, AValueSealedUnderAnOlderKeyAsksToBeResealed) {
  std::string old_value = Cookie(*Make(), {W(1)});
  options_.keys = "2:" + std::string(64, 'b') + ",1:" + std::string(64, 'a');
  auto rotated = Make();
  auto opened = rotated->Open(TokenKind::kCookie, old_value, Now());
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->reseal);
  std::string resealed = rotated->Seal(TokenKind::kCookie, opened->token, Now());
  EXPECT_FALSE(rotated->Open(TokenKind::kCookie, resealed, Now())->reseal);
}

TEST_F(IdentityServiceTest, WithoutAStoreErasuresLiveInMemory) {
  auto svc = Make(nullptr);
  std::string value = Cookie(*svc, {W(1), W(2)});
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(svc->EraseWallet(W(1)).ok());
  EXPECT_THAT(Wallets(svc->Open(TokenKind::kCookie, value, Now())->token.wallets),
              ElementsAre(W(2)));
}

TEST_F(IdentityServiceTest, ALocalIdLivesForTheRetentionPeriodACookieForItsMaxAge) {
  options_.cookie_max_age_seconds = 100;
  auto svc = Make();
  IdentityToken t;
  std::vector<Address> w = {W(1)};
  MergeWallets(t.wallets, w, Now(), kMaxWalletsPerIdentity);
  std::string cookie = svc->Seal(TokenKind::kCookie, t, Now());
  std::string local = svc->Seal(TokenKind::kLocalId, t, Now());
  clock_.Advance(std::chrono::seconds(500));
  EXPECT_FALSE(svc->Open(TokenKind::kCookie, cookie, Now()));
  EXPECT_TRUE(svc->Open(TokenKind::kLocalId, local, Now()));
  clock_.Advance(std::chrono::seconds(501));
  EXPECT_FALSE(svc->Open(TokenKind::kLocalId, local, Now()));
}

}  // namespace
}  // namespace adserver::identity
