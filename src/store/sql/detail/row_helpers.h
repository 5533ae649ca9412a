#pragma once

// Small helpers over any statement and connection with the SQLite adapter's API (sql::Statement
// and sqlite_detail::Statement alike): stepping through rows, and naming the missing record
// behind a foreign-key Conflict.

#include <string>
#include <string_view>

#include "common/status.h"
#include "store/records.h"

namespace adserver::store::sql_rows {

// Calls `f()` (returning Status) for every row of `s`.
template <typename S, typename F>
Status ForEachRow(S& s, F&& f) {
  while (true) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return OkStatus();
    ADS_RETURN_IF_ERROR(f());
  }
}

template <typename C>
Result<bool> Exists(C& c, const char* table, Id id) {
  ADS_ASSIGN_OR_RETURN(auto s, c.Prepare(std::string("SELECT 1 FROM ") + table + " WHERE id = ?1"));
  return s.Bind(1, id).Step();
}

// Turns a foreign-key Conflict into "<kind> <id> does not exist" when that is the cause.
template <typename C>
Status MissingReference(C& c, Status s, const char* table, std::string_view kind, Id id) {
  if (s.code() != Code::kConflict) return s;
  Result<bool> exists = Exists(c, table, id);
  if (exists.ok() && !*exists) {
    return ConflictError(std::string(kind) + " " + std::to_string(id) + " does not exist");
  }
  return s;
}

}  // namespace adserver::store::sql_rows
