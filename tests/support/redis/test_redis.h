#pragma once

// The tests' Redis (tests/support/redis.sh, started by CTest's `redis` fixture, which sets
// ADSERVER_TEST_REDIS_DIR), and a key prefix of the test's own so that test binaries sharing it
// never see each other's keys.

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

namespace adserver::testing {

class TestRedis {
 public:
  TestRedis() {
    static std::atomic<int> next{0};
    prefix_ = "test:" + std::to_string(getpid()) + ":" + std::to_string(next++) + ":";
    const char* dir = std::getenv("ADSERVER_TEST_REDIS_DIR");
    const char* required = std::getenv("ADSERVER_REQUIRE_REDIS");
    if (dir == nullptr) {
      (required != nullptr && std::string(required) == "1" ? error_ : skip_reason_) =
          "no test Redis: run through CTest (its `redis` fixture starts one)";
      return;
    }
    std::ifstream in(std::string(dir) + "/url");
    if (!std::getline(in, url_) || url_.empty()) {
      url_.clear();
      error_ = std::string("no Redis URL in ") + dir + "/url (did the redis_start test fail?)";
    }
  }
  const std::string& url() const { return url_; }
  const std::string& prefix() const { return prefix_; }
  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& error() const { return error_; }

 private:
  std::string url_, prefix_, skip_reason_, error_;
};

}  // namespace adserver::testing
