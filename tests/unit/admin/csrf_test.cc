#include "admin/csrf.h"

#include <gtest/gtest.h>

namespace adserver::admin {
namespace {

CsrfCheck Good() {
  return CsrfCheck{.header_token = "tok123",
                   .session_token = "tok123",
                   .origin = "http://127.0.0.1:8080",
                   .sec_fetch_site = "same-origin",
                   .host = "127.0.0.1:8080",
                   .public_origin = "https://ads.example"};
}

TEST(CsrfTest, AcceptsMatchingTokenFromTheSameOrigin) {
  EXPECT_TRUE(CheckCsrf(Good()).ok());
  CsrfCheck no_browser_headers = Good();
  no_browser_headers.origin = "";
  no_browser_headers.sec_fetch_site = "";
  EXPECT_TRUE(CheckCsrf(no_browser_headers).ok());
  CsrfCheck public_origin = Good();
  public_origin.origin = "https://ads.example";
  EXPECT_TRUE(CheckCsrf(public_origin).ok());
}

TEST(CsrfTest, RefusesMissingOrWrongTokenForeignOriginAndCrossSite) {
  CsrfCheck c = Good();
  c.header_token = "";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
  c = Good();
  c.header_token = "tok124";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
  c = Good();
  c.session_token = "";
  c.header_token = "";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
  c = Good();
  c.origin = "https://evil.example";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
  c = Good();
  c.origin = "null";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
  c = Good();
  c.sec_fetch_site = "cross-site";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
  c = Good();
  c.sec_fetch_site = "same-site";
  EXPECT_EQ(CheckCsrf(c).code(), Code::kPermissionDenied);
}

}  // namespace
}  // namespace adserver::admin
