#include "serve/identity_binding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace adserver::serve {
namespace {

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
    clock_.SetMicros(kNow * 1'000'000);
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
  AdRequest Earlier(std::vector<Address> wallets, std::optional<std::string> local_id) {
    AdRequest r;
    r.variant = Variant::kEarlier;
    r.wallets = std::move(wallets);
    for (const Address& a : r.wallets) r.wallet_texts.push_back(FormatAddress(a));
    r.wallets_present = true;
    r.local_id_present = true;
    r.local_id = std::move(local_id);
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
}

TEST_F(IdentityBindingTest, ConsentWithWalletsCreatesAndThenExtendsOneIdentity) {
  AdRequest r = Current({W(1)}, true);
  IdentityOutcome first = ResolveIdentity(identity_.get(), {}, r, false, kNow);
  ASSERT_EQ(first.set_cookies.size(), 2u);
  EXPECT_THAT(first.set_cookies[1], ::testing::EndsWith("; Partitioned"));
  r = Current({W(2)}, true);
  IdentityOutcome second = ResolveIdentity(
      identity_.get(), WithCookie("adserver_id=" + CookieOf(first)), r, false, kNow);
  ASSERT_EQ(second.set_cookies.size(), 2u) << "a new wallet: re-sealed at once";
  auto a = identity_->Open(identity::TokenKind::kCookie, CookieOf(first), kNow);
  auto b = identity_->Open(identity::TokenKind::kCookie, CookieOf(second), kNow);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->token.id, b->token.id) << "one browser, one identity";
  r = Current({}, true);
  IdentityOutcome third = ResolveIdentity(
      identity_.get(), WithCookie("adserver_id=" + CookieOf(second)), r, false, kNow);
  EXPECT_FALSE(third.no_fill);
  EXPECT_THAT(r.wallets, ElementsAre(W(2), W(1)));
  EXPECT_TRUE(r.wallet_texts.empty()) << "only the earlier variant echoes a wallet";
}

TEST_F(IdentityBindingTest, AnUnchangedCookieIsResealedOnlyOnceTheRefreshIsDue) {
  AdRequest r = Current({W(1)}, true);
  std::string cookie = CookieOf(ResolveIdentity(identity_.get(), {}, r, false, kNow));
  for (std::vector<Address> wallets : {std::vector<Address>{W(1)}, std::vector<Address>{}}) {
    r = Current(wallets, true);
    IdentityOutcome o =
        ResolveIdentity(identity_.get(), WithCookie("adserver_id=" + cookie), r, false, kNow + 10);
    EXPECT_TRUE(o.set_cookies.empty()) << wallets.size();
    EXPECT_THAT(r.wallets, ElementsAre(W(1)));
  }
  r = Current({}, true);
  int64_t due = kNow + identity_->options().cookie_refresh_seconds;
  IdentityOutcome o =
      ResolveIdentity(identity_.get(), WithCookie("adserver_id=" + cookie), r, false, due);
  EXPECT_EQ(o.set_cookies.size(), 2u);
}

TEST_F(IdentityBindingTest, ErasureReachesAnIssuedCookieAndTheNextResponseDropsTheWallet) {
  AdRequest r = Current({W(1), W(2)}, true);
  std::string cookie = CookieOf(ResolveIdentity(identity_.get(), {}, r, false, kNow));
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(identity_->EraseWallet(W(2)).ok());
  r = Current({}, true);
  IdentityOutcome o =
      ResolveIdentity(identity_.get(), WithCookie("adserver_id=" + cookie), r, false, kNow + 2);
  EXPECT_THAT(r.wallets, ElementsAre(W(1)));
  ASSERT_EQ(o.set_cookies.size(), 2u) << "re-sealed without the erased wallet";
  auto opened = identity_->Open(identity::TokenKind::kCookie, CookieOf(o), kNow + 2);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(opened->token.wallets.size(), 1u);
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
}

TEST_F(IdentityBindingTest, OnlyTheFirstFourCookieValuesAreOpened) {
  AdRequest r = Current({W(1)}, true);
  std::string good = CookieOf(ResolveIdentity(identity_.get(), {}, r, false, kNow));
  std::string three_bad = "adserver_id=x; adserver_id=y; adserver_id=z; ";
  r = Current({}, true);
  ResolveIdentity(identity_.get(), WithCookie(three_bad + "adserver_id_p=" + good), r, false, kNow);
  EXPECT_THAT(r.wallets, ElementsAre(W(1))) << "the fourth value is still opened";
  r = Current({}, true);
  IdentityOutcome o = ResolveIdentity(
      identity_.get(), WithCookie(three_bad + "adserver_id=w; adserver_id_p=" + good), r, false,
      kNow);
  EXPECT_TRUE(o.no_fill) << "a fifth value is not";
  EXPECT_TRUE(r.wallets.empty());
}

TEST_F(IdentityBindingTest, TestKeysSetNoCookieAndIssueNoLocalId) {
  AdRequest r = Current({W(1)}, true);
  IdentityOutcome o = ResolveIdentity(identity_.get(), {}, r, /*test_key=*/true, kNow);
  EXPECT_TRUE(o.set_cookies.empty());
  AdRequest e = Earlier({W(3)}, std::nullopt);
  ResolveIdentity(identity_.get(), {}, e, /*test_key=*/true, kNow);
  EXPECT_FALSE(e.bound_local_id.has_value());
}

TEST_F(IdentityBindingTest, LocalIdBindsServesAndStaysTheSameWhileItsWalletsDo) {
  AdRequest r = Earlier({W(3)}, std::nullopt);
  ResolveIdentity(identity_.get(), {}, r, false, kNow);
  ASSERT_TRUE(r.bound_local_id.has_value());
  std::string id = *r.bound_local_id;
  AdRequest again = Earlier({W(3)}, id);
  ResolveIdentity(identity_.get(), {}, again, false, kNow + 5);
  EXPECT_EQ(again.bound_local_id, id) << "same wallets: the same id";
  AdRequest served = Earlier({}, id);
  ResolveIdentity(identity_.get(), {}, served, false, kNow + 5);
  EXPECT_THAT(served.wallets, ElementsAre(W(3)));
  ASSERT_EQ(served.wallet_texts.size(), 1u);
  EXPECT_EQ(served.wallet_texts[0], FormatAddress(W(3)));
  EXPECT_EQ(served.bound_local_id, id);
  AdRequest more = Earlier({W(4)}, id);
  ResolveIdentity(identity_.get(), {}, more, false, kNow + 6);
  ASSERT_TRUE(more.bound_local_id.has_value());
  EXPECT_NE(*more.bound_local_id, id) << "a new binding is a new id (the SDK stores it)";
  AdRequest both = Earlier({}, *more.bound_local_id);
  ResolveIdentity(identity_.get(), {}, both, false, kNow + 6);
  EXPECT_THAT(both.wallets, ElementsAre(W(4), W(3)));
  AdRequest unknown = Earlier({}, std::string(32, '0'));
  ResolveIdentity(identity_.get(), {}, unknown, false, kNow);
  EXPECT_TRUE(unknown.wallets.empty());
  EXPECT_FALSE(unknown.bound_local_id.has_value());
}

}  // namespace
}  // namespace adserver::serve
