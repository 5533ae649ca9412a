// The bulk activity import readers (`adserver activity import`, POST /admin/v1/activity):
// ingest::BulkImportBuffer on CSV, NDJSON and gzip content into an in-memory SQLite store,
// the gzip helpers (Decompress, DecompressedPrefix) and the line reader with and without its
// read-ahead thread, which must hand out the same lines.
//
// Input: taken as is (plain or gzip by its magic bytes), except that a first byte
//   0x01 gzip-compresses the rest first (so that the fuzzer mutates what is inside a valid
//        gzip stream, not only the stream), and
//   0x02 takes the next line as a column mapping ("wallet=from,to;contract=to", roles split
//        at ';') and imports the rest.

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "fuzz_support.h"
#include "ingest/bulk_import.h"
#include "ingest/detail/input_reader.h"
#include "store/sqlite/sqlite_store.h"

namespace adserver::fuzz {
namespace {

// Largest decompressed input, as the admin API bounds an upload (keeps gzip bombs cheap).
constexpr uint64_t kMaxInputBytes = 1 << 20;

class FixedClock : public Clock {
 public:
  int64_t NowSeconds() const override { return kNow; }
  int64_t NowMicros() const override { return kNow * 1'000'000; }
};

struct Fixture {
  std::unique_ptr<store::SqliteStore> store;
  FixedClock clock;
};

Fixture& Shared() {
  static Fixture* fixture = [] {
    auto* f = new Fixture;
    f->store = std::move(store::SqliteStore::Open(":memory:")).value();
    // A project with the contract of the seeds, so that rows resolve to interactions.
    store::ProjectRecord usdc;
    usdc.slug = "usdc";
    usdc.name = "USD Coin";
    usdc.contracts = {{1, *ParseAddress("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48")}};
    Expect(f->store->CreateProject(usdc, kNow).ok(), "seed project");
    return f;
  }();
  return *fixture;
}

std::string Gzip(std::string_view plain) {
  z_stream z{};
  Expect(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  std::string out(deflateBound(&z, plain.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
  z.avail_in = static_cast<uInt>(plain.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  Expect(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::vector<std::string> Lines(std::string_view content, bool read_ahead, bool* ok) {
  ingest::detail::LineReader::Options options{
      .chunk_bytes = 61, .queue_chunks = 2, .read_ahead = read_ahead, .max_bytes = kMaxInputBytes};
  ingest::detail::LineReader reader(ingest::detail::MemorySource(content), options);
  std::vector<std::string> lines;
  std::string_view line;
  for (;;) {
    Result<bool> more = reader.Next(line);
    *ok = more.ok();
    if (!more.ok() || !*more) return lines;
    lines.emplace_back(line);
  }
}

void CheckReaders(std::string_view content) {
  bool ok_inline = false;
  bool ok_ahead = false;
  std::vector<std::string> inline_lines = Lines(content, false, &ok_inline);
  std::vector<std::string> ahead_lines = Lines(content, true, &ok_ahead);
  Expect(ok_inline == ok_ahead, "read-ahead fails like the inline reader");
  if (ok_inline) Expect(inline_lines == ahead_lines, "read-ahead reads the same lines");

  // Decompress works in 1 MiB steps: only worth its cost (a tenth of a second under ASan) on
  // gzip input, where it must agree with DecompressedPrefix.
  if (!ingest::IsGzipContent(content)) return;
  Result<std::string> all = ingest::Decompress(content, kMaxInputBytes);
  Result<std::string> prefix = ingest::DecompressedPrefix(content, 100);
  if (all.ok() && prefix.ok()) {
    Expect(*prefix == std::string_view(*all).substr(0, 100), "prefix of the decompressed bytes");
  }
}

void Import(std::string_view content, const ingest::ColumnMapping& mapping) {
  Fixture& f = Shared();
  ingest::BulkImportOptions options;
  options.mapping = mapping;
  // A store write sorts through a 256 KiB histogram (fixed cost, most of an execution here):
  // one write for most inputs, several for the largest.
  options.rows_per_batch = 200;
  options.max_input_bytes = kMaxInputBytes;
  Result<ingest::BulkImportSummary> summary =
      ingest::BulkImportBuffer(content, "fuzz", *f.store, *f.store, options, f.clock);
  if (!summary.ok()) return;
  Expect(summary->errors.size() <= summary->rejected, "reported errors are rejected rows");
  Expect(summary->rejected + summary->skipped_failed <= summary->rows, "rows add up");
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adserver;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  ingest::ColumnMapping mapping;
  std::string content(input);
  if (!input.empty() && input[0] == '\x01') {
    content = fuzz::Gzip(input.substr(1));
  } else if (!input.empty() && input[0] == '\x02') {
    std::string_view rest = input.substr(1);
    std::string_view specs = rest.substr(0, rest.find('\n'));
    content = std::string(rest.substr(std::min(rest.size(), specs.size() + 1)));
    while (!specs.empty()) {
      std::string_view spec = specs.substr(0, specs.find(';'));
      specs.remove_prefix(std::min(specs.size(), spec.size() + 1));
      if (!ingest::AddMapping(spec, mapping).ok()) return 0;
    }
  }
  fuzz::CheckReaders(content);
  fuzz::Import(content, mapping);
  return 0;
}
