#include "common/json_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace adserver {
namespace {

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControls) {
  std::string out;
  AppendJsonString(out, "a\"b\\c\nd\x01 \xc3\xa9");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\u0001 \xc3\xa9\"");
}

// Byte-at-a-time reference of the escaping rules, to check the word-at-a-time scan against.
std::string ReferenceEscape(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

TEST(JsonWriterTest, EveryByteValueAtEveryPositionOfAWordMatchesTheReference) {
  for (int b = 0; b < 256; ++b) {
    for (size_t pos = 0; pos < 19; ++pos) {
      std::string s(19, 'x');
      s[pos] = static_cast<char>(b);
      std::string out;
      AppendJsonString(out, s);
      ASSERT_EQ(out, ReferenceEscape(s)) << "byte " << b << " at " << pos;
    }
  }
}

TEST(JsonWriterTest, RandomStringsMatchTheReference) {
  std::mt19937 rng(7);
  // Mostly printable text with some quotes, backslashes, controls and UTF-8 bytes mixed in.
  const std::string alphabet = "abcXYZ 019<>/\"\\\n\t\r\x01\x1f\x7f\xc3\xa9\xe2\x82\xac";
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 70, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    std::string out = "prefix";
    AppendJsonString(out, s);
    ASSERT_EQ(out, "prefix" + ReferenceEscape(s)) << round;
  }
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
