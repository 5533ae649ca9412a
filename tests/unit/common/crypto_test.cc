#include "common/crypto.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdint>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/address.h"

namespace adserver {
namespace {

std::string Hex(const Sha256Digest& d) { return HexEncode(d.data(), d.size()); }

Sha256Digest SodiumSha256(std::string_view data) {
  Sha256Digest out;
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return out;
}

TEST(CryptoTest, Sha256MatchesFipsVectors) {
  ASSERT_TRUE(InitCrypto());
  EXPECT_EQ(Hex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// Stored key hashes were written by libsodium: every length across several blocks must agree.
TEST(CryptoTest, Sha256AgreesWithLibsodium) {
  ASSERT_TRUE(InitCrypto());
  std::mt19937_64 rng(11);
  for (size_t size = 0; size <= 300; ++size) {
    std::string data(size, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    EXPECT_EQ(Sha256(data), SodiumSha256(data)) << "size " << size;
  }
  const std::string key = "spk_" + std::string(30, 'B');
  EXPECT_EQ(Sha256(key), SodiumSha256(key));
}

TEST(CryptoTest, Sha256IsThreadSafe) {
  ASSERT_TRUE(InitCrypto());
  const Sha256Digest expected = SodiumSha256("spk_abcdefghijklmnopqrstuvwxyz0123");
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10'000; ++i) {
        mismatches[t] += Sha256("spk_abcdefghijklmnopqrstuvwxyz0123") != expected;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(CryptoTest, ConstantTimeEqualComparesEveryBit) {
  ASSERT_TRUE(InitCrypto());
  const Sha256Digest a = Sha256("a key");
  EXPECT_TRUE(ConstantTimeEqual(a, a));
  for (size_t byte = 0; byte < a.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      Sha256Digest b = a;
      b[byte] ^= static_cast<uint8_t>(1 << bit);
      EXPECT_FALSE(ConstantTimeEqual(a, b)) << "byte " << byte << " bit " << bit;
      EXPECT_FALSE(ConstantTimeEqual(b, a)) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(CryptoTest, ConstantTimeEqualOfStringsComparesEveryBitAndTheLength) {
  ASSERT_TRUE(InitCrypto());
  const std::string a = "spk_abcdefghijklmnopqrstuvwxyz1234";
  EXPECT_TRUE(ConstantTimeEqual(a, std::string(a)));
  EXPECT_TRUE(ConstantTimeEqual(std::string_view(), std::string_view()));
  EXPECT_FALSE(ConstantTimeEqual(a, a.substr(0, a.size() - 1)));
  EXPECT_FALSE(ConstantTimeEqual(a + "5", a));
  for (size_t byte = 0; byte < a.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string b = a;
      b[byte] = static_cast<char>(b[byte] ^ (1 << bit));
      EXPECT_FALSE(ConstantTimeEqual(a, b)) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(CryptoTest, BufferedRandomBytesNeverRepeatAcrossRefillsOrThreads) {
  ASSERT_TRUE(InitCrypto());
  std::set<std::string> seen;
  std::mutex mu;
  auto draw = [&](int n) {
    std::vector<std::string> mine;
    for (int i = 0; i < n; ++i) {
      std::string nonce(24, '\0');
      RandomBytesBuffered(reinterpret_cast<uint8_t*>(nonce.data()), nonce.size());
      mine.push_back(nonce);
    }
    std::lock_guard<std::mutex> lock(mu);
    for (std::string& m : mine) EXPECT_TRUE(seen.insert(m).second);
  };
  std::thread a(draw, 2000), b(draw, 2000);  // each thread refills its buffer ~12 times
  a.join();
  b.join();
  EXPECT_EQ(seen.size(), 4000u);
  std::string zeros(24, '\0');
  EXPECT_EQ(seen.count(zeros), 0u);
}

TEST(CryptoTest, Base64UrlMatchesRfc4648WithoutPaddingAndRoundTrips) {
  ASSERT_TRUE(InitCrypto());
  // RFC 4648 section 10 vectors, padding removed.
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(plain.data());
    EXPECT_EQ(Base64UrlEncode(bytes, plain.size()), encoded);
    uint8_t out[16];
    ASSERT_EQ(Base64UrlDecode(encoded, out, sizeof out), static_cast<ptrdiff_t>(plain.size()));
    EXPECT_EQ(std::string(reinterpret_cast<char*>(out), plain.size()), plain);
  }
  // The URL alphabet: 0xfb 0xff -> "-_8" (standard base64 would be "+/8=").
  const uint8_t special[] = {0xfb, 0xff};
  EXPECT_EQ(Base64UrlEncode(special, 2), "-_8");
  uint8_t out[4];
  EXPECT_EQ(Base64UrlDecode("-_8", out, sizeof out), 2);
  EXPECT_EQ(out[0], 0xfb);
  EXPECT_EQ(out[1], 0xff);
  for (int n = 0; n < 300; ++n) {
    std::vector<uint8_t> data(n);
    for (int i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 131 + n);
    std::string text = Base64UrlEncode(data.data(), data.size());
    std::vector<uint8_t> back(n + 3);
    ASSERT_EQ(Base64UrlDecode(text, back.data(), back.size()), n);
    back.resize(n);
    EXPECT_EQ(back, data) << n;
  }
}

TEST(CryptoTest, Base64UrlDecodeRefusesEverythingButTheCanonicalUnpaddedForm) {
  ASSERT_TRUE(InitCrypto());
  uint8_t out[16];
  for (const char* bad :
       {"+/8", "Zm9v=", "Zg==", "Zm 9v", "Zm9v\n", "Z", "Zm9vY", "Zm9*", "Zh", "Zm9", "Zm-"}) {
    EXPECT_EQ(Base64UrlDecode(bad, out, sizeof out), -1) << bad;
  }
  EXPECT_EQ(Base64UrlDecode("Zm9vYmFy", out, 5), -1) << "more than the capacity";
  EXPECT_EQ(Base64UrlDecode(std::string(5000, 'A'), out, sizeof out), -1);
}

}  // namespace
}  // namespace adserver
