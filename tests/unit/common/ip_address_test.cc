#include "common/ip_address.h"

#include <gtest/gtest.h>

namespace adserver {
namespace {

IpAddress Ip(const char* text) {
  std::optional<IpAddress> ip = ParseIp(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip.value_or(IpAddress{});
}

TEST(IpAddressTest, ParsesAndFormatsBothFamilies) {
  EXPECT_EQ(FormatIp(Ip("192.0.2.17")), "192.0.2.17");
  EXPECT_TRUE(Ip("192.0.2.17").is_v4());
  EXPECT_EQ(FormatIp(Ip("2001:DB8::1")), "2001:db8::1");
  EXPECT_FALSE(Ip("2001:db8::1").is_v4());
  // The mapped form of an IPv4 address is that address.
  EXPECT_EQ(Ip("::ffff:192.0.2.17"), Ip("192.0.2.17"));
}

TEST(IpAddressTest, RejectsWhatIsNotAnAddress) {
  for (const char* bad : {"", "192.0.2", "192.0.2.256", "1.2.3.4:80", "[::1]", "::1%eth0",
                          "unknown", "2001:db8:::1", " 1.2.3.4"}) {
    EXPECT_FALSE(ParseIp(bad).has_value()) << bad;
  }
}

TEST(IpAddressTest, TruncatesIpv4To24AndIpv6To48) {
  EXPECT_EQ(FormatIp(TruncateIp(Ip("192.0.2.17"))), "192.0.2.0");
  EXPECT_EQ(FormatIp(TruncateIp(Ip("2001:db8:abcd:1234:5678::9"))), "2001:db8:abcd::");
}

TEST(IpAddressTest, NetworksContainTheirAddressesOnly) {
  std::optional<IpNetwork> v4 = ParseNetwork("10.1.2.3/8");
  ASSERT_TRUE(v4.has_value());
  EXPECT_TRUE(v4->Contains(Ip("10.255.0.1")));
  EXPECT_FALSE(v4->Contains(Ip("11.0.0.1")));
  // A /8 of IPv4 is not the /8 of the 16-byte form.
  EXPECT_FALSE(v4->Contains(Ip("::a01:203")));
  std::optional<IpNetwork> v6 = ParseNetwork("2001:db8::/32");
  ASSERT_TRUE(v6.has_value());
  EXPECT_TRUE(v6->Contains(Ip("2001:db8:ffff::1")));
  EXPECT_FALSE(v6->Contains(Ip("2001:db9::1")));
  std::optional<IpNetwork> host = ParseNetwork("192.0.2.1");
  ASSERT_TRUE(host.has_value());
  EXPECT_TRUE(host->Contains(Ip("192.0.2.1")));
  EXPECT_FALSE(host->Contains(Ip("192.0.2.2")));
  std::optional<IpNetwork> all = ParseNetwork("0.0.0.0/0");
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->Contains(Ip("203.0.113.9")));
  EXPECT_FALSE(all->Contains(Ip("::1")));
}

TEST(IpAddressTest, RejectsBadPrefixes) {
  for (const char* bad :
       {"10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "::/129", "10.0.0.0/8x", "nonsense/8"}) {
    EXPECT_FALSE(ParseNetwork(bad).has_value()) << bad;
  }
}

TEST(IpSetTest, AnswersMembershipOverMergedRanges) {
  std::vector<IpNetwork> networks;
  for (const char* n :
       {"10.0.0.0/8", "10.1.0.0/16", "192.0.2.7", "2001:db8::/48", "198.51.100.0/24"}) {
    networks.push_back(*ParseNetwork(n));
  }
  IpSet set(networks);
  EXPECT_EQ(set.range_count(), 4u);  // 10.1/16 lies inside 10/8
  EXPECT_TRUE(set.Contains(Ip("10.1.2.3")));
  EXPECT_TRUE(set.Contains(Ip("10.200.0.0")));
  EXPECT_TRUE(set.Contains(Ip("192.0.2.7")));
  EXPECT_FALSE(set.Contains(Ip("192.0.2.8")));
  EXPECT_FALSE(set.Contains(Ip("9.255.255.255")));
  EXPECT_TRUE(set.Contains(Ip("198.51.100.255")));
  EXPECT_FALSE(set.Contains(Ip("198.51.101.0")));
  EXPECT_TRUE(set.Contains(Ip("2001:db8:0:ffff::1")));
  EXPECT_FALSE(set.Contains(Ip("2001:db8:1::1")));
  EXPECT_FALSE(IpSet().Contains(Ip("10.0.0.1")));
}

}  // namespace
}  // namespace adserver
