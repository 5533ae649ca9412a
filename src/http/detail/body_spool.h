#pragma once

// A request body kept in a file instead of the heap: a bulk upload (an activity export, a
// project list) is written to an unlinked temporary file as it arrives and handed to the handler
// as a read-only memory map, so the server's memory does not grow with the uploads in flight
// and the page cache, not the heap, holds what the import reads.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace adserver::http::detail {

class BodySpool {
 public:
  BodySpool() = default;
  ~BodySpool() { Reset(); }
  BodySpool(const BodySpool&) = delete;
  BodySpool& operator=(const BodySpool&) = delete;

  // Creates the file in `dir` (empty: $TMPDIR, else /tmp): O_TMPFILE where the file system has
  // it, else a named file unlinked at once, so nothing is left behind by a crash. Unavailable if
  // the directory cannot take a file.
  Status Open(const std::string& dir);
  bool is_open() const { return fd_ >= 0; }
  // Appends `bytes` (a blocking write of the page cache). Unavailable on a write error (a full
  // disk): the file is then useless and should be Reset.
  Status Append(std::string_view bytes);
  uint64_t size() const { return size_; }
  // The whole content, mapped read-only (valid until Reset). Unavailable if it cannot be mapped.
  Result<std::string_view> Map();
  // Unmaps and closes the file (its blocks are freed then); the spool can be opened again.
  void Reset();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  void* map_ = nullptr;
  size_t map_size_ = 0;
};

}  // namespace adserver::http::detail
