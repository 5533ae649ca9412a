#include "ingest/detail/input_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "common/address.h"
#include "common/mutex.h"

namespace adserver::ingest::detail {
namespace {

constexpr size_t kDigestBytes = 32;
constexpr size_t kGzipBuffer = 1 << 20;

// gzread handles plain and gzip files alike (transparent mode reads plain files directly into
// the caller's buffer).
class GzFileSource final : public ByteSource {
 public:
  GzFileSource(gzFile file, uint64_t total) : file_(file), total_(total) {}
  ~GzFileSource() override { gzclose(file_); }
  Result<size_t> Read(char* out, size_t size) override {
    int n = gzread(file_, out, static_cast<unsigned>(std::min<size_t>(size, 1u << 30)));
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(file_, &code);
      if (code == Z_ERRNO) return UnavailableError("read error");
      return InvalidArgumentError(std::string("corrupt gzip data: ") + message);
    }
    return static_cast<size_t>(n);
  }
  uint64_t consumed() const override { return static_cast<uint64_t>(gzoffset(file_)); }
  uint64_t total() const override { return total_; }
  bool compressed() const override { return gzdirect(file_) == 0; }

 private:
  gzFile file_;
  uint64_t total_;
};

// A plain regular file, mapped: chunks are views of the page cache (no read() copy). Like any
// mapping, a file truncated by someone else during the import ends it with SIGBUS.
class MappedFileSource final : public ByteSource {
 public:
  MappedFileSource(const char* data, size_t size) : data_(data), size_(size) {}
  ~MappedFileSource() override { munmap(const_cast<char*>(data_), size_); }
  Result<size_t> Read(char* out, size_t size) override {
    std::optional<std::string_view> view = View(size);
    std::memcpy(out, view->data(), view->size());
    return view->size();
  }
  std::optional<std::string_view> View(size_t size) override {
    size_t n = std::min(size, size_ - pos_);
    std::string_view view(data_ + pos_, n);
    pos_ += n;
    return view;
  }
  uint64_t consumed() const override { return pos_; }
  uint64_t total() const override { return size_; }
  bool compressed() const override { return false; }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Maps `path` if it is a non-empty regular file that does not start with the gzip magic.
std::unique_ptr<ByteSource> MapPlainFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  std::unique_ptr<ByteSource> source;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    size_t size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::madvise(p, size, MADV_SEQUENTIAL);
      std::string_view head(static_cast<const char*>(p), std::min<size_t>(size, 2));
      if (IsGzip(head)) {
        ::munmap(p, size);
      } else {
        source = std::make_unique<MappedFileSource>(static_cast<const char*>(p), size);
      }
    }
  }
  ::close(fd);
  return source;
}

class PlainMemorySource final : public ByteSource {
 public:
  explicit PlainMemorySource(std::string_view content) : content_(content) {}
  Result<size_t> Read(char* out, size_t size) override {
    size_t n = std::min(size, content_.size() - pos_);
    std::memcpy(out, content_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t consumed() const override { return pos_; }
  uint64_t total() const override { return content_.size(); }
  bool compressed() const override { return false; }

 private:
  std::string_view content_;
  size_t pos_ = 0;
};

// Inflates gzip members one after the other (what `gzip -d` does with concatenated files).
class GzipMemorySource final : public ByteSource {
 public:
  explicit GzipMemorySource(std::string_view content) : content_(content) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
    stream_.avail_in = static_cast<uInt>(std::min<size_t>(content.size(), 1u << 30));
    ok_ = inflateInit2(&stream_, 15 + 16) == Z_OK;
  }
  ~GzipMemorySource() override {
    if (ok_) inflateEnd(&stream_);
  }
  Result<size_t> Read(char* out, size_t size) override {
    if (!ok_) return InternalError("cannot initialise zlib");
    size_t produced = 0;
    while (produced < size && !done_) {
      Refill();
      stream_.next_out = reinterpret_cast<Bytef*>(out + produced);
      stream_.avail_out = static_cast<uInt>(std::min<size_t>(size - produced, 1u << 30));
      uInt before = stream_.avail_out;
      int rc = inflate(&stream_, Z_NO_FLUSH);
      produced += before - stream_.avail_out;
      if (rc == Z_STREAM_END) {
        // Another member may follow; trailing zero bytes (padding) end the input.
        Refill();
        if (stream_.avail_in == 0 || stream_.next_in[0] == 0) {
          done_ = true;
        } else if (inflateReset(&stream_) != Z_OK) {
          return InternalError("cannot reset zlib");
        }
      } else if (rc == Z_BUF_ERROR && stream_.avail_in == 0) {
        return InvalidArgumentError("corrupt gzip data: unexpected end of input");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return InvalidArgumentError(std::string("corrupt gzip data: ") +
                                    (stream_.msg != nullptr ? stream_.msg : "inflate failed"));
      }
    }
    return produced;
  }
  uint64_t consumed() const override { return stream_.total_in; }
  uint64_t total() const override { return content_.size(); }
  bool compressed() const override { return true; }

 private:
  // zlib counts input in uInt: feed bodies over 1 GiB in slices.
  void Refill() {
    if (stream_.avail_in != 0) return;
    size_t offset =
        static_cast<size_t>(reinterpret_cast<const char*>(stream_.next_in) - content_.data());
    stream_.avail_in = static_cast<uInt>(std::min<size_t>(content_.size() - offset, 1u << 30));
  }
  std::string_view content_;
  z_stream stream_{};
  bool ok_ = false;
  bool done_ = false;
};

}  // namespace

