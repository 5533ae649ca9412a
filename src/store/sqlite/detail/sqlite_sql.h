#pragma once

// The SQLite side of store/sql/sql.h: a sql::Connection over one of SqliteStore's connections
// (made per transaction; the statement cache is the connection's).

#include <memory>
#include <string>
#include <utility>

#include "store/sql/sql.h"
#include "store/sqlite/detail/sqlite_util.h"

namespace adserver::store::sqlite_detail {

class SqlStatement final : public sql::StatementImpl {
 public:
  explicit SqlStatement(sqlite_detail::Statement s) : s_(std::move(s)) {}
  void BindInt(int i, int64_t v) override { s_.Bind(i, v); }
  void BindText(int i, std::string_view v) override { s_.Bind(i, v); }
  void BindBlob(int i, const void* data, size_t size) override { s_.BindBlob(i, data, size); }
  void BindNull(int i) override { s_.BindNull(i); }
  void BindDouble(int i, double v) override { s_.BindDouble(i, v); }
  Result<bool> Step() override { return s_.Step(); }
  void Reset() override { s_.Reset(); }
  bool IsNull(int col) const override { return s_.IsNull(col); }
  int64_t Int(int col) const override { return s_.Int(col); }
  double Double(int col) const override { return s_.Double(col); }
  std::string Text(int col) const override { return s_.Text(col); }
  bool Blob(int col, void* out, size_t size) const override { return s_.Blob(col, out, size); }

 private:
  sqlite_detail::Statement s_;
};

class SqlConnection final : public sql::Connection {
 public:
  explicit SqlConnection(sqlite_detail::Connection& c) : c_(c) {}
  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }
  Result<sql::Statement> Prepare(const std::string& text) override {
    ADS_ASSIGN_OR_RETURN(sqlite_detail::Statement s, c_.Prepare(text));
    return sql::Statement(std::make_unique<SqlStatement>(std::move(s)));
  }
  int64_t Changes() const override { return c_.Changes(); }

 private:
  sqlite_detail::Connection& c_;  // the injected name Connection is sql::Connection here
};

}  // namespace adserver::store::sqlite_detail
