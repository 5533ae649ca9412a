#include "ingest/bulk_import.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::ingest {
namespace {

constexpr int64_t kNow = 1'767'225'600;  // 2026-01-01
constexpr char kUsdc[] = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48";
constexpr char kA[] = "0x1111111111111111111111111111111111111111";
constexpr char kB[] = "0x2222222222222222222222222222222222222222";

class FixedClock : public Clock {
 public:
  int64_t NowSeconds() const override { return kNow; }
  int64_t NowMicros() const override { return kNow * 1'000'000; }
};

class BulkImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::SqliteStore::Open(dir_.File("ads.db"))).value();
    store::ProjectRecord p;
    p.slug = "usdc";
    p.name = "USD Coin";
    p.contracts = {{1, *ParseAddress(kUsdc)}};
    project_ = store_->CreateProject(p, kNow)->id;
    options_.ledger_path = dir_.File("imports.ledger");
  }
  std::string Write(const std::string& name, const std::string& content, bool gzip = false) {
    std::string path = dir_.File(name);
    if (gzip) {
      gzFile f = gzopen(path.c_str(), "wb");
      gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
      gzclose(f);
    } else {
      std::ofstream(path) << content;
    }
    return path;
  }
  BulkImportSummary Import(const std::string& path) {
    auto s = BulkImportFile(path, *store_, *store_, options_, clock_);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : BulkImportSummary{};
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<store::ActivityRecord> Rows(const char* wallet) {
    return *store_->ActivityForWallet(*ParseAddress(wallet));
  }

  testing::TempDir dir_;
  std::unique_ptr<store::SqliteStore> store_;
  store::Id project_ = 0;
  BulkImportOptions options_;
  FixedClock clock_;
};

TEST_F(BulkImportTest, BigQueryTransactionsCsvSkipsFailedAndCountsUnknown) {
  std::string csv =
      "hash,nonce,from_address,to_address,value,block_timestamp,block_number,receipt_status\n"
      "0x01,1," +
      std::string(kA) + "," + kUsdc +
      ",0,2025-12-20 10:00:00 UTC,1,1\n"
      "0x02,2," +
      kA + "," + kUsdc +
      ",0,2025-12-21 10:00:00 UTC,2,0\n"
      "0x03,3," +
      kA +
      ",0x3333333333333333333333333333333333333333,0,2025-12-22 10:00:00 UTC,3,1\n"
      "0x04,4," +
      kB + ",,0,2025-12-22 10:00:00 UTC,4,1\n";
  BulkImportSummary s = Import(Write("tx.csv", csv));
  EXPECT_EQ(s.shape, "bigquery.transactions");
  EXPECT_EQ(s.rows, 4u);
  EXPECT_EQ(s.interactions, 1u);
  EXPECT_EQ(s.skipped_failed, 1u);
  EXPECT_EQ(s.unknown_contract, 2u);
  auto rows = Rows(kA);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].project_id, project_);
  EXPECT_EQ(rows[0].last_seen / 86400, *ParseDay("2025-12-20"));
}

TEST_F(BulkImportTest, BigQueryTokenTransfersJsonCreditsSenderAndRecipient) {
  std::string json = "{\"token_address\":\"" + std::string(kUsdc) + "\",\"from_address\":\"" + kA +
                     "\",\"to_address\":\"" + kB +
                     "\",\"value\":\"123456789012345678901234567890\",\"block_timestamp\":"
                     "\"2025-12-20 10:00:00 UTC\",\"block_number\":\"5\"}\n";
  BulkImportSummary s = Import(Write("tt.json.gz", json, /*gzip=*/true));
  EXPECT_EQ(s.shape, "bigquery.token_transfers");
  EXPECT_EQ(s.interactions, 2u);
  EXPECT_EQ(Rows(kA).size(), 1u);
  EXPECT_EQ(Rows(kB).size(), 1u);
}

TEST_F(BulkImportTest, FlattenedLogsTakeWalletsFromAddressTopics) {
  std::string pad = "0x000000000000000000000000";
  std::string csv = "address,topic0,topic1,topic2,topic3,data,block_timestamp\n" +
                    std::string(kUsdc) + ",0xddf2," + pad + std::string(kA).substr(2) + "," + pad +
                    std::string(kB).substr(2) + ",,0x,2025-12-20T10:00:00Z\n";
  BulkImportSummary s = Import(Write("logs.csv", csv));
  EXPECT_EQ(s.shape, "bigquery.logs");
  EXPECT_EQ(s.interactions, 2u);
}

