#include "events/ip_blocklist.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace adserver::events {
namespace {

IpAddress Ip(const char* text) { return *ParseIp(text); }

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

TEST(ParseBlocklistTest, ReadsAddressesNetworksAndComments) {
  Result<std::vector<IpNetwork>> parsed = ParseBlocklist(
      "# Tor exit nodes\n192.0.2.1\n  198.51.100.0/24  # a datacenter\n\r\n2001:db8::/32\n",
      "tor.txt");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->size(), 3u);
}

TEST(ParseBlocklistTest, NamesTheBadLine) {
  Result<std::vector<IpNetwork>> parsed = ParseBlocklist("192.0.2.1\nexample.com\n", "dc.txt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().details().at(0).field, "dc.txt:2");
}

TEST(IpBlocklistTest, ContainsWhatItsFilesList) {
  testing::TempDir dir;
  Write(dir.File("tor.txt"), "192.0.2.1\n");
  Write(dir.File("dc.txt"), "198.51.100.0/24\n");
  auto list = IpBlocklist::Load({dir.File("tor.txt"), dir.File("dc.txt")});
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_TRUE((*list)->Contains(Ip("192.0.2.1")));
  EXPECT_TRUE((*list)->Contains(Ip("198.51.100.200")));
  EXPECT_FALSE((*list)->Contains(Ip("192.0.2.2")));
}

TEST(IpBlocklistTest, AMissingFileFailsTheLoad) {
  testing::TempDir dir;
  EXPECT_FALSE(IpBlocklist::Load({dir.File("absent.txt")}).ok());
}

TEST(IpBlocklistTest, ReloadsAChangedFileAndOnlyThen) {
  testing::TempDir dir;
  const std::string path = dir.File("tor.txt");
  Write(path, "192.0.2.1\n");
  auto loaded = IpBlocklist::Load({path});
  ASSERT_TRUE(loaded.ok());
  IpBlocklist& list = **loaded;
  EXPECT_FALSE(list.ReloadIfChanged());  // unchanged
  Write(path, "# replaced\n203.0.113.0/24\n");
  EXPECT_TRUE(list.ReloadIfChanged());
  EXPECT_FALSE(list.Contains(Ip("192.0.2.1")));
  EXPECT_TRUE(list.Contains(Ip("203.0.113.77")));
}

TEST(IpBlocklistTest, ABrokenReloadKeepsThePreviousSet) {
  testing::TempDir dir;
  const std::string path = dir.File("tor.txt");
  Write(path, "192.0.2.1\n");
  auto loaded = IpBlocklist::Load({path});
  ASSERT_TRUE(loaded.ok());
  Write(path, "192.0.2.1\nnot an address\n");
  EXPECT_FALSE((*loaded)->ReloadIfChanged());
  EXPECT_TRUE((*loaded)->Contains(Ip("192.0.2.1")));
  std::filesystem::remove(path);
  EXPECT_FALSE((*loaded)->ReloadIfChanged());
  EXPECT_TRUE((*loaded)->Contains(Ip("192.0.2.1")));
}

}  // namespace
}  // namespace adserver::events
