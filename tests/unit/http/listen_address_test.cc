#include "http/detail/listen_address.h"

#include <gtest/gtest.h>

namespace adserver::http::detail {
namespace {

TEST(ListenAddressTest, ParsesIpv4HostAndPort) {
  Result<ListenAddress> address = ParseListenAddress("0.0.0.0:8080");
  ASSERT_TRUE(address.ok()) << address.status().ToString();
  EXPECT_EQ(address->host, "0.0.0.0");
  EXPECT_EQ(address->port, 8080);
}

TEST(ListenAddressTest, ParsesBracketedIpv6AndPortZero) {
  Result<ListenAddress> address = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(address.ok()) << address.status().ToString();
  EXPECT_EQ(address->host, "::1");
  EXPECT_EQ(address->port, 0);
}

TEST(ListenAddressTest, LocalhostMeansLoopback) {
  Result<ListenAddress> address = ParseListenAddress("localhost:9000");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->host, "127.0.0.1");
}

TEST(ListenAddressTest, RejectsMalformedValues) {
  for (const char* bad :
       {"", "8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x",
        ":8080", "example.com:80", "::1:80", "[127.0.0.1]:80", "[::1:80"}) {
    Result<ListenAddress> address = ParseListenAddress(bad);
    ASSERT_FALSE(address.ok()) << bad;
    EXPECT_EQ(address.status().code(), Code::kInvalidArgument) << bad;
    ASSERT_EQ(address.status().details().size(), 1u);
    EXPECT_EQ(address.status().details()[0].field, "listen");
  }
}

}  // namespace
}  // namespace adserver::http::detail
