#pragma once

// Input side of the bulk activity import (ingest/bulk_import.cc): a file, stdin or an in-memory
// request body, plain or gzip, read in large chunks, hashed for the import ledger and split into
// lines.

#include <sodium.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace adserver::ingest::detail {

// Decompressed bytes of one input. Not thread-safe; used by one thread at a time.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills up to `size` bytes of `out`; 0 at the end. InvalidArgument on corrupt gzip data,
  // Unavailable on a read error.
  virtual Result<size_t> Read(char* out, size_t size) = 0;
  // Input bytes consumed so far (compressed bytes for gzip) and in total (0 = unknown).
  virtual uint64_t consumed() const = 0;
  virtual uint64_t total() const = 0;
  // True if reading inflates gzip (then reading costs more than hashing).
  virtual bool compressed() const = 0;
  // Sources whose bytes are already in memory (a mapped file) hand out views of up to `size`
  // bytes instead of copying (empty at the end); nullopt if this source only copies. Views stay
  // valid as long as the source.
  virtual std::optional<std::string_view> View(size_t) { return std::nullopt; }
};

// A file ("-" = stdin), plain or gzip (detected by content); a plain regular file is mapped
// (no copy). Unavailable if it cannot be opened.
Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);
// A buffer (which must outlive the source): gzip if it starts with the gzip magic (several
// members are read one after the other), else plain.
std::unique_ptr<ByteSource> MemorySource(std::string_view content);
bool IsGzip(std::string_view content);

// Reads a ByteSource in chunks and hands out its lines; computes the BLAKE2b-256 digest of the
// decompressed content on the way (the import ledger's key). With `read_ahead`, a second thread
// reads and decompresses the next chunks while the caller parses (two cores); the hashing goes
// to the reading thread for plain input and to the caller for gzip input (inflating alone costs
// about as much as parsing), which balances the two threads. Otherwise everything runs on the
// calling thread.
// Next() and DigestHex() must be called from one thread.
class LineReader {
 public:
  struct Options {
    size_t chunk_bytes = 4 << 20;
    // Chunks read ahead (read_ahead only); bounds memory to about (queue + 2) chunks.
    size_t queue_chunks = 4;
    bool read_ahead = true;
    // Largest decompressed input: InvalidArgument beyond it (0 = no limit). Bounds the work a
    // small gzip body can cause.
    uint64_t max_bytes = 0;
  };

  LineReader(std::unique_ptr<ByteSource> source, const Options& options);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its "\n" or "\r\n"; false at the end. The view stays valid until the
  // next call. Returns the source's error, or InvalidArgument past `max_bytes`.
  Result<bool> Next(std::string_view& line);
  // 1-based number of the line last returned.
  uint64_t line() const { return line_; }
  // Input bytes consumed (see ByteSource::consumed) and the total (0 = unknown).
  uint64_t bytes_read() const;
  uint64_t total() const { return total_; }
  // Hex BLAKE2b-256 of all the decompressed content. REQUIRES: Next() returned false.
  std::string DigestHex();

 private:
  struct Chunk {
    std::unique_ptr<char[]> bytes;  // options_.chunk_bytes, uninitialised past `size`
    const char* data = nullptr;     // bytes.get(), or a view of the source
    size_t size = 0;
    Status status;  // a read error ends the input
    bool last = false;
  };
  // Reads (and hashes if hash_on_producer_) the next chunk, reusing `buffer` if not null.
  Chunk Produce(std::unique_ptr<char[]> buffer);
  // Counts a produced chunk against max_bytes, hashes it if hash_on_producer_, marks the end.
  Chunk Finish(Chunk chunk);
  void Hash(const Chunk& chunk);
  void ProducerLoop();
  // Replaces current_ by the next chunk; false at the end of the input.
  Result<bool> NextChunk();

  std::unique_ptr<ByteSource> source_;
  const Options options_;
  const uint64_t total_;
  const bool hash_on_producer_;
  crypto_generichash_state hash_;  // hash_on_producer_ ? producer side : caller side
  uint64_t produced_bytes_ = 0;    // producer side
  bool source_done_ = false;       // producer side

  mutable Mutex mu_;
  CondVar filled_cv_;
  CondVar free_cv_;
  std::deque<Chunk> filled_ ADS_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<char[]>> free_ ADS_GUARDED_BY(mu_);
  bool stop_ ADS_GUARDED_BY(mu_) = false;
  uint64_t consumed_ ADS_GUARDED_BY(mu_) = 0;
  std::thread producer_;

  Chunk current_;
  size_t pos_ = 0;
  bool at_end_ = false;
  std::string carry_;  // a line spanning chunks
  bool clear_carry_ = false;
  uint64_t line_ = 0;
};

// Splits one CSV line (RFC 4180 quoting, no newlines inside fields) into `fields`. Quoted fields
// with doubled quotes are unescaped into `scratch`, a deque so that the views already taken stay
// valid while it grows (a vector moves short strings' bytes when it reallocates). The views stay
// valid until the next call with the same `scratch` or until `line` goes away.
void SplitCsvLine(std::string_view line, std::vector<std::string_view>& fields,
                  std::deque<std::string>& scratch);

}  // namespace adserver::ingest::detail
