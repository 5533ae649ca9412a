#include "http/detail/body_spool.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace adserver::http::detail {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

}  // namespace

Status BodySpool::Open(const std::string& dir) {
  Reset();
  std::string where = dir;
  if (where.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    where = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
#ifdef O_TMPFILE
  fd_ = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd_ < 0) {
    // File systems without O_TMPFILE: a named file, unlinked before anything is written.
    std::string name = where + "/.adserver-body-XXXXXX";
    std::vector<char> path(name.begin(), name.end());
    path.push_back('\0');
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ < 0) {
      return UnavailableError("cannot create a file for the request body in " + where + ": " +
                              ErrnoText(errno));
    }
    ::unlink(path.data());
  }
  size_ = 0;
  return OkStatus();
}

Status BodySpool::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return UnavailableError("cannot write the request body to its file: " +
                              ErrnoText(n < 0 ? errno : ENOSPC));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    size_ += static_cast<uint64_t>(n);
  }
  return OkStatus();
}

Result<std::string_view> BodySpool::Map() {
  if (size_ == 0) return std::string_view();
  if (map_ == nullptr) {
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (map == MAP_FAILED) {
      return UnavailableError("cannot map the request body's file: " + ErrnoText(errno));
    }
    ::madvise(map, size_, MADV_SEQUENTIAL);
    map_ = map;
    map_size_ = size_;
  }
  return std::string_view(static_cast<const char*>(map_), map_size_);
}

void BodySpool::Reset() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  size_ = 0;
}

}  // namespace adserver::http::detail
