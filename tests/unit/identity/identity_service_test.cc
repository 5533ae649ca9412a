#include "identity/identity_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "store/sqlite/sqlite_identity_store.h"
#include "support/temp_dir.h"

namespace adserver::identity {
namespace {

using store::IdentityKind;
using ::testing::ElementsAre;

Address W(uint8_t n) {
  Address a;
  a.bytes.fill(n);
  return a;
}

class IdentityServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.keys = "1:" + std::string(64, 'a');
    options_.retention_seconds = 1000;
    auto s = store::SqliteIdentityStore::Open(dir_.File("adserver.db"));
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  std::unique_ptr<IdentityService> Make() {
    auto svc = IdentityService::Create(store_.get(), clock_, options_);
    EXPECT_TRUE(svc.ok());
    EXPECT_TRUE((*svc)->Load().ok());
    return std::move(*svc);
  }

  testing::TempDir dir_;
  FakeClock clock_;
  IdentityOptions options_;
  std::unique_ptr<store::SqliteIdentityStore> store_;
};

TEST_F(IdentityServiceTest, WritesBehindAndReloads) {
  store::IdentityKey key = IdentityService::NewKey();
  int64_t now = clock_.NowSeconds();
  {
    auto svc = Make();
    std::vector<Address> wallets = {W(1), W(2)};
    svc->graph().Link(IdentityKind::kCookie, key, wallets, now);
    // Nothing reaches the store before a flush...
    EXPECT_TRUE(store_->IdentitiesForWallet(W(1))->empty());
    svc->Stop();  // ...and Stop() flushes (SIGTERM path).
  }
  auto stored = store_->IdentitiesForWallet(W(1));
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].key, key);
  auto svc = Make();
  EXPECT_THAT(*svc->graph().Wallets(IdentityKind::kCookie, key, now), ElementsAre(W(1), W(2)));
}

TEST_F(IdentityServiceTest, EraseWalletRemovesItFromMemoryAndStore) {
  auto svc = Make();
  store::IdentityKey a = IdentityService::NewKey();
  store::IdentityKey b = IdentityService::NewKey();
  int64_t now = clock_.NowSeconds();
  std::vector<Address> only = {W(1)};
  std::vector<Address> two = {W(1), W(2)};
  svc->graph().Link(IdentityKind::kCookie, a, only, now);
  ASSERT_TRUE(svc->Flush().ok());
  svc->graph().Link(IdentityKind::kLocal, b, two, now);  // still pending
  auto before = svc->ForWallet(W(1));
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->size(), 2u);
  auto erased = svc->EraseWallet(W(1));
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ(*erased, 2);
  EXPECT_TRUE(svc->ForWallet(W(1))->empty());
  EXPECT_FALSE(svc->graph().Wallets(IdentityKind::kCookie, a, now).has_value());
  ASSERT_TRUE(svc->Flush().ok());
  EXPECT_TRUE(store_->IdentitiesForWallet(W(1))->empty());
  EXPECT_EQ(store_->IdentitiesForWallet(W(2))->size(), 1u);
}

TEST_F(IdentityServiceTest, SweepAppliesRetentionInMemoryAndStore) {
  auto svc = Make();
  store::IdentityKey key = IdentityService::NewKey();
  std::vector<Address> wallets = {W(1)};
  svc->graph().Link(IdentityKind::kCookie, key, wallets, clock_.NowSeconds());
  ASSERT_TRUE(svc->Flush().ok());
  clock_.Advance(std::chrono::seconds(1001));
  auto swept = svc->Sweep();
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(*swept, 1);
  EXPECT_EQ(svc->graph().size(), 0u);
  EXPECT_TRUE(store_->IdentitiesForWallet(W(1))->empty());
}

TEST_F(IdentityServiceTest, LoadSkipsExpiredIdentities) {
  store::IdentityRecord old{IdentityService::NewKey(),
                            IdentityKind::kLocal,
                            clock_.NowSeconds() - 2000,
                            {{W(1), clock_.NowSeconds() - 2000}}};
  ASSERT_TRUE(store_->PutIdentities({old}).ok());
  auto svc = Make();
  EXPECT_EQ(svc->graph().size(), 0u);
}

TEST_F(IdentityServiceTest, RejectsABadKeyRing) {
  options_.keys = "1:short";
  EXPECT_FALSE(IdentityService::Create(store_.get(), clock_, options_).ok());
}

}  // namespace
}  // namespace adserver::identity
