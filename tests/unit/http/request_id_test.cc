#include "http/detail/request_id.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

namespace adserver::http::detail {
namespace {

TEST(RequestIdTest, EchoableIdsAreTokensOfBoundedLength) {
  EXPECT_TRUE(IsValidRequestId("abc-123"));
  EXPECT_TRUE(IsValidRequestId("0190b5a2-7c1e-7d0c-9f1a-8d3b2c4e5f60"));
  EXPECT_TRUE(IsValidRequestId("Root=1-67891233-abcdef012345678912345678"));
  EXPECT_TRUE(IsValidRequestId(std::string(kMaxRequestIdBytes, 'a')));
  EXPECT_FALSE(IsValidRequestId(""));
  EXPECT_FALSE(IsValidRequestId(std::string(kMaxRequestIdBytes + 1, 'a')));
  EXPECT_FALSE(IsValidRequestId("with space"));
  EXPECT_FALSE(IsValidRequestId("quote\""));
  EXPECT_FALSE(IsValidRequestId("new\nline"));
  EXPECT_FALSE(IsValidRequestId("caf\xc3\xa9"));
}

TEST(RequestIdTest, MadeIdsAreHexAndDoNotRepeat) {
  std::unordered_set<std::string> seen;
  for (int i = 0; i < 100000; ++i) {
    char id[kMadeRequestIdBytes];
    MakeRequestId(id);
    std::string s(id, sizeof id);
    ASSERT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
    ASSERT_TRUE(IsValidRequestId(s));
    ASSERT_TRUE(seen.insert(s).second) << "repeated " << s;
  }
}

}  // namespace
}  // namespace adserver::http::detail
