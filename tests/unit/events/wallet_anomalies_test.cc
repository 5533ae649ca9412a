#include "events/wallet_anomalies.h"

#include <gtest/gtest.h>

#include <vector>

namespace adserver::events {
namespace {

using Verdict = WalletAnomalies::Verdict;

Address Wallet(uint32_t n) {
  Address a{};
  for (int i = 0; i < 4; ++i) a.bytes[16 + i] = static_cast<uint8_t>(n >> (8 * i));
  a.bytes[0] = 0xaa;
  return a;
}

constexpr int64_t kMinute = 1'700'000'040;  // a minute's start

TEST(WalletAnomaliesTest, AWalletServedTooOftenAMinuteIsFlaggedUntilTheNextMinute) {
  WalletAnomalies anomalies({.serves_per_minute = 3, .max_publishers = 0});
  std::vector<Address> one{Wallet(1)};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(anomalies.Serve(one, 7, kMinute + i), Verdict::kNone) << i;
  EXPECT_EQ(anomalies.Serve(one, 7, kMinute + 10), Verdict::kServeRate);
  EXPECT_EQ(anomalies.Serve(one, 7, kMinute + 59), Verdict::kServeRate);
  EXPECT_EQ(anomalies.Serve(one, 7, kMinute + 60), Verdict::kNone);  // a new minute
  // Another wallet has its own count.
  EXPECT_EQ(anomalies.Serve(std::vector{Wallet(2)}, 7, kMinute + 60), Verdict::kNone);
}

TEST(WalletAnomaliesTest, AWalletServedUnderTooManyPublishersIsFlagged) {
  WalletAnomalies anomalies(
      {.serves_per_minute = 0, .max_publishers = 3, .publishers_seconds = 3600});
  std::vector<Address> one{Wallet(1)};
  // Publishers 1, 2, 3, each several times: never flagged.
  for (int round = 0; round < 3; ++round) {
    for (int64_t publisher = 1; publisher <= 3; ++publisher) {
      ASSERT_EQ(anomalies.Serve(one, publisher, kMinute + round), Verdict::kNone) << publisher;
    }
  }
  // More publishers: flagged once a fourth distinct one is counted (publisher ids hash to one
  // of 64 bits, so two may share one; the count can only fall short).
  Verdict last = Verdict::kNone;
  int64_t publisher = 3;
  while (last == Verdict::kNone && publisher < 40) last = anomalies.Serve(one, ++publisher, kMinute);
  EXPECT_EQ(last, Verdict::kPublishers);
  EXPECT_LE(publisher, 10);
  // The window ends: the wallet starts over.
  EXPECT_EQ(anomalies.Serve(one, 1, kMinute + 3600), Verdict::kNone);
}

TEST(WalletAnomaliesTest, EveryWalletOfARequestIsCountedAndAnyOverALimitFlagsIt) {
  WalletAnomalies anomalies({.serves_per_minute = 2, .max_publishers = 0});
  std::vector<Address> pair{Wallet(1), Wallet(2)};
  EXPECT_EQ(anomalies.Serve(std::vector{Wallet(2)}, 7, kMinute), Verdict::kNone);
  EXPECT_EQ(anomalies.Serve(pair, 7, kMinute), Verdict::kNone);  // wallet 2: 2 serves
  EXPECT_EQ(anomalies.Serve(pair, 7, kMinute), Verdict::kServeRate);  // wallet 2: 3
  // Wallet 1 was counted both times although wallet 2 tripped the limit.
  EXPECT_EQ(anomalies.Serve(std::vector{Wallet(1)}, 7, kMinute), Verdict::kServeRate);
}

TEST(WalletAnomaliesTest, TheTableKeepsItsSizeAndForgetsRatherThanFlags) {
  WalletAnomalies anomalies({.serves_per_minute = 1, .max_publishers = 0, .entries = 64});
  EXPECT_EQ(anomalies.entries(), 64u);
  // 100,000 distinct wallets once each: none is over its limit, whatever they evict.
  for (uint32_t i = 0; i < 100'000; ++i) {
    ASSERT_EQ(anomalies.Serve(std::vector{Wallet(i)}, 7, kMinute), Verdict::kNone) << i;
  }
  EXPECT_EQ(anomalies.entries(), 64u);
}

TEST(WalletAnomaliesTest, OffLimitsFlagNothing) {
  WalletAnomalies anomalies({.serves_per_minute = 0, .max_publishers = 0});
  std::vector<Address> one{Wallet(1)};
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(anomalies.Serve(one, i, kMinute), Verdict::kNone);
}

}  // namespace
}  // namespace adserver::events
