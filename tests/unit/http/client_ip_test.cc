#include "http/client_ip.h"

#include <gtest/gtest.h>

namespace adserver::http {
namespace {

TrustedProxies Proxies(std::vector<std::string> networks) {
  Result<TrustedProxies> proxies = TrustedProxies::Parse(networks);
  EXPECT_TRUE(proxies.ok()) << proxies.status().message();
  return proxies.ok() ? *proxies : TrustedProxies();
}

std::string Client(const Request& request, const TrustedProxies& proxies) {
  std::optional<IpAddress> ip = ClientIp(request, proxies);
  return ip ? FormatIp(*ip) : "none";
}

Request From(std::string_view peer, std::vector<Header> headers = {}) {
  Request r;
  r.remote_ip = peer;
  r.headers = std::move(headers);
  return r;
}

TEST(ClientIpTest, WithoutTrustedProxiesThePeerIsTheClient) {
  Request r = From("203.0.113.5", {{"X-Forwarded-For", "198.51.100.1"}});
  EXPECT_EQ(Client(r, TrustedProxies()), "203.0.113.5");
}

TEST(ClientIpTest, AnUntrustedPeersForwardedForIsIgnored) {
  Request r = From("203.0.113.5", {{"X-Forwarded-For", "198.51.100.1"}});
  EXPECT_EQ(Client(r, Proxies({"10.0.0.0/8"})), "203.0.113.5");
}

TEST(ClientIpTest, ATrustedPeersRightmostUntrustedHopIsTheClient) {
  TrustedProxies proxies = Proxies({"10.0.0.0/8", "2001:db8:ff::/48"});
  // The client forged the leftmost entry; the proxies appended the rest.
  Request r = From("10.0.0.2", {{"X-Forwarded-For", "1.1.1.1, 198.51.100.7, 10.0.0.9"}});
  EXPECT_EQ(Client(r, proxies), "198.51.100.7");
  Request v6 = From("2001:db8:ff::2", {{"X-Forwarded-For", "2001:db8:1::5"}});
  EXPECT_EQ(Client(v6, proxies), "2001:db8:1::5");
}

TEST(ClientIpTest, ForwardedForValuesWithPortsBracketsAndQuotes) {
  TrustedProxies proxies = Proxies({"10.0.0.0/8"});
  EXPECT_EQ(Client(From("10.0.0.2", {{"X-Forwarded-For", "198.51.100.7:4711"}}), proxies),
            "198.51.100.7");
  Request fwd = From(
      "10.0.0.2", {{"Forwarded", "for=192.0.2.60;proto=http, for=\"[2001:db8:cafe::17]:4711\""}});
  EXPECT_EQ(Client(fwd, proxies), "2001:db8:cafe::17");
  Request upper = From("10.0.0.2", {{"Forwarded", "proto=https;For=192.0.2.61"}});
  EXPECT_EQ(Client(upper, proxies), "192.0.2.61");
}

TEST(ClientIpTest, GarbageStopsAtTheLastTrustedHop) {
  TrustedProxies proxies = Proxies({"10.0.0.0/8"});
  Request r = From("10.0.0.2", {{"X-Forwarded-For", "198.51.100.7, unknown, 10.0.0.3"}});
  EXPECT_EQ(Client(r, proxies), "10.0.0.3");
  Request all_trusted = From("10.0.0.2", {{"X-Forwarded-For", "10.0.0.4, 10.0.0.3"}});
  EXPECT_EQ(Client(all_trusted, proxies), "10.0.0.4");
  Request none = From("10.0.0.2");
  EXPECT_EQ(Client(none, proxies), "10.0.0.2");
}

TEST(ClientIpTest, UnknownPeerIsNoClient) { EXPECT_EQ(Client(From(""), TrustedProxies()), "none"); }

TEST(ClientIpTest, RejectsBadProxyEntries) {
  Result<TrustedProxies> bad = TrustedProxies::Parse({"10.0.0.0/8", "proxy.example"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().details().at(0).field, "http.trusted_proxies");
}

}  // namespace
}  // namespace adserver::http
