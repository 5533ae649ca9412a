#include "ingest/activity_import.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::ingest {
namespace {

constexpr int64_t kNow = 1'767'225'600;  // 2026-01-01T00:00:00Z
constexpr char kWallet[] = "0x1111111111111111111111111111111111111111";
constexpr char kContract[] = "0xAbCdEf0000000000000000000000000000000001";

class ActivityImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteStore::Open(dir_.File("ads.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    store::ProjectRecord p;
    p.slug = "uniswap";
    p.name = "Uniswap";
    p.contracts = {{1, *ParseAddress(kContract)}};
    auto created = store_->CreateProject(p, kNow);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    project_id_ = created->id;
  }

  Result<ImportSummary> Import(std::string_view ndjson) {
    return ImportActivityNdjson(ndjson, *store_, *store_, clock_);
  }

  std::vector<store::ActivityRecord> Rows() {
    auto rows = store_->ActivityForWallet(*ParseAddress(kWallet));
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<store::ActivityRecord>{};
  }

  testing::TempDir dir_;
  FakeClock clock_{kNow * 1'000'000};
  std::unique_ptr<store::SqliteStore> store_;
  store::Id project_id_ = 0;
};

std::string Line(std::string_view target, std::string_view timestamp, int chain = 1) {
  return std::string(R"({"wallet":")") + kWallet + "\"," + std::string(target) +
         ",\"chainId\":" + std::to_string(chain) + ",\"timestamp\":\"" + std::string(timestamp) +
         "\"}\n";
}

TEST(Rfc3339Test, ParsesZonesAndFractions) {
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*ParseRfc3339("2026-01-01T00:00:00Z"), kNow);
  EXPECT_EQ(*ParseRfc3339("2026-01-01T02:00:00+02:00"), kNow);
  EXPECT_EQ(*ParseRfc3339("2025-12-31T19:30:00-04:30"), kNow);
  EXPECT_EQ(*ParseRfc3339("2026-01-01t00:00:00.999z"), kNow);
  EXPECT_EQ(*ParseRfc3339("2024-02-29T12:00:00Z"), 1'709'208'000);
  EXPECT_EQ(*ParseRfc3339("1969-12-31T23:59:59Z"), -1);
}

TEST(Rfc3339Test, RejectsMalformedTimestamps) {
  for (const char* bad : {"", "2026-01-01", "2026-01-01T00:00:00", "2026-13-01T00:00:00Z",
                          "2025-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
                          "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+2:00",
                          "2026-01-01T00:00:00+02:00junk", "26-01-01T00:00:00Z", "1767225600"}) {
    EXPECT_FALSE(ParseRfc3339(bad).ok()) << bad;
  }
}

TEST(Rfc3339Test, FormatsUtcAndRoundTrips) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(kNow), "2026-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatRfc3339(1'709'208'000), "2024-02-29T12:00:00Z");
  for (int64_t t : {int64_t{951'782'400}, int64_t{4'102'444'799}, kNow + 12'345}) {
    EXPECT_EQ(*ParseRfc3339(FormatRfc3339(t)), t);
  }
}

TEST_F(ActivityImportTest, AggregatesRowsPerWalletProjectChain) {
  std::string ndjson = Line(R"("project":"uniswap")", "2025-12-01T00:00:00Z") +
                       Line(R"("project":"uniswap")", "2025-12-20T00:00:00Z") +
                       "\n" +
                       Line(std::string(R"("contract":")") + kContract + "\"",
                            "2025-12-10T00:00:00+01:00");
  auto summary = Import(ndjson);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->imported, 3u);
  EXPECT_EQ(summary->rejected, 0u);
  EXPECT_TRUE(summary->errors.empty());
  std::vector<store::ActivityRecord> rows = Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].project_id, project_id_);
  EXPECT_EQ(rows[0].chain_id, 1);
  EXPECT_EQ(rows[0].count, 3);
  EXPECT_EQ(rows[0].last_seen, *ParseRfc3339("2025-12-20T00:00:00Z"));
}

TEST_F(ActivityImportTest, ReportsBadLinesWithLineNumbersAndKeepsGoodOnes) {
  std::string ndjson =
      Line(R"("project":"uniswap")", "2025-12-01T00:00:00Z") +   // 1 ok
      "not json\n" +                                               // 2
      "[1,2]\n" +                                                  // 3
      Line(R"("project":"nope")", "2025-12-01T00:00:00Z") +        // 4 unknown slug
      Line(R"("contract":"0x0000000000000000000000000000000000000009")",
           "2025-12-01T00:00:00Z") +                               // 5 unknown contract
      Line(std::string(R"("contract":")") + kContract + "\"", "2025-12-01T00:00:00Z",
           10) +                                                   // 6 contract on other chain
      Line(R"("project":"uniswap")", "yesterday") +                // 7 bad timestamp
      Line(R"("project":"uniswap")", "2026-01-02T00:00:01Z") +     // 8 > 1 day in future
      Line(R"("project":"uniswap")", "2026-01-01T23:00:00Z") +     // 9 ok (< 1 day ahead)
      R"({"wallet":"0x12","project":"uniswap","chainId":1,"timestamp":"2025-12-01T00:00:00Z"})"
      "\n" +                                                       // 10 bad wallet
      Line(R"("project":"uniswap","contract":"0x1")", "2025-12-01T00:00:00Z") +  // 11 both
      R"({"wallet":")" + std::string(kWallet) +
      R"(","project":"uniswap","chainId":"1","timestamp":"2025-12-01T00:00:00Z"})" + "\n" +
      "   \r\n";                                                   // 13 blank
  auto summary = Import(ndjson);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->imported, 2u);
  EXPECT_EQ(summary->rejected, 10u);
  std::vector<size_t> lines;
  for (const ImportError& e : summary->errors) lines.push_back(e.line);
  EXPECT_EQ(lines, (std::vector<size_t>{2, 3, 4, 5, 6, 7, 8, 10, 11, 12}));
  std::vector<store::ActivityRecord> rows = Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 2);
}

TEST_F(ActivityImportTest, CapsReportedErrorsButCountsAllRejections) {
  std::string ndjson;
  for (int i = 0; i < 150; ++i) ndjson += "{}\n";
  auto summary = Import(ndjson);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->rejected, 150u);
  EXPECT_EQ(summary->errors.size(), kMaxReportedErrors);
  EXPECT_EQ(summary->errors.back().line, 100u);
}

TEST_F(ActivityImportTest, EmptyInputWritesNothing) {
  auto summary = Import("");
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->imported, 0u);
  EXPECT_TRUE(Rows().empty());
}

}  // namespace
}  // namespace adserver::ingest
