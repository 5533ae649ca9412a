#include "common/address.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace adserver {
namespace {

// The plain byte-at-a-time decoder ParseAddress must agree with.
std::optional<Address> ReferenceParseAddress(std::string_view text) {
  auto value = [](unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (text.size() != 42 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  Address out;
  for (size_t i = 0; i < 20; ++i) {
    int hi = value(static_cast<unsigned char>(text[2 + 2 * i]));
    int lo = value(static_cast<unsigned char>(text[3 + 2 * i]));
    if (hi < 0 || lo < 0) return std::nullopt;
    out.bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

// Every hex digit of both cases at least once, so each position sees letters and digits.
constexpr std::string_view kLower = "0x0123456789abcdef0123456789abcdef01234567";
constexpr std::string_view kUpper = "0x0123456789ABCDEF0123456789ABCDEF01234567";
constexpr std::string_view kMixed = "0xfEdCbA9876543210aBcDeF0123456789AbCdEf98";

TEST(AddressTest, AgreesWithReferenceForEveryByteAtEveryPosition) {
  for (std::string_view base : {kLower, kUpper, kMixed}) {
    ASSERT_TRUE(ParseAddress(base).has_value()) << base;
    for (size_t pos = 0; pos < base.size(); ++pos) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string text(base);
        text[pos] = static_cast<char>(byte);
        EXPECT_EQ(ParseAddress(text), ReferenceParseAddress(text))
            << base << " position " << pos << " byte " << byte;
      }
    }
  }
}

TEST(AddressTest, DecodesEveryDigitValueInEveryPosition) {
  constexpr std::string_view kDigits = "0123456789abcdefABCDEF";
  for (size_t pos = 2; pos < 42; ++pos) {
    for (char digit : kDigits) {
      std::string text(kMixed);
      text[pos] = digit;
      std::optional<Address> parsed = ParseAddress(text);
      ASSERT_TRUE(parsed.has_value()) << text;
      EXPECT_EQ(parsed, ReferenceParseAddress(text)) << text;
    }
  }
}

TEST(AddressTest, AgreesWithReferenceOnRandomText) {
  std::mt19937_64 rng(20260101);
  // Mostly hex digits, some of their neighbours in ASCII ('/', ':', '@', 'G', '`', 'g') and
  // bytes >= 0x80, several invalid bytes per text at times.
  constexpr std::string_view kAlphabet = "0123456789abcdefABCDEF/:@G`g\x80\xff";
  for (int round = 0; round < 200'000; ++round) {
    std::string text = "0x";
    for (int i = 0; i < 40; ++i) {
      text += round % 4 == 0 ? static_cast<char>(rng())
                             : kAlphabet[rng() % (round % 2 == 0 ? 22 : kAlphabet.size())];
    }
    ASSERT_EQ(ParseAddress(text), ReferenceParseAddress(text)) << text;
  }
}

TEST(AddressTest, RoundTripsRandomAddresses) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 10'000; ++round) {
    Address a;
    for (uint8_t& b : a.bytes) b = static_cast<uint8_t>(rng());
    EXPECT_EQ(ParseAddress(FormatAddress(a)), a);
  }
}

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
