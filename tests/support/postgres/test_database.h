#pragma once

// A database of its own on the tests' PostgreSQL cluster (tests/support/postgres.sh, started by
// CTest's `postgres` fixture, which sets ADSERVER_TEST_POSTGRES_DIR): created empty, dropped
// with its connections when destroyed.

#include <string>

namespace adserver::testing {

class TestDatabase {
 public:
  TestDatabase();
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  // Empty when there is no cluster: then `skip_reason()` says why (run outside CTest) or
  // `error()` what failed (a cluster CTest should have started, or ADSERVER_REQUIRE_POSTGRES=1).
  const std::string& url() const { return url_; }
  const std::string& skip_reason() const { return skip_reason_; }
  const std::string& error() const { return error_; }

 private:
  std::string base_;  // postgresql://user@host:port, no database
  std::string name_;
  std::string url_;
  std::string skip_reason_;
  std::string error_;
};

}  // namespace adserver::testing

// In a test body or SetUp(): skips without a cluster, fails if one was expected.
#define ADSERVER_REQUIRE_TEST_DATABASE(db)                      \
  do {                                                          \
    if (!(db).error().empty()) FAIL() << (db).error();          \
    if ((db).url().empty()) GTEST_SKIP() << (db).skip_reason(); \
  } while (false)
