#pragma once

// Minimal RAII helpers over the sqlite3 C API, private to the SQLite adapter: a connection
// with a prepared-statement cache, a statement handle that resets itself, a transaction that
// rolls back unless committed, and the SQLite-error -> Status mapping. None of them is
// thread-safe; the owner serialises use of a Connection (and everything obtained from it).

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/status.h"
#include "store/sql/sql.h"

namespace adserver::store::sqlite_detail {

// ON DELETE RESTRICT is enforced by an internal trigger, so it fails with
// SQLITE_CONSTRAINT_TRIGGER rather than SQLITE_CONSTRAINT_FOREIGNKEY.
inline bool IsRestrictViolation(int rc, std::string_view message) {
  return rc == SQLITE_CONSTRAINT_TRIGGER &&
         message.find("FOREIGN KEY constraint failed") != std::string_view::npos;
}

// Maps an SQLite result code (extended codes enabled) to a Status whose message starts with
// `context`. UNIQUE/PRIMARY KEY/FOREIGN KEY violations -> Conflict; BUSY, LOCKED, CANTOPEN,
// IOERR -> Unavailable; anything else -> Internal.
inline Status SqliteStatus(sqlite3* db, int rc, std::string_view context) {
  std::string message(context);
  message += ": ";
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    message += sqlite3_errmsg(db);
  } else {
    message += sqlite3_errstr(rc);
  }
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY ||
          rc == SQLITE_CONSTRAINT_FOREIGNKEY || IsRestrictViolation(rc, message)) {
        return ConflictError(std::move(message));
      }
      return InternalError(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
      return UnavailableError(std::move(message));
    default:
      return InternalError(std::move(message));
  }
}

