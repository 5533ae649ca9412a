#include "store/lmdb/wallet_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace adserver::store {
namespace {

Address RandomWallet(std::mt19937_64& rng) {
  Address a;
  for (auto& b : a.bytes) b = static_cast<uint8_t>(rng());
  return a;
}

std::vector<uint8_t> ValueFor(size_t i) {
  // Lengths 1..300: varint lengths of one and two bytes.
  std::vector<uint8_t> v(1 + i % 300);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<uint8_t>(i * 31 + k);
  return v;
}

class WalletTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("wallet_table_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  // Writes a table of `stored` (wallet i holding ValueFor(i)) to path_.
  void Build(const std::vector<Address>& stored, uint64_t txn_id, IndexIdentity identity) {
    auto builder = WalletTableBuilder::Create(path_.string(), stored.size());
    ASSERT_TRUE(builder.ok()) << builder.status().message();
    for (size_t i = 0; i < stored.size(); ++i) {
      ASSERT_TRUE((*builder)->Add(stored[i], ValueFor(i)).ok());
    }
    ASSERT_TRUE((*builder)->Finish(txn_id, identity).ok());
  }
  std::filesystem::path path_;
};

TEST_F(WalletTableTest, FindsEveryStoredWalletAndNoOther) {
  std::mt19937_64 rng(7);
  std::vector<Address> stored(20'000);
  for (Address& w : stored) w = RandomWallet(rng);
  ASSERT_NO_FATAL_FAILURE(Build(stored, 42, {.device = 1, .inode = 2}));
  EXPECT_FALSE(std::filesystem::exists(path_.string() + ".tmp." + std::to_string(getpid())));

  auto table = WalletTable::Open(path_.string());
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ((*table)->txn_id(), 42u);
  EXPECT_EQ((*table)->identity(), (IndexIdentity{.device = 1, .inode = 2}));
  EXPECT_EQ((*table)->wallet_count(), stored.size());

  // Batches of 50 (as a request), alternating stored and unknown wallets, one skipped.
  for (size_t begin = 0; begin + 25 <= stored.size(); begin += 25) {
    std::vector<Address> batch;
    for (size_t k = 0; k < 25; ++k) {
      batch.push_back(stored[begin + k]);
      batch.push_back(RandomWallet(rng));
    }
    std::vector<uint8_t> want(batch.size(), 1);
    want[0] = 0;
    std::vector<std::span<const uint8_t>> values(batch.size(), std::span<const uint8_t>());
    // The prefetch a request issues first changes nothing.
    (*table)->Prefetch(batch);
    (*table)->FindAll(batch, want, values);
    EXPECT_TRUE(values[0].empty());  // not wanted: left alone
    for (size_t k = 1; k < batch.size(); ++k) {
      if (k % 2 == 1) {
        EXPECT_TRUE(values[k].empty()) << "unknown wallet found at " << begin;
      } else {
        std::vector<uint8_t> expected = ValueFor(begin + k / 2);
        ASSERT_EQ(std::vector<uint8_t>(values[k].begin(), values[k].end()), expected)
            << "wallet " << begin + k / 2;
      }
    }
  }
}

TEST_F(WalletTableTest, PrefetchTakesAnyBatch) {
  std::mt19937_64 rng(9);
  std::vector<Address> stored(1'000);
  for (Address& w : stored) w = RandomWallet(rng);
  ASSERT_NO_FATAL_FAILURE(Build(stored, 1, {}));
  auto table = WalletTable::Open(path_.string());
  ASSERT_TRUE(table.ok()) << table.status().message();
  for (size_t n : {size_t{0}, size_t{1}, size_t{64}, size_t{1'000}}) {
    (*table)->Prefetch(std::span<const Address>(stored.data(), n));
  }
  std::vector<Address> unknown(100);
  for (Address& w : unknown) w = RandomWallet(rng);
  (*table)->Prefetch(unknown);
  std::vector<uint8_t> want(1, 1);
  std::vector<std::span<const uint8_t>> values(1);
  (*table)->FindAll(std::span<const Address>(stored.data() + 999, 1), want, values);
  EXPECT_EQ(std::vector<uint8_t>(values[0].begin(), values[0].end()), ValueFor(999));
}

TEST_F(WalletTableTest, InMemoryCopyAnswersLikeTheFileAndOutlivesIt) {
  std::mt19937_64 rng(11);
  std::vector<Address> stored(5'000);
  for (Address& w : stored) w = RandomWallet(rng);
  ASSERT_NO_FATAL_FAILURE(Build(stored, 7, {.device = 3, .inode = 4}));
  auto mapped = WalletTable::Open(path_.string());
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_FALSE((*mapped)->in_memory());
  auto copy = (*mapped)->LoadIntoMemory();
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  std::shared_ptr<const WalletTable> table = *copy;
  EXPECT_TRUE(table->in_memory());
  EXPECT_EQ(table->txn_id(), 7u);
  EXPECT_EQ(table->identity(), (IndexIdentity{.device = 3, .inode = 4}));
  EXPECT_EQ(table->wallet_count(), stored.size());
  EXPECT_EQ(table->file_bytes(), (*mapped)->file_bytes());
  // The copy does not depend on the file or its mapping.
  mapped->reset();
  std::filesystem::remove(path_);
  std::vector<Address> batch = stored;
  batch.push_back(RandomWallet(rng));
  std::vector<uint8_t> want(batch.size(), 1);
  std::vector<std::span<const uint8_t>> values(batch.size());
  table->FindAll(batch, want, values);
  for (size_t i = 0; i < stored.size(); ++i) {
    std::vector<uint8_t> expected = ValueFor(i);
    ASSERT_EQ(std::vector<uint8_t>(values[i].begin(), values[i].end()), expected) << i;
  }
  EXPECT_TRUE(values.back().empty());
}

TEST_F(WalletTableTest, WalletsSharingLeadingBytesStillFound) {
  // Vanity addresses (long runs of zeros) must not collide into one probe chain.
  std::vector<Address> stored(4096);
  for (size_t i = 0; i < stored.size(); ++i) {
    stored[i].bytes[19] = static_cast<uint8_t>(i);
    stored[i].bytes[18] = static_cast<uint8_t>(i >> 8);
  }
  auto builder = WalletTableBuilder::Create(path_.string(), stored.size());
  ASSERT_TRUE(builder.ok());
  for (size_t i = 0; i < stored.size(); ++i) {
    std::vector<uint8_t> v = ValueFor(i);
    ASSERT_TRUE((*builder)->Add(stored[i], v).ok());
  }
  ASSERT_TRUE((*builder)->Finish(1, {}).ok());
  auto table = WalletTable::Open(path_.string());
  ASSERT_TRUE(table.ok());
  std::vector<uint8_t> want(stored.size(), 1);
  std::vector<std::span<const uint8_t>> values(stored.size());
  (*table)->FindAll(stored, want, values);
  for (size_t i = 0; i < stored.size(); ++i) {
    ASSERT_EQ(values[i].size(), ValueFor(i).size()) << i;
  }
}

TEST_F(WalletTableTest, RejectsMoreWalletsThanItCanHold) {
  auto builder = WalletTableBuilder::Create(path_.string(), 10);  // 64 slots at least
  ASSERT_TRUE(builder.ok());
  std::mt19937_64 rng(1);
  Status last;
  for (int i = 0; i < 64 && last.ok(); ++i) last = (*builder)->Add(RandomWallet(rng), {});
  EXPECT_EQ(last.code(), Code::kInvalidArgument);
}

TEST_F(WalletTableTest, OpenTellsMissingFromBrokenFiles) {
  EXPECT_EQ(WalletTable::Open(path_.string()).status().code(), Code::kNotFound);
  {
    std::ofstream out(path_);
    out << std::string(4096, 'x');
  }
  EXPECT_EQ(WalletTable::Open(path_.string()).status().code(), Code::kInvalidArgument);
  {
    std::ofstream out(path_);
    out << "short";
  }
  EXPECT_EQ(WalletTable::Open(path_.string()).status().code(), Code::kInvalidArgument);
}

TEST_F(WalletTableTest, AbandonedBuilderLeavesNoFile) {
  {
    auto builder = WalletTableBuilder::Create(path_.string(), 10);
    ASSERT_TRUE(builder.ok());
    ASSERT_TRUE((*builder)->Add(Address{}, std::vector<uint8_t>{1, 2}).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_FALSE(std::filesystem::exists(path_.string() + ".tmp." + std::to_string(getpid())));
}

}  // namespace
}  // namespace adserver::store
