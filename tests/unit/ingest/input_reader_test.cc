#include "ingest/detail/input_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <deque>
#include <fstream>
#include <string>
#include <vector>

#include "ingest/bulk_import.h"
#include "support/temp_dir.h"

namespace adserver::ingest::detail {
namespace {

std::string Gzip(const std::string& content) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, content.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
  z.avail_in = static_cast<uInt>(content.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct ReadResult {
  std::vector<std::string> lines;
  Status status;
  std::string digest;
};

ReadResult ReadAll(std::string_view content, LineReader::Options options) {
  LineReader reader(MemorySource(content), options);
  ReadResult out;
  std::string_view line;
  while (true) {
    Result<bool> more = reader.Next(line);
    if (!more.ok()) {
      out.status = more.status();
      return out;
    }
    if (!*more) break;
    out.lines.emplace_back(line);
    EXPECT_EQ(reader.line(), out.lines.size());
  }
  out.digest = reader.DigestHex();
  return out;
}

// Tiny chunks put chunk boundaries inside lines, at "\r\n" and right after "\n".
TEST(LineReaderTest, LinesSpanningChunksAreWholeWithAndWithoutReadAhead) {
  std::string content = "a,b,c\r\nfirst line\n\nsecond, longer line than a chunk\r\nlast";
  std::vector<std::string> want = {"a,b,c", "first line", "", "second, longer line than a chunk",
                                   "last"};
  for (bool read_ahead : {false, true}) {
    for (size_t chunk : {1u, 2u, 3u, 7u, 64u, 4096u}) {
      ReadResult r =
          ReadAll(content, {.chunk_bytes = chunk, .queue_chunks = 2, .read_ahead = read_ahead});
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      EXPECT_EQ(r.lines, want) << "chunk " << chunk << " read_ahead " << read_ahead;
      EXPECT_EQ(r.digest, ContentDigestHex(content));
    }
  }
}

// Plain files are mapped (chunks are views), gzip files are inflated: same lines, same digest.
TEST(LineReaderTest, PlainAndGzipFilesReadTheSame) {
  testing::TempDir dir;
  std::string content = "h1,h2\n";
  for (int i = 0; i < 5000; ++i) content += std::to_string(i) + ",x\r\n";
  std::ofstream(dir.File("a.csv"), std::ios::binary) << content;
  std::ofstream(dir.File("a.csv.gz"), std::ios::binary) << Gzip(content);
  for (const char* name : {"a.csv", "a.csv.gz"}) {
    for (bool read_ahead : {false, true}) {
      auto source = OpenFileSource(dir.File(name));
      ASSERT_TRUE(source.ok());
      LineReader reader(std::move(source).value(),
                        {.chunk_bytes = 1000, .queue_chunks = 2, .read_ahead = read_ahead});
      std::string_view line;
      size_t lines = 0;
      while (*reader.Next(line)) {
        if (lines > 0) {
          EXPECT_EQ(line, std::to_string(lines - 1) + ",x") << name;
        }
        ++lines;
      }
      EXPECT_EQ(lines, 5001u) << name;
      EXPECT_EQ(reader.DigestHex(), ContentDigestHex(content)) << name;
    }
  }
  EXPECT_EQ(OpenFileSource(dir.File("missing.csv")).status().code(), Code::kUnavailable);
}

TEST(LineReaderTest, GzipMembersAreReadOneAfterTheOther) {
  std::string body = Gzip("x,y\n1,2\n") + Gzip("3,4\n");
  ASSERT_TRUE(IsGzip(body));
  ReadResult r = ReadAll(body, {.chunk_bytes = 5, .read_ahead = false});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.lines, (std::vector<std::string>{"x,y", "1,2", "3,4"}));
  EXPECT_EQ(r.digest, ContentDigestHex("x,y\n1,2\n3,4\n"));
}

TEST(LineReaderTest, CorruptOrTruncatedGzipIsInvalidArgument) {
  std::string body = Gzip(std::string(10000, 'a') + "\n");
  std::string truncated = body.substr(0, body.size() / 2);
  EXPECT_EQ(ReadAll(truncated, {.read_ahead = false}).status.code(), Code::kInvalidArgument);
  std::string corrupt = body;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);
  corrupt[13] = static_cast<char>(corrupt[13] ^ 0x55);
  EXPECT_EQ(ReadAll(corrupt, {.read_ahead = true}).status.code(), Code::kInvalidArgument);
}

TEST(LineReaderTest, DecompressedInputOverTheLimitIsRejected) {
  std::string body = Gzip(std::string(100000, '\n'));
  ReadResult r = ReadAll(body, {.chunk_bytes = 4096, .read_ahead = true, .max_bytes = 50000});
  EXPECT_EQ(r.status.code(), Code::kInvalidArgument);
  ASSERT_EQ(r.status.details().size(), 1u);
  EXPECT_EQ(r.status.details()[0].field, "body");
  EXPECT_TRUE(ReadAll(body, {.max_bytes = 100000}).status.ok());
}

TEST(LineReaderTest, StoppingEarlyJoinsTheReadAheadThread) {
  std::string content(1 << 20, 'x');
  for (size_t i = 0; i < content.size(); i += 100) content[i] = '\n';
  LineReader reader(MemorySource(content), {.chunk_bytes = 1024, .queue_chunks = 1});
  std::string_view line;
  ASSERT_TRUE(*reader.Next(line));
  // The destructor stops the producer while it waits for a free slot.
}

TEST(SplitCsvLineTest, QuotedFieldsCommasAndEmptyFields) {
  std::vector<std::string_view> fields;
  std::deque<std::string> scratch;
  SplitCsvLine(R"(a,"b,c",,"",d)", fields, scratch);
  EXPECT_EQ(fields, (std::vector<std::string_view>{"a", "b,c", "", "", "d"}));
  SplitCsvLine("", fields, scratch);
  EXPECT_EQ(fields, (std::vector<std::string_view>{""}));
  SplitCsvLine(R"("unterminated,x)", fields, scratch);
  EXPECT_EQ(fields, (std::vector<std::string_view>{"unterminated,x"}));
}

// Found by the bulk_import fuzzer: the unescaped copies of earlier fields must stay valid
// while more are added (short strings' bytes move when a vector of strings reallocates).
TEST(SplitCsvLineTest, ManyEscapedFieldsKeepTheirValues) {
  std::string line;
  std::vector<std::string> expected;
  for (int i = 0; i < 200; ++i) {
    std::string n = std::to_string(i);
    if (i) line.push_back(',');
    line.append("\"f").append(n).append("\"\"q\"");
    expected.push_back(std::string("f").append(n).append("\"q"));
  }
  std::vector<std::string_view> fields;
  std::deque<std::string> scratch;
  SplitCsvLine(line, fields, scratch);
  ASSERT_EQ(fields.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(fields[i], expected[i]) << i;
}

}  // namespace
}  // namespace adserver::ingest::detail
