#pragma once

// The PostgreSQL side of store/sql/sql.h over a PgConnection. Statements keep the shared code's
// `?N` parameters: they are renumbered to PostgreSQL's `$k` over the indices a statement uses
// (the shared code leaves some unused), sent as text and typed by their context. Inside a
// transaction each statement runs under a savepoint, so a failed one leaves the transaction
// usable, as in SQLite (the shared code asks follow-up questions after a conflict).

#include <memory>
#include <string>

#include "store/postgres/detail/pg_connection.h"
#include "store/sql/sql.h"

namespace adserver::store::pg_detail {

class PgSqlConnection final : public sql::Connection {
 public:
  explicit PgSqlConnection(PgConnection& conn) : conn_(conn) {}
  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }
  Result<sql::Statement> Prepare(const std::string& text) override;
  int64_t Changes() const override { return changes_; }
  PgConnection& native() { return conn_; }

  // Runs a translated statement (under a savepoint inside a transaction); records Changes().
  Result<PgResult> Run(const std::string& text, const std::vector<PgParam>& params);

 private:
  PgConnection& conn_;
  int64_t changes_ = 0;
};

// `?N` parameters of `text` renumbered to `$1..$k` in order of first use (outside quoted
// literals); `used[k - 1]` is the N that `$k` stands for.
std::string TranslateParameters(std::string_view text, std::vector<int>& used);

}  // namespace adserver::store::pg_detail