TEST_F(BulkImportTest, DuneTransactionsWithBackslashHex) {
  std::string csv =
      "block_time,hash,\"from\",\"to\",success\n"
      "2025-12-20 10:00:00.000 UTC,\\x01,\\x" +
      std::string(kA).substr(2) + ",\\x" + std::string(kUsdc).substr(2) + ",true\n";
  BulkImportSummary s = Import(Write("dune.csv", csv));
  EXPECT_EQ(s.shape, "dune.transactions");
  EXPECT_EQ(s.interactions, 1u);
}

TEST_F(BulkImportTest, CryoTransactionsWithoutTimestampsUseTheImportDay) {
  std::string csv =
      "block_number,transaction_index,from_address,to_address,chain_id\n"
      "1,0," +
      std::string(kA) + "," + kUsdc + ",1\n";
  BulkImportSummary s = Import(Write("ethereum__transactions__1_to_2.csv", csv));
  EXPECT_EQ(s.shape, "cryo.transactions");
  auto rows = Rows(kA);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].last_seen, kNow);
}

TEST_F(BulkImportTest, OwnNdjsonBySlugAndByContract) {
  std::string nd = "{\"wallet\":\"" + std::string(kA) +
                   "\",\"project\":\"usdc\",\"chainId\":1,\"timestamp\":\"2025-12-20T00:00:00Z\"}\n"
                   "{\"wallet\":\"" +
                   kB + "\",\"contract\":\"" + kUsdc +
                   "\",\"chainId\":1,\"timestamp\":\"2025-12-21T00:00:00Z\"}\n";
  BulkImportSummary s = Import(Write("a.ndjson", nd));
  EXPECT_EQ(s.shape, "adserver");
  EXPECT_EQ(s.interactions, 2u);
}

TEST_F(BulkImportTest, ColumnMappingForArbitraryHeaders) {
  options_.mapping = {};
  ASSERT_TRUE(AddMapping("wallet=sender", options_.mapping).ok());
  ASSERT_TRUE(AddMapping("contract=pool", options_.mapping).ok());
  ASSERT_TRUE(AddMapping("time=day", options_.mapping).ok());
  std::string csv = "sender,pool,day\n" + std::string(kA) + "," + kUsdc + ",2025-12-20\n";
  BulkImportSummary s = Import(Write("custom.csv", csv));
  EXPECT_EQ(s.interactions, 1u);
  EXPECT_EQ(AddMapping("colour=x", options_.mapping).code(), Code::kInvalidArgument);
}

TEST_F(BulkImportTest, MalformedRowsAreReportedWithLineNumbersAndSkipped) {
  std::string csv = "from_address,to_address,block_timestamp\n" + std::string(kA) + "," + kUsdc +
                    ",2025-12-20 10:00:00 UTC\n"
                    "0xnothex," +
                    kUsdc +
                    ",2025-12-20 10:00:00 UTC\n"
                    "only,two\n" +
                    kB + "," + kUsdc + ",yesterday\n";
  BulkImportSummary s = Import(Write("bad.csv", csv));
  EXPECT_EQ(s.interactions, 1u);
  EXPECT_EQ(s.rejected, 3u);
  ASSERT_EQ(s.errors.size(), 3u);
  EXPECT_EQ(s.errors[0].line, 3u);
  EXPECT_EQ(s.errors[1].line, 4u);
  EXPECT_EQ(s.errors[2].line, 5u);
}

TEST_F(BulkImportTest, ReimportingTheSameFileChangesNothing) {
  std::string path = Write("tx.csv", "from_address,to_address,block_timestamp\n" + std::string(kA) +
                                         "," + kUsdc + ",2025-12-20 10:00:00 UTC\n");
  Import(path);
  BulkImportSummary again = Import(path);
  EXPECT_TRUE(again.already_imported);
  auto rows = Rows(kA);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].count, 1);
}

TEST_F(BulkImportTest, BufferImportReadsPlainAndGzipBodies) {
  std::string csv = "token_address,from_address,to_address,block_timestamp\n" + std::string(kUsdc) +
                    "," + kA + "," + kB + ",2025-12-20 10:00:00 UTC\n";
  auto plain = BulkImportBuffer(csv, "body", *store_, *store_, options_, clock_);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->shape, "bigquery.token_transfers");
  EXPECT_EQ(plain->interactions, 2u);
  // The same content gzip-compressed is the same content for the ledger.
  std::string gz = ReadFile(Write("tt.csv.gz", csv, /*gzip=*/true));
  auto again = BulkImportBuffer(gz, "body", *store_, *store_, options_, clock_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->already_imported);
  EXPECT_EQ(Rows(kA)[0].count, 1);
  auto corrupt =
      BulkImportBuffer(gz.substr(0, gz.size() - 12), "body", *store_, *store_, options_, clock_);
  EXPECT_EQ(corrupt.status().code(), Code::kInvalidArgument);
}

