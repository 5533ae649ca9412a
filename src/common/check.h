#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace adserver::detail {

// Streams a message and aborts when destroyed. Used only through ADS_CHECK.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond) {
    stream_ << file << ":" << line << ": check failed: " << cond << ": ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace adserver::detail

// ADS_CHECK(cond) << "why"; aborts the process when a broken invariant is detected.
#define ADS_CHECK(cond) \
  if (cond) {           \
  } else                \
    ::adserver::detail::CheckFailure(__FILE__, __LINE__, #cond).stream()
