#include "common/log.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace adserver::log {
namespace {

class LogFormatTest : public ::testing::Test {
 protected:
  ~LogFormatTest() override { SetFormat(LineFormat::kText); }
  // A whole JSON line as the pattern frames Format()'s body.
  static nlohmann::json Line(const std::string& body) {
    return nlohmann::json::parse("{\"ts\":\"t\",\"level\":\"info\"," + body + "}");
  }
};

TEST_F(LogFormatTest, JsonLinesKeepTypesAndEscapeText) {
  SetFormat(LineFormat::kJson);
  nlohmann::json line = Line(Format("snapshot \"published\"", "campaigns", 3, "ratio", 0.5,
                                    "ok", true, "path", "a\\b\nc\td", "ctl",
                                    std::string("\x01\x7f", 2), "status",
                                    InvalidArgumentError("bad")));
  EXPECT_EQ(line["msg"], "snapshot \"published\"");
  EXPECT_EQ(line["campaigns"], 3);
  EXPECT_EQ(line["ratio"], 0.5);
  EXPECT_EQ(line["ok"], true);
  EXPECT_EQ(line["path"], "a\\b\nc\td");
  EXPECT_EQ(line["ctl"], std::string("\x01\x7f", 2));
  EXPECT_NE(line["status"].get<std::string>().find("bad"), std::string::npos);
}

TEST_F(LogFormatTest, InvalidUtf8AndNonFiniteNumbersStillMakeValidJson) {
  SetFormat(LineFormat::kJson);
  // A truncated sequence, an overlong, a surrogate, a lone continuation byte; valid é and 😀.
  std::string bytes = "\xc3 \xc0\xaf \xed\xa0\x80 \x80 \xc3\xa9 \xf0\x9f\x98\x80";
  nlohmann::json line =
      Line(Format("m", "text", bytes, "inf", std::numeric_limits<double>::infinity()));
  EXPECT_EQ(line["text"], "\ufffd \ufffd\ufffd \ufffd\ufffd\ufffd \ufffd \u00e9 \U0001F600");
  EXPECT_EQ(line["inf"], "inf");
}

TEST_F(LogFormatTest, TextLinesAreKeyEqualsValue) {
  SetFormat(LineFormat::kText);
  EXPECT_EQ(Format("reloaded", "what", "log_level=info", "n", 2), "reloaded what=log_level=info n=2");
}

TEST_F(LogFormatTest, FormatNamesAreJsonAndText) {
  EXPECT_TRUE(SetFormat("json"));
  EXPECT_EQ(Format("m").rfind("\"msg\":", 0), 0u);
  EXPECT_TRUE(SetFormat("text"));
  EXPECT_EQ(Format("m"), "m");
  EXPECT_FALSE(SetFormat("xml"));
  EXPECT_EQ(Format("m"), "m");
}

}  // namespace
}  // namespace adserver::log