bool IsGzip(std::string_view content) {
  return content.size() >= 2 && static_cast<uint8_t>(content[0]) == 0x1f &&
         static_cast<uint8_t>(content[1]) == 0x8b;
}

Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  if (path != "-") {
    if (std::unique_ptr<ByteSource> mapped = MapPlainFile(path)) return mapped;
  }
  gzFile file = path == "-" ? gzdopen(dup(STDIN_FILENO), "rb") : gzopen(path.c_str(), "rb");
  if (file == nullptr) return UnavailableError("cannot open " + path);
  gzbuffer(file, kGzipBuffer);
  uint64_t total = 0;
  if (path != "-") {
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    total = ec ? 0 : size;
  }
  return std::unique_ptr<ByteSource>(new GzFileSource(file, total));
}

std::unique_ptr<ByteSource> MemorySource(std::string_view content) {
  if (IsGzip(content)) return std::make_unique<GzipMemorySource>(content);
  return std::make_unique<PlainMemorySource>(content);
}

LineReader::LineReader(std::unique_ptr<ByteSource> source, const Options& options)
    : source_(std::move(source)),
      options_(options),
      total_(source_->total()),
      hash_on_producer_(options.read_ahead && !source_->compressed()) {
  crypto_generichash_init(&hash_, nullptr, 0, kDigestBytes);
  current_.last = false;
  pos_ = 0;
  if (options_.read_ahead) producer_ = std::thread([this] { ProducerLoop(); });
}

LineReader::~LineReader() {
  if (producer_.joinable()) {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    free_cv_.NotifyAll();
    producer_.join();
  }
}

LineReader::Chunk LineReader::Produce(std::unique_ptr<char[]> buffer) {
  Chunk chunk;
  if (std::optional<std::string_view> view = source_->View(options_.chunk_bytes)) {
    chunk.bytes = std::move(buffer);  // unused; kept for the next copying chunk
    chunk.data = view->data();
    chunk.size = view->size();
    source_done_ = view->empty();
    return Finish(std::move(chunk));
  }
  chunk.bytes =
      buffer ? std::move(buffer) : std::make_unique_for_overwrite<char[]>(options_.chunk_bytes);
  chunk.data = chunk.bytes.get();
  size_t filled = 0;
  // Fill the whole chunk: gzread returns less than asked at member boundaries.
  while (filled < options_.chunk_bytes && !source_done_) {
    Result<size_t> n = source_->Read(chunk.bytes.get() + filled, options_.chunk_bytes - filled);
    if (!n.ok()) {
      chunk.status = n.status();
      break;
    }
    if (*n == 0) source_done_ = true;
    filled += *n;
  }
  chunk.size = filled;
  return Finish(std::move(chunk));
}

LineReader::Chunk LineReader::Finish(Chunk chunk) {
  produced_bytes_ += chunk.size;
  if (chunk.status.ok() && options_.max_bytes != 0 && produced_bytes_ > options_.max_bytes) {
    chunk.status = InvalidFieldError("body", "decompressed input exceeds the limit of " +
                                                 std::to_string(options_.max_bytes) + " bytes");
  }
  if (hash_on_producer_) Hash(chunk);
  chunk.last = source_done_ || !chunk.status.ok();
  return chunk;
}