// adserver's NDJSON in a gzip body is imported while it is inflated: the same rows, line
// numbers and ledger digest as the plain content, and the limits of Decompress.
TEST_F(BulkImportTest, OwnNdjsonGzipBufferIsImportedWhileInflated) {
  std::string nd;
  for (int i = 0; i < 2000; ++i) {
    nd += "{\"wallet\":\"" + std::string(i % 2 == 0 ? kA : kB) +
          "\",\"project\":\"usdc\",\"chainId\":1,\"timestamp\":\"2025-12-20T00:00:00Z\"}\r\n";
    if (i == 1500) nd += "\n{\"wallet\":\"nope\"}\n";  // a blank line, then a bad one
  }
  std::string gz = ReadFile(Write("own.ndjson.gz", nd, /*gzip=*/true));
  Result<std::string> digest = DecompressedDigestHex(gz, 0);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, ContentDigestHex(nd));
  EXPECT_EQ(*DecompressedDigestHex(nd, 0), ContentDigestHex(nd));

  Result<ImportSummary> s = ImportActivityNdjsonBuffer(gz, 0, *store_, *store_, clock_, nullptr);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->imported, 2000u);
  EXPECT_EQ(s->rejected, 1u);
  ASSERT_EQ(s->errors.size(), 1u);
  EXPECT_EQ(s->errors[0].line, 1503u);  // 1501 rows, the blank line, then the bad one
  EXPECT_EQ(Rows(kA)[0].count, 1000);
  EXPECT_EQ(Rows(kB)[0].count, 1000);

  for (auto result :
       {DecompressedDigestHex(gz, 1000).status(),
        ImportActivityNdjsonBuffer(gz, 1000, *store_, *store_, clock_, nullptr).status()}) {
    EXPECT_EQ(result.code(), Code::kInvalidArgument);
    ASSERT_EQ(result.details().size(), 1u) << result.ToString();
    EXPECT_EQ(result.details()[0].field, "body");
    EXPECT_NE(result.details()[0].message.find("exceeds the limit"), std::string::npos);
  }
  std::string corrupt = gz.substr(0, gz.size() / 2);
  EXPECT_EQ(DecompressedDigestHex(corrupt, 0).status().code(), Code::kInvalidArgument);
  Status broken =
      ImportActivityNdjsonBuffer(corrupt, 0, *store_, *store_, clock_, nullptr).status();
  EXPECT_EQ(broken.code(), Code::kInvalidArgument);
  ASSERT_EQ(broken.details().size(), 1u) << broken.ToString();
  EXPECT_EQ(broken.details()[0].field, "body");
  EXPECT_EQ(Rows(kA)[0].count, 1000) << "a failed import wrote rows";
}

TEST_F(BulkImportTest, UnmappableHeaderNamesTheMapField) {
  auto s = BulkImportBuffer("a,b\n1,2\n", "body", *store_, *store_, options_, clock_);
  ASSERT_EQ(s.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(s.status().details().size(), 1u);
  EXPECT_EQ(s.status().details()[0].field, "map");
}

// Enough distinct keys to grow the aggregation table many times, checked against a std::map.
TEST_F(BulkImportTest, AggregatesManyWalletsExactly) {
  std::string csv = "token_address,from_address,to_address,block_timestamp\n";
  std::map<std::string, std::pair<int64_t, int64_t>> want;  // wallet -> (count, last day)
  uint64_t x = 12345;
  auto wallet = [&](uint64_t i) {
    char buf[43];
    std::snprintf(buf, sizeof buf, "0x%016llx%024llx",
                  static_cast<unsigned long long>(i * 0x9E3779B97F4A7C15ull),
                  static_cast<unsigned long long>(i));
    return std::string(buf);
  };
  for (int row = 0; row < 60000; ++row) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::string from = wallet(1 + (x >> 50)), to = wallet(1 + ((x >> 20) & 0x3FFF));
    int day = 1 + static_cast<int>((x >> 8) % 28);
    char date[32];
    std::snprintf(date, sizeof date, "2025-11-%02d 10:00:00 UTC", day);
    csv += std::string(kUsdc) + "," + from + "," + to + "," + date + "\n";
    int64_t d = *ParseDay(date);
    for (const std::string& w : {from, to}) {
      auto& [count, last] = want[w];
      ++count;
      last = std::max(last, d);
    }
  }
  auto s = BulkImportBuffer(csv, "many", *store_, *store_, options_, clock_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->interactions, 120000u);
  size_t checked = 0;
  for (const auto& [w, expect] : want) {
    if (++checked % 97 != 0) continue;
    auto rows = Rows(w.c_str());
    ASSERT_EQ(rows.size(), 1u) << w;
    EXPECT_EQ(rows[0].count, expect.first) << w;
    EXPECT_EQ(rows[0].last_seen / 86400, expect.second) << w;
  }
}

