#pragma once

// The schema's migrations, one list for both engines (store/sql/migrations.cc): each change
// with its version in SQLite's and PostgreSQL's histories and its SQL, shared or per engine.
// The engines' runners (store/sqlite/detail/migrations.h, store/postgres/detail/
// pg_migrations.h) apply their steps, each once, in version order.

#include <cstdint>
#include <span>
#include <string_view>

namespace adserver::store::sql {

enum class Engine { kSqlite, kPostgres };

struct MigrationStep {
  int64_t version = 0;
  std::string_view sql;
};

// The engine's steps in increasing version order (SQLite's are 1..N).
std::span<const MigrationStep> MigrationsFor(Engine engine);

}  // namespace adserver::store::sql