void LineReader::Hash(const Chunk& chunk) {
  if (!chunk.status.ok()) return;
  crypto_generichash_update(&hash_, reinterpret_cast<const uint8_t*>(chunk.data), chunk.size);
}

void LineReader::ProducerLoop() {
  while (true) {
    std::unique_ptr<char[]> buffer;
    {
      MutexLock lock(mu_);
      free_cv_.Wait(
          mu_, [&]() ADS_REQUIRES(mu_) { return stop_ || filled_.size() < options_.queue_chunks; });
      if (stop_) return;
      if (!free_.empty()) {
        buffer = std::move(free_.back());
        free_.pop_back();
      }
    }
    Chunk chunk = Produce(std::move(buffer));
    bool last = chunk.last;
    {
      MutexLock lock(mu_);
      consumed_ = source_->consumed();
      filled_.push_back(std::move(chunk));
    }
    filled_cv_.NotifyOne();
    if (last) return;
  }
}

Result<bool> LineReader::NextChunk() {
  if (current_.last) return false;
  if (!options_.read_ahead) {
    current_ = Produce(std::move(current_.bytes));
    const uint64_t consumed = source_->consumed();
    MutexLock lock(mu_);  // uncontended: no reader thread without read-ahead
    consumed_ = consumed;
  } else {
    MutexLock lock(mu_);
    filled_cv_.Wait(mu_, [&]() ADS_REQUIRES(mu_) { return !filled_.empty(); });
    if (current_.bytes) free_.push_back(std::move(current_.bytes));
    current_ = std::move(filled_.front());
    filled_.pop_front();
    lock.Unlock();
    free_cv_.NotifyOne();
  }
  pos_ = 0;
  if (!current_.status.ok()) return current_.status;
  if (!hash_on_producer_) Hash(current_);
  return true;
}

Result<bool> LineReader::Next(std::string_view& line) {
  if (clear_carry_) {
    carry_.clear();
    clear_carry_ = false;
  }
  while (true) {
    if (pos_ < current_.size) {
      const char* begin = current_.data + pos_;
      size_t left = current_.size - pos_;
      const char* nl = static_cast<const char*>(std::memchr(begin, '\n', left));
      if (nl != nullptr) {
        size_t length = static_cast<size_t>(nl - begin);
        pos_ += length + 1;
        if (carry_.empty()) {
          line = std::string_view(begin, length);
        } else {
          carry_.append(begin, length);
          line = carry_;
          clear_carry_ = true;
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++line_;
        return true;
      }
      carry_.append(begin, left);
      pos_ = current_.size;
    }
    if (at_end_) return false;
    ADS_ASSIGN_OR_RETURN(bool more, NextChunk());
    if (!more || (current_.last && current_.size == 0)) {
      at_end_ = true;
      if (carry_.empty()) return false;
      line = carry_;
      clear_carry_ = true;
      if (line.back() == '\r') line.remove_suffix(1);
      ++line_;
      return true;
    }
  }
}

uint64_t LineReader::bytes_read() const {
  MutexLock lock(mu_);
  return consumed_;
}

std::string LineReader::DigestHex() {
  if (producer_.joinable()) producer_.join();
  uint8_t digest[kDigestBytes];
  crypto_generichash_final(&hash_, digest, sizeof digest);
  return HexEncode(digest, sizeof digest);
}

void SplitCsvLine(std::string_view line, std::vector<std::string_view>& fields,
                  std::deque<std::string>& scratch) {
  fields.clear();
  scratch.clear();
  size_t i = 0;
  while (true) {
    if (i < line.size() && line[i] == '"') {
      size_t start = ++i;
      bool escaped = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            escaped = true;
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      std::string_view raw = line.substr(start, i - start);
      if (escaped) {
        std::string s;
        for (size_t k = 0; k < raw.size(); ++k) {
          s.push_back(raw[k]);
          if (raw[k] == '"') ++k;
        }
        scratch.push_back(std::move(s));
        raw = scratch.back();
      }
      fields.push_back(raw);
      i = std::min(line.find(',', i), line.size());
    } else {
      size_t end = std::min(line.find(',', i), line.size());
      fields.push_back(line.substr(i, end - i));
      i = end;
    }
    if (i >= line.size()) break;
    ++i;  // the comma
  }
}

}  // namespace adserver::ingest::detail
