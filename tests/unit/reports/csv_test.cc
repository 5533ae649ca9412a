#include "reports/csv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace adserver::reports {
namespace {

TEST(CsvTest, PlainFieldsStayAsTheyAre) {
  EXPECT_EQ(CsvField("top-banner"), "top-banner");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("it's fine"), "it's fine");
}

TEST(CsvTest, QuotesFieldsWithCommasQuotesAndLineBreaks) {
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
}

TEST(CsvTest, RecordsEndWithCrlf) {
  std::string out;
  AppendCsvRecord(std::vector<std::string>{"time", "adUnitId", "clicks"}, out);
  AppendCsvRecord(std::vector<std::string>{"2026-01-01T00:00:00Z", "a,\"b\"", "3"}, out);
  EXPECT_EQ(out, "time,adUnitId,clicks\r\n2026-01-01T00:00:00Z,\"a,\"\"b\"\"\",3\r\n");
}

TEST(CsvTest, MoneyInCurrencyUnits) {
  EXPECT_EQ(FormatMoney(0), "0");
  EXPECT_EQ(FormatMoney(12'500'000), "12.5");
  EXPECT_EQ(FormatMoney(1), "0.000001");
  EXPECT_EQ(FormatMoney(7'000'000), "7");
  EXPECT_EQ(FormatMoney(-1'250'000), "-1.25");
}

TEST(CsvTest, DoublesShortestRoundTrip) {
  EXPECT_EQ(FormatDouble(0.05), "0.05");
  EXPECT_EQ(FormatDouble(0), "0");
  EXPECT_EQ(FormatDouble(0.025), "0.025");
}

}  // namespace
}  // namespace adserver::reports
