#include "support/postgres/test_database.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "store/postgres/detail/pg_connection.h"

namespace adserver::testing {
namespace {

using store::pg_detail::PgConnection;

bool Required() {
  const char* v = std::getenv("ADSERVER_REQUIRE_POSTGRES");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace

TestDatabase::TestDatabase() {
  const char* dir = std::getenv("ADSERVER_TEST_POSTGRES_DIR");
  if (dir == nullptr) {
    (Required() ? error_ : skip_reason_) =
        "no PostgreSQL test cluster: run through CTest (its `postgres` fixture starts one)";
    return;
  }
  std::ifstream in(std::string(dir) + "/url");
  if (!std::getline(in, base_) || base_.empty()) {
    error_ = std::string("no cluster URL in ") + dir + "/url (did the postgres_start test fail?)";
    return;
  }
  static std::atomic<int> next{0};
  name_ = "adserver_test_" + std::to_string(getpid()) + "_" + std::to_string(next++);
  auto admin = PgConnection::Open(base_ + "/postgres");
  if (!admin.ok()) {
    error_ = "cannot reach the test cluster: " + admin.status().message();
    return;
  }
  (void)(*admin)->Exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  if (auto created = (*admin)->Exec("CREATE DATABASE " + name_); !created.ok()) {
    error_ = "cannot create a test database: " + created.status().message();
    return;
  }
  url_ = base_ + "/" + name_;
}

TestDatabase::~TestDatabase() {
  if (url_.empty()) return;
  auto admin = PgConnection::Open(base_ + "/postgres");
  if (admin.ok()) (void)(*admin)->Exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
}

}  // namespace adserver::testing
