#include "http/detail/body_spool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/temp_dir.h"

namespace adserver::http::detail {
namespace {

using adserver::testing::TempDir;

bool IsEmptyDir(const std::string& dir) {
  return std::filesystem::directory_iterator(dir) == std::filesystem::directory_iterator();
}

TEST(BodySpoolTest, AppendedBytesReadBackFromTheMapAndNoFileIsLeft) {
  TempDir dir;
  BodySpool spool;
  ASSERT_TRUE(spool.Open(dir.path().string()).ok());
  EXPECT_TRUE(spool.is_open());
  EXPECT_TRUE(IsEmptyDir(dir.path().string())) << "the spool file has a name in the directory";
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    std::string piece = "line " + std::to_string(i) + "\n";
    ASSERT_TRUE(spool.Append(piece).ok());
    expected += piece;
  }
  EXPECT_EQ(spool.size(), expected.size());
  Result<std::string_view> mapped = spool.Map();
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(*mapped, expected);
  spool.Reset();
  EXPECT_FALSE(spool.is_open());
  EXPECT_TRUE(IsEmptyDir(dir.path().string()));
}

TEST(BodySpoolTest, AnEmptySpoolMapsToAnEmptyBody) {
  TempDir dir;
  BodySpool spool;
  ASSERT_TRUE(spool.Open(dir.path().string()).ok());
  Result<std::string_view> mapped = spool.Map();
  ASSERT_TRUE(mapped.ok());
  EXPECT_TRUE(mapped->empty());
}

TEST(BodySpoolTest, ReopeningStartsAnEmptyFile) {
  TempDir dir;
  BodySpool spool;
  ASSERT_TRUE(spool.Open(dir.path().string()).ok());
  ASSERT_TRUE(spool.Append("first body").ok());
  ASSERT_TRUE(spool.Map().ok());
  ASSERT_TRUE(spool.Open(dir.path().string()).ok());
  ASSERT_TRUE(spool.Append("second").ok());
  EXPECT_EQ(*spool.Map(), "second");
}

TEST(BodySpoolTest, AMissingDirectoryIsUnavailable) {
  TempDir dir;
  BodySpool spool;
  Status st = spool.Open((dir.path() / "missing").string());
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_NE(st.message().find("missing"), std::string::npos) << st.message();
  EXPECT_FALSE(spool.is_open());
}

}  // namespace
}  // namespace adserver::http::detail
