#include "events/click_url.h"

#include <gtest/gtest.h>

namespace adserver::events {
namespace {

DecisionId Id() { return *DecisionId::Parse("01a212f1-0acb-7cf9-8ff2-7d994c42a098"); }
const std::string kSp = "spclid=01a212f1-0acb-7cf9-8ff2-7d994c42a098";

TEST(AddSpclidTest, AddsAQueryWhenThereIsNone) {
  EXPECT_EQ(AddSpclid("https://app.example/path", Id()), "https://app.example/path?" + kSp);
  EXPECT_EQ(AddSpclid("https://app.example", Id()), "https://app.example?" + kSp);
}

TEST(AddSpclidTest, KeepsExistingParametersInOrderAndVerbatim) {
  EXPECT_EQ(AddSpclid("https://a.example/p?utm_source=x&q=a%20b+c&e=%E2%82%AC", Id()),
            "https://a.example/p?utm_source=x&q=a%20b+c&e=%E2%82%AC&" + kSp);
  EXPECT_EQ(AddSpclid("https://a.example/p?", Id()), "https://a.example/p?" + kSp);
  EXPECT_EQ(AddSpclid("https://a.example/p?a=1&&b=2&", Id()), "https://a.example/p?a=1&b=2&" + kSp);
}

TEST(AddSpclidTest, KeepsTheFragmentAfterTheQuery) {
  EXPECT_EQ(AddSpclid("https://a.example/p#section-2", Id()),
            "https://a.example/p?" + kSp + "#section-2");
  EXPECT_EQ(AddSpclid("https://a.example/p?x=1#/route?y=2", Id()),
            "https://a.example/p?x=1&" + kSp + "#/route?y=2");
}

TEST(AddSpclidTest, ReplacesAnEarlierSpclid) {
  EXPECT_EQ(AddSpclid("https://a.example/?spclid=old&x=1&spclid", Id()),
            "https://a.example/?x=1&" + kSp);
  // Only the exact parameter name: a longer name is someone else's.
  EXPECT_EQ(AddSpclid("https://a.example/?spclid2=keep", Id()),
            "https://a.example/?spclid2=keep&" + kSp);
}

TEST(AddSpclidTest, AcceptsOnlyAbsoluteHttpAndHttps) {
  EXPECT_TRUE(AddSpclid("HTTP://A.example/", Id()));
  EXPECT_TRUE(AddSpclid("HttpS://a.example:8443/x", Id()));
  EXPECT_FALSE(AddSpclid("javascript:alert(1)", Id()));
  EXPECT_FALSE(AddSpclid("ftp://a.example/", Id()));
  EXPECT_FALSE(AddSpclid("//a.example/", Id()));
  EXPECT_FALSE(AddSpclid("/relative", Id()));
  EXPECT_FALSE(AddSpclid("https://", Id()));
  EXPECT_FALSE(AddSpclid("https:///path", Id()));
  EXPECT_FALSE(AddSpclid("data:text/html,x", Id()));
}

TEST(AddSpclidTest, RefusesWhatAHeaderLineCannotCarry) {
  EXPECT_FALSE(AddSpclid("https://a.example/a b", Id()));
  EXPECT_FALSE(AddSpclid("https://a.example/\r\nSet-Cookie: x=1", Id()));
  EXPECT_FALSE(AddSpclid(std::string("https://a.example/\0x", 20), Id()));
}

}  // namespace
}  // namespace adserver::events
