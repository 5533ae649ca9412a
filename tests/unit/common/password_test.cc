#include "common/password.h"

#include <gtest/gtest.h>

#include <string>

namespace adserver {
namespace {

TEST(PasswordTest, HashIsArgon2idAndVerifiesOnlyTheSamePassword) {
  Result<std::string> hash =
      HashPassword("correct horse battery", MinimalPasswordHashOptionsForTest());
  ASSERT_TRUE(hash.ok()) << hash.status().ToString();
  EXPECT_TRUE(hash->starts_with("$argon2id$")) << *hash;
  EXPECT_EQ(hash->find("correct horse"), std::string::npos);
  EXPECT_TRUE(VerifyPassword(*hash, "correct horse battery"));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horse batterY"));
  EXPECT_FALSE(VerifyPassword(*hash, ""));
}

TEST(PasswordTest, SamePasswordHashesDifferently) {
  auto a = HashPassword("0123456789", MinimalPasswordHashOptionsForTest());
  auto b = HashPassword("0123456789", MinimalPasswordHashOptionsForTest());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);  // salted
  EXPECT_TRUE(VerifyPassword(*b, "0123456789"));
}

TEST(PasswordTest, MalformedHashNeverVerifies) {
  EXPECT_FALSE(VerifyPassword("", "x"));
  EXPECT_FALSE(VerifyPassword("plaintext", "plaintext"));
  EXPECT_FALSE(VerifyPassword(std::string(500, 'a'), "a"));
}

}  // namespace
}  // namespace adserver
