#pragma once

// A dialect-neutral SQL connection for the code that SQLite and PostgreSQL adapters share (the
// stores of store/sql: inventory, accounts, events, reports, advertiser events): prepared
// statements with 1-based `?N` parameters, stepping through rows and reading columns, as the SQLite
// adapter always did. Each adapter implements Connection (store/sqlite/detail/sqlite_sql.h,
// store/postgres/detail/pg_sql.h). Statements that must differ between dialects ask dialect();
// otherwise the shared SQL keeps to what both engines run: INSERT ... RETURNING, ON CONFLICT
// upserts, no engine-specific functions.
//
// A failed statement inside a write transaction leaves the transaction usable in both dialects
// (PostgreSQL runs each statement under a savepoint), so callers may ask follow-up questions to
// name the cause of a conflict.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace adserver::store::sql {

enum class Dialect : uint8_t { kSqlite, kPostgres };

class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  // Parameters (1-based) as Statement binds them; bind errors are remembered and reported by
  // the next Step().
  virtual void SetInt(int i, int64_t v) = 0;
  virtual void SetText(int i, std::string_view v) = 0;
  virtual void SetBlob(int i, const void* data, size_t size) = 0;
  virtual void SetNull(int i) = 0;
  virtual void SetDouble(int i, double v) = 0;
  virtual Result<bool> Step() = 0;
  virtual void Reset() = 0;
  virtual bool IsNull(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Double(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual bool Blob(int col, void* out, size_t size) const = 0;
};

// A prepared statement (move-only handle).
class Statement {
 public:
  explicit Statement(std::unique_ptr<StatementImpl> impl) : impl_(std::move(impl)) {}

  // Parameters are 1-based.
  Statement& Bind(int i, int64_t v) { return impl_->SetInt(i, v), *this; }
  Statement& Bind(int i, std::string_view v) { return impl_->SetText(i, v), *this; }
  Statement& BindBlob(int i, const void* data, size_t size) {
    return impl_->SetBlob(i, data, size), *this;
  }
  Statement& BindNull(int i) { return impl_->SetNull(i), *this; }
  Statement& BindDouble(int i, double v) { return impl_->SetDouble(i, v), *this; }
  template <typename T>
  Statement& Bind(int i, const std::optional<T>& v) {
    return v.has_value() ? Bind(i, static_cast<int64_t>(*v)) : BindNull(i);
  }

  // True when a row is available, false when done.
  Result<bool> Step() { return impl_->Step(); }
  // Rewinds so the statement can run again with new bindings.
  void Reset() { impl_->Reset(); }
  // Steps once, for statements without result rows.
  Status Run() {
    Result<bool> r = Step();
    return r.ok() ? OkStatus() : r.status();
  }

  bool IsNull(int col) const { return impl_->IsNull(col); }
  int64_t Int(int col) const { return impl_->Int(col); }
  double Double(int col) const { return impl_->Double(col); }
  std::optional<int64_t> OptInt(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Int(col);
  }
  std::string Text(int col) const { return impl_->Text(col); }
  // Copies the blob into `out` if it has exactly `size` bytes; false otherwise.
  bool Blob(int col, void* out, size_t size) const { return impl_->Blob(col, out, size); }

 private:
  std::unique_ptr<StatementImpl> impl_;
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  virtual Result<Statement> Prepare(const std::string& sql) = 0;
  // Rows changed by the last INSERT, UPDATE or DELETE this connection ran.
  virtual int64_t Changes() const = 0;
};

// Runs `fn` in a transaction of the adapter: a write one (bumping the change version of what it
// names) or a consistent read.
class Runner {
 public:
  virtual ~Runner() = default;
  // Which change versions a write moves.
  enum Bump : unsigned { kCatalog = 1, kActivity = 2 };
  virtual Status Write(unsigned bump, const std::function<Status(Connection&)>& fn) = 0;
  virtual Status Read(const std::function<Status(Connection&)>& fn) = 0;
  // The change version `which` (one Bump) as last committed by any connection: what
  // InventoryStore::ChangeCounter answers. Runners of stores without versions answer Internal.
  virtual Result<uint64_t> ChangeVersion(Bump which) {
    (void)which;
    return InternalError("this store keeps no change versions");
  }
};

}  // namespace adserver::store::sql
