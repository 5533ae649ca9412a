#pragma once

// The SQLite side of store/sql/sql.h: a sql::Connection over one of an adapter's connections
// (made per transaction; the statement cache is the connection's). Its statements are
// sqlite_detail::Statement (sqlite_util.h).

#include <memory>
#include <string>
#include <utility>

#include "store/sql/sql.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

class SqlConnection final : public sql::Connection {
 public:
  explicit SqlConnection(sqlite_detail::Connection& c) : c_(c) {}
  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }
  Result<sql::Statement> Prepare(const std::string& text) override {
    ADS_ASSIGN_OR_RETURN(sqlite_detail::Statement s, c_.Prepare(text));
    return sql::Statement(std::make_unique<sqlite_detail::Statement>(std::move(s)));
  }
  int64_t Changes() const override { return c_.Changes(); }

 private:
  sqlite_detail::Connection& c_;  // the injected name Connection is sql::Connection here
};

}  // namespace adserver::store::sqlite_detail