// A prepared statement borrowed from a Connection's cache (or owned, when the cached one is
// already in use). Resets and clears bindings on destruction so the cache can hand it out
// again. Bind errors are remembered and reported by the next Step()/Run(). It is also the
// statement of the shared SQL (sql::StatementImpl, store/sql/sql.h): SQLite's side of it.
class Statement final : public sql::StatementImpl {
 public:
  Statement(sqlite3_stmt* stmt, bool* in_use, bool owned)
      : stmt_(stmt), in_use_(in_use), owned_(owned) {}
  Statement(Statement&& other) noexcept
      : stmt_(std::exchange(other.stmt_, nullptr)),
        in_use_(std::exchange(other.in_use_, nullptr)),
        owned_(other.owned_),
        bind_rc_(other.bind_rc_) {}
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() override {
    if (stmt_ == nullptr) return;
    if (owned_) {
      sqlite3_finalize(stmt_);
      return;
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    if (in_use_ != nullptr) *in_use_ = false;
  }

  // Parameters are 1-based, as in SQLite.
  Statement& Bind(int i, int64_t v) { return Check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& Bind(int i, std::string_view v) {
    return Check(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  Statement& BindBlob(int i, const void* data, size_t size) {
    return Check(sqlite3_bind_blob64(stmt_, i, data, size, SQLITE_TRANSIENT));
  }
  Statement& BindNull(int i) { return Check(sqlite3_bind_null(stmt_, i)); }
  Statement& BindDouble(int i, double v) { return Check(sqlite3_bind_double(stmt_, i, v)); }
  void SetInt(int i, int64_t v) override { Bind(i, v); }
  void SetText(int i, std::string_view v) override { Bind(i, v); }
  void SetBlob(int i, const void* data, size_t size) override { BindBlob(i, data, size); }
  void SetNull(int i) override { BindNull(i); }
  void SetDouble(int i, double v) override { BindDouble(i, v); }
  template <typename T>
  Statement& Bind(int i, const std::optional<T>& v) {
    return v.has_value() ? Bind(i, static_cast<int64_t>(*v)) : BindNull(i);
  }

  // True when a row is available, false when done.
  Result<bool> Step() override {
    if (bind_rc_ != SQLITE_OK) return SqliteStatus(nullptr, bind_rc_, "bind");
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteStatus(sqlite3_db_handle(stmt_), rc, "sqlite");
  }
  // Rewinds a fully stepped or failed statement so it can run again with new bindings.
  void Reset() override { sqlite3_reset(stmt_); }
  // Steps once, for statements without result rows.
  Status Run() {
    Result<bool> r = Step();
    return r.ok() ? OkStatus() : r.status();
  }

  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Double(int col) const override { return sqlite3_column_double(stmt_, col); }
  std::optional<int64_t> OptInt(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Int(col);
  }
  std::string Text(int col) const override {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
  }
  // Copies the blob into `out` if it has exactly `size` bytes; false otherwise.
  bool Blob(int col, void* out, size_t size) const override {
    const void* p = sqlite3_column_blob(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    if (p == nullptr || static_cast<size_t>(n) != size) return false;
    std::memcpy(out, p, size);
    return true;
  }

 private:
  Statement& Check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }

  sqlite3_stmt* stmt_;
  bool* in_use_;
  bool owned_;
  int bind_rc_ = SQLITE_OK;
};

// One sqlite3 connection plus its statement cache. Not thread-safe.
class Connection {
 public:
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    for (auto& [sql, entry] : cache_) sqlite3_finalize(entry.stmt);
    sqlite3_close_v2(db_);
  }

  // Opens `path` with extended result codes, the busy timeout, foreign keys ON,
  // synchronous=NORMAL and the given page cache size. `create` allows creating the file.
  static Result<std::unique_ptr<Connection>> Open(const std::string& path, bool create,
                                                  std::chrono::milliseconds busy_timeout,
                                                  int cache_size_kib) {
    sqlite3* db = nullptr;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    std::unique_ptr<Connection> conn(new Connection(db));  // owns db even on failure
    if (rc != SQLITE_OK) return SqliteStatus(db, rc, "open " + path);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, static_cast<int>(busy_timeout.count()));
    std::string pragmas = "PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-" +
                          std::to_string(cache_size_kib) + ";";
    ADS_RETURN_IF_ERROR(conn->Exec(pragmas.c_str()));
    return conn;
  }

  sqlite3* db() const { return db_; }

  // Runs one or more SQL statements without results (migrations, pragmas, BEGIN/COMMIT).
  Status Exec(const char* sql) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return OkStatus();
    return SqliteStatus(db_, rc, "sqlite");
  }

  // A statement for `sql`, from the cache when possible.
  Result<Statement> Prepare(const std::string& sql) {
    auto it = cache_.find(sql);
    if (it != cache_.end() && !it->second.in_use) {
      it->second.in_use = true;
      return Statement(it->second.stmt, &it->second.in_use, /*owned=*/false);
    }
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteStatus(db_, rc, "prepare");
    if (it != cache_.end()) return Statement(stmt, nullptr, /*owned=*/true);  // nested use
    CacheEntry& entry = cache_[sql];
    entry.stmt = stmt;
    entry.in_use = true;
    return Statement(stmt, &entry.in_use, /*owned=*/false);
  }

  int64_t Changes() const { return sqlite3_changes64(db_); }
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  struct CacheEntry {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  sqlite3* db_;
  // Node-based map: `in_use` pointers handed to Statements stay valid across inserts.
  std::unordered_map<std::string, CacheEntry> cache_;
};

// BEGIN on creation; ROLLBACK on destruction unless Commit() succeeded.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };

  // kWrite takes the write lock up front (BEGIN IMMEDIATE), so the busy timeout applies and
  // a transaction never fails half-way because another writer got there first.
  static Result<Transaction> Begin(Connection& conn, Kind kind) {
    ADS_RETURN_IF_ERROR(conn.Exec(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN"));
    return Transaction(&conn);
  }
  Transaction(Transaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    // SQLite may already have rolled back on its own (e.g. after an I/O error).
    if (conn_ != nullptr && !sqlite3_get_autocommit(conn_->db())) {
      sqlite3_exec(conn_->db(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }

  Status Commit() {
    Status s = conn_->Exec("COMMIT");
    if (s.ok()) conn_ = nullptr;
    return s;
  }

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}
  Connection* conn_;
};

}  // namespace adserver::store::sqlite_detail
