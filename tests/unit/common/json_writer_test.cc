#include "common/json_writer.h"

#include <gtest/gtest.h>

namespace adserver {
namespace {

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControls) {
  std::string out;
  AppendJsonString(out, "a\"b\\c\nd\x01 \xc3\xa9");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\u0001 \xc3\xa9\"");
}

TEST(JsonWriterTest, WritesObjects) {
  std::string out;
  JsonObjectWriter w(out);
  w.String("a", "x").Null("b").Int("c", -5).Bool("d", true);
  w.Close();
  EXPECT_EQ(out, R"({"a":"x","b":null,"c":-5,"d":true})");
}

}  // namespace
}  // namespace adserver