// Records what an import hands over; wants one project, from one time on.
class RecordingSink final : public TransactionSink {
 public:
  RecordingSink(int64_t project, int64_t since) : project_(project), since_(since) {}
  bool Wants(int64_t project_id, int64_t unix_seconds) const override {
    return project_id == project_ && unix_seconds >= since_;
  }
  Status OnImported(std::span<const chain::ChainInteraction> interactions) override {
    if (fail) return UnavailableError("events database is locked");
    got.insert(got.end(), interactions.begin(), interactions.end());
    return OkStatus();
  }
  std::vector<chain::ChainInteraction> got;
  bool fail = false;

 private:
  int64_t project_;
  int64_t since_;
};

TEST_F(BulkImportTest, RowsNamingATransactionGoToTheTransactionSink) {
  RecordingSink sink(project_, kNow - 86400);
  options_.transactions = &sink;
  std::string tx(64, 'a');
  std::string csv =
      "token_address,from_address,to_address,value,transaction_hash,log_index,block_number,"
      "block_timestamp\n" +
      // Recent: handed over for both parties.
      std::string(kUsdc) + "," + kA + "," + kB + ",1,0x" + tx + ",3,500,2025-12-31 12:00:00 UTC\n" +
      // Too old for the sink (outside every window).
      kUsdc + "," + kA + "," + kB + ",1,0x" + std::string(64, 'b') +
      ",4,400,2025-12-01 12:00:00 UTC\n" +
      // No hash, and a hash that is not one: activity only, counted.
      kUsdc + "," + kA + "," + kB + ",1,,5,500,2025-12-31 12:00:00 UTC\n" + kUsdc + "," + kA +
      "," + kB + ",1,0xnothex,6,500,2025-12-31 12:00:00 UTC\n";
  BulkImportSummary s = Import(Write("tt.csv", csv));
  EXPECT_EQ(s.interactions, 8u);
  EXPECT_EQ(s.transactions, 2u);
  EXPECT_EQ(s.invalid_tx_hashes, 2u);
  EXPECT_EQ(s.rejected, 0u);
  ASSERT_EQ(sink.got.size(), 2u);
  const chain::ChainInteraction& first = sink.got[0];
  EXPECT_EQ(first.wallet, *ParseAddress(kA));
  EXPECT_EQ(sink.got[1].wallet, *ParseAddress(kB));
  EXPECT_EQ(first.project_id, project_);
  EXPECT_EQ(first.chain_id, 1);
  EXPECT_EQ(first.tx_hash.bytes[0], 0xaa);
  EXPECT_EQ(first.log_index, 3u);
  EXPECT_EQ(first.block_number, 500u);
  EXPECT_EQ(first.block_time, kNow - 12 * 3600);
  // The same file again: the ledger skips it, nothing handed over twice.
  sink.got.clear();
  EXPECT_TRUE(Import(Write("tt.csv", csv)).already_imported);
  EXPECT_TRUE(sink.got.empty());
}

TEST_F(BulkImportTest, AnImportWhoseTransactionsTheSinkRefusesWritesNothing) {
  RecordingSink sink(project_, kNow - 86400);
  sink.fail = true;
  options_.transactions = &sink;
  std::string csv =
      "token_address,from_address,to_address,value,transaction_hash,log_index,block_number,"
      "block_timestamp\n" +
      std::string(kUsdc) + "," + kA + "," + kB + ",1,0x" + std::string(64, 'a') +
      ",3,500,2025-12-31 12:00:00 UTC\n";
  std::string path = Write("tt.csv", csv);
  EXPECT_FALSE(BulkImportFile(path, *store_, *store_, options_, clock_).ok());
  EXPECT_TRUE(Rows(kA).empty());
  // Not in the ledger: sending it again once the sink takes it imports it.
  sink.fail = false;
  BulkImportSummary s = Import(path);
  EXPECT_FALSE(s.already_imported);
  EXPECT_EQ(sink.got.size(), 2u);
  EXPECT_EQ(Rows(kA).size(), 1u);
}

