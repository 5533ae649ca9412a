#include "serve/identity_binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "identity/sealed_cookie.h"

namespace adserver::serve {
namespace {

using decision::Variant;
using ::testing::ElementsAre;

constexpr int64_t kNow = 1'767'225'600;

Address W(uint8_t n) {
  Address a;
  a.bytes.fill(n);
  return a;
}

class IdentityBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    identity::IdentityOptions options;
    options.keys = "1:" + std::string(64, 'a');
    identity_ = std::move(*identity::IdentityService::Create(nullptr, clock_, options));
  }
  AdRequest Current(std::vector<Address> wallets, bool consent) {
    AdRequest r;
    r.variant = Variant::kCurrent;
    r.wallets = std::move(wallets);
    for (const Address& a : r.wallets) r.wallet_texts.push_back(FormatAddress(a));
    r.cookie_consent = consent;
    return r;
  }
  http::Request WithCookie(const std::string& value) {
    cookie_ = value;
    http::Request h;
    h.headers.push_back({"Cookie", cookie_});
    return h;
  }
  std::string CookieOf(const IdentityOutcome& o) {
    if (o.set_cookies.empty()) return "";
    const std::string& c = o.set_cookies[0];
    size_t eq = c.find('=');
    return c.substr(eq + 1, c.find(';') - eq - 1);
  }

  FakeClock clock_;
  std::unique_ptr<identity::IdentityService> identity_;
  std::string cookie_;
};

TEST(CookieValuesTest, FindsEveryValueOfANameAcrossHeaders) {
  http::Request r;
  r.headers = {{"Cookie", "a=1; adserver_id=x;b=2"},
               {"cookie", " adserver_id = \"y\" "},
               {"X-Cookie", "adserver_id=z"}};
  EXPECT_THAT(CookieValues(r, "adserver_id"), ElementsAre("x", "y"));
  EXPECT_TRUE(CookieValues(r, "adserver").empty());
}

TEST_F(IdentityBindingTest, NothingWithoutConsentOrWithoutService) {
  AdRequest r = Current({W(1)}, false);
  EXPECT_TRUE(ResolveIdentity(identity_.get(), {}, r, false, kNow).set_cookies.empty());
  r = Current({W(1)}, true);
  EXPECT_TRUE(ResolveIdentity(nullptr, {}, r, false, kNow).set_cookies.empty());
  EXPECT_EQ(identity_->graph().size(), 0u);
}

TEST_F(IdentityBindingTest, ConsentWithWalletsCreatesAndThenReusesTheIdentity) {
  AdRequest r = Current({W(1)}, true);
  IdentityOutcome first = ResolveIdentity(identity_.get(), {}, r, false, kNow);
  ASSERT_EQ(first.set_cookies.size(), 2u);
  EXPECT_THAT(first.set_cookies[1], ::testing::EndsWith("; Partitioned"));
  r = Current({W(2)}, true);
  IdentityOutcome second = ResolveIdentity(
      identity_.get(), WithCookie("adserver_id=" + CookieOf(first)), r, false, kNow);
  EXPECT_EQ(identity_->graph().size(), 1u);
  r = Current({}, true);
  IdentityOutcome third = ResolveIdentity(
      identity_.get(), WithCookie("adserver_id=" + CookieOf(second)), r, false, kNow);
  EXPECT_FALSE(third.no_fill);
  EXPECT_THAT(r.wallets, ElementsAre(W(2), W(1)));
  EXPECT_EQ(r.wallet_texts[0], FormatAddress(W(2)));
}

TEST_F(IdentityBindingTest, BadCookieWithoutWalletsIsNoFillAndMakesNothing) {
  AdRequest r = Current({}, true);
  IdentityOutcome o =
      ResolveIdentity(identity_.get(), WithCookie("adserver_id=zzz"), r, false, kNow);
  EXPECT_TRUE(o.no_fill);
  EXPECT_TRUE(o.set_cookies.empty());
  r = Current({}, true);
  o = ResolveIdentity(identity_.get(), {}, r, false, kNow);  // no cookie at all: caller's 400
  EXPECT_FALSE(o.no_fill);
  EXPECT_TRUE(r.wallets.empty());
  EXPECT_EQ(identity_->graph().size(), 0u);
}

TEST_F(IdentityBindingTest, TestKeysSetNoCookieAndLinkNothing) {
  AdRequest r = Current({W(1)}, true);
  IdentityOutcome o = ResolveIdentity(identity_.get(), {}, r, /*test_key=*/true, kNow);
  EXPECT_TRUE(o.set_cookies.empty());
  EXPECT_EQ(identity_->graph().size(), 0u);
}

TEST_F(IdentityBindingTest, LocalIdBindsAndServesBoundWallets) {
  AdRequest r;
  r.variant = Variant::kEarlier;
  r.wallets = {W(3)};
  r.wallet_texts = {FormatAddress(W(3))};
  r.wallets_present = true;
  r.local_id_present = true;
  ResolveIdentity(identity_.get(), {}, r, false, kNow);
  ASSERT_TRUE(r.bound_local_id.has_value());
  EXPECT_EQ(r.bound_local_id->size(), 32u);
  AdRequest again;
  again.variant = Variant::kEarlier;
  again.wallets_present = true;
  again.local_id_present = true;
  again.local_id = *r.bound_local_id;
  ResolveIdentity(identity_.get(), {}, again, false, kNow);
  EXPECT_THAT(again.wallets, ElementsAre(W(3)));
  EXPECT_EQ(again.bound_local_id, r.bound_local_id);
  AdRequest unknown = again;
  unknown.wallets.clear();
  unknown.wallet_texts.clear();
  unknown.bound_local_id.reset();
  unknown.local_id = std::string(32, '0');
  ResolveIdentity(identity_.get(), {}, unknown, false, kNow);
  EXPECT_TRUE(unknown.wallets.empty());
  EXPECT_FALSE(unknown.bound_local_id.has_value());
}

}  // namespace
}  // namespace adserver::serve
