#include "store/sqlite/sqlite_backup.h"

#include <sqlite3.h>

#include <filesystem>
#include <memory>

namespace adserver::store {
namespace {

struct Closer {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, Closer>;

Result<Db> OpenDb(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    return UnavailableError("cannot open " + path + ": " +
                            (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(raw, 5000);
  return db;
}

}  // namespace

Status BackupSqliteDatabase(const std::string& from, const std::string& to) {
  if (std::filesystem::exists(to)) return InvalidArgumentError(to + " already exists");
  ADS_ASSIGN_OR_RETURN(Db source, OpenDb(from, SQLITE_OPEN_READONLY));
  ADS_ASSIGN_OR_RETURN(Db target, OpenDb(to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  // The copy's commit syncs the file before the backup is reported.
  sqlite3_exec(target.get(), "PRAGMA synchronous = FULL", nullptr, nullptr, nullptr);
  sqlite3_backup* backup = sqlite3_backup_init(target.get(), "main", source.get(), "main");
  if (backup == nullptr) {
    return UnavailableError("cannot back up " + from + ": " + sqlite3_errmsg(target.get()));
  }
  int rc = sqlite3_backup_step(backup, -1);  // every page under one read transaction
  int finished = sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE || finished != SQLITE_OK) {
    return UnavailableError("backup of " + from + " failed: " + sqlite3_errstr(rc));
  }
  // The copy carries the source's WAL mode in its header; a backup is one self-contained file.
  sqlite3_exec(target.get(), "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
  target.reset();
  return CheckSqliteDatabase(to);
}

Status CheckSqliteDatabase(const std::string& path) {
  ADS_ASSIGN_OR_RETURN(Db db, OpenDb(path, SQLITE_OPEN_READONLY));
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db.get(), "PRAGMA integrity_check(5)", -1, &raw, nullptr) != SQLITE_OK) {
    return InternalError(path + " is not a database: " + sqlite3_errmsg(db.get()));
  }
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
  std::string complaints;
  while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
    std::string line = text ? text : "";
    if (line == "ok") return OkStatus();
    complaints += (complaints.empty() ? "" : "; ") + line;
  }
  return InternalError(path + " failed its integrity check: " +
                       (complaints.empty() ? sqlite3_errmsg(db.get()) : complaints));
}

}  // namespace adserver::store