TEST_F(BulkImportTest, OwnNdjsonLinesWithATxHashGoToTheTransactionSink) {
  RecordingSink sink(project_, 0);
  std::string tx = "0x" + std::string(64, 'c');
  std::string ndjson =
      "{\"wallet\":\"" + std::string(kA) +
      "\",\"project\":\"usdc\",\"chainId\":1,\"timestamp\":\"2025-12-31T00:00:00Z\","
      "\"txHash\":\"" + tx + "\",\"blockNumber\":7}\n" +
      "{\"wallet\":\"" + kB +
      "\",\"project\":\"usdc\",\"chainId\":1,\"timestamp\":\"2025-12-31T00:00:00Z\","
      "\"txHash\":\"0x12\"}\n";
  auto s = ImportActivityNdjson(ndjson, *store_, *store_, clock_, &sink);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->imported, 1u);
  ASSERT_EQ(s->rejected, 1u);  // a txHash that is not one is the line's error
  EXPECT_NE(s->errors[0].message.find("txHash"), std::string::npos);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].block_number, 7u);
  EXPECT_FALSE(sink.got[0].log_index.has_value());
  EXPECT_EQ(sink.got[0].block_time, kNow - 86400);
}

TEST(LedgerTest, ConcurrentImportsOfTheSameContentWriteOnce) {
  testing::TempDir dir;
  std::string ledger = dir.File("imports.ledger");
  std::atomic<int> writes{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto ran = WriteOnce(ledger, ContentDigestHex("same"), "t", false, [&]() -> Result<uint64_t> {
        writes.fetch_add(1);
        return 1;
      });
      EXPECT_TRUE(ran.ok());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(writes.load(), 1);
  auto forced = WriteOnce(ledger, ContentDigestHex("same"), "t", /*force=*/true,
                          []() -> Result<uint64_t> { return 1; });
  EXPECT_TRUE(*forced);
  auto failed = WriteOnce(ledger, ContentDigestHex("other"), "t", false,
                          []() -> Result<uint64_t> { return UnavailableError("down"); });
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  auto retried = WriteOnce(ledger, ContentDigestHex("other"), "t", false,
                           []() -> Result<uint64_t> { return 1; });
  EXPECT_TRUE(*retried);  // a failed write is not remembered
}

TEST(ParseTest, AddressesAndDays) {
  EXPECT_TRUE(ParseAnyAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"));
  EXPECT_FALSE(
      ParseAnyAddress("0x0000000000000000000000010000000000000000000000000000000000000000"));
  EXPECT_EQ(ParseDay("1970-01-02T00:00:00Z"), 1u);
  EXPECT_EQ(ParseDay("86400"), 1u);
  EXPECT_EQ(ParseDay("2026-01-01 00:00:00 UTC"), 20454u);
  EXPECT_FALSE(ParseDay("yesterday"));
}

TEST(ParseTest, SecondsAndTransactionHashes) {
  EXPECT_EQ(ParseSeconds("2026-01-01 00:00:01 UTC"), 1'767'225'601);
  EXPECT_EQ(ParseSeconds("2026-01-01 10:20:30.123 UTC"), 1'767'225'600 + 37'230);
  EXPECT_EQ(ParseSeconds("2026-01-01T02:00:00+02:00"), 1'767'225'600);
  EXPECT_EQ(ParseSeconds("1767225600000"), 1'767'225'600);  // milliseconds
  EXPECT_EQ(ParseSeconds("2026-01-01"), 1'767'225'600);
  EXPECT_FALSE(ParseSeconds("2026-01-01 25:00:00 UTC"));
  EXPECT_FALSE(ParseSeconds("soon"));
  EXPECT_TRUE(ParseTxHash("0x" + std::string(64, 'F')));
  EXPECT_TRUE(ParseTxHash("\\x" + std::string(64, '0')));
  EXPECT_FALSE(ParseTxHash("0x" + std::string(63, 'a')));
  EXPECT_FALSE(ParseTxHash("0x" + std::string(63, 'a') + "g"));
}

}  // namespace
}  // namespace adserver::ingest
