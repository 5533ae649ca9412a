#include "common/address.h"

#include <gtest/gtest.h>

namespace adserver {
namespace {

TEST(AddressTest, ParsesMixedCaseAndFormatsLowerCase) {
  auto a = ParseAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(FormatAddress(*a), "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48");
  EXPECT_EQ(*a, *ParseAddress("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"));
}

TEST(AddressTest, RejectsWrongPrefixLengthAndDigits) {
  EXPECT_FALSE(ParseAddress("0Xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"));
  EXPECT_FALSE(ParseAddress("a0b86991c6218b36c1d19d4a2e9eb0ce3606eb4800"));
  EXPECT_FALSE(ParseAddress("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb4"));
  EXPECT_FALSE(ParseAddress("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb488"));
  EXPECT_FALSE(ParseAddress("0xg0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"));
  EXPECT_FALSE(ParseAddress(""));
}

}  // namespace
TEST(AddressTest, HashAddressDependsOnEveryByteAndTheSeed) {
  Address base;
  const uint64_t h = HashAddress(base, 7);
  EXPECT_EQ(HashAddress(base, 7), h);
  EXPECT_NE(HashAddress(base, 8), h);
  for (size_t i = 0; i < base.bytes.size(); ++i) {
    Address changed = base;
    changed.bytes[i] = 1;
    EXPECT_NE(HashAddress(changed, 7), h) << "byte " << i;
  }
}

}  // namespace adserver
