#include "app/backup.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "ingest/bulk_import.h"
#include "store/lmdb/lmdb_backup.h"
#include "store/sqlite/sqlite_backup.h"

namespace adserver::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDatabase = "adserver.db";
constexpr const char* kActivity = "activity.lmdb";
constexpr const char* kExposures = "exposures.lmdb";
constexpr const char* kLedger = "imports.ledger";

// OK when `dir` does not exist or is an empty directory.
Status RequireEmpty(const std::string& dir, std::string_view what) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return OkStatus();
  if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)) {
    return InvalidArgumentError(std::string(what) + " " + dir +
                                " must not exist or be an empty directory");
  }
  return OkStatus();
}

// Copies a plain file and syncs it.
Status CopyFileSynced(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, ec);
  if (ec) return UnavailableError("cannot copy " + from.string() + ": " + ec.message());
  if (FILE* f = std::fopen(to.c_str(), "r+"); f != nullptr) {
    std::fflush(f);
    fsync(fileno(f));
    std::fclose(f);
  }
  return OkStatus();
}

Status Backup(const fs::path& data, const fs::path& partial, BackupReport& report) {
  std::error_code ec;
  fs::create_directories(partial, ec);
  if (ec) return UnavailableError("cannot create " + partial.string() + ": " + ec.message());
  if (fs::exists(data / kActivity / "data.mdb", ec)) {
    ADS_RETURN_IF_ERROR(ingest::WithLedgerLocked((data / kLedger).string(), [&]() -> Status {
      ADS_ASSIGN_OR_RETURN(report.activity_bytes,
                           store::BackupLmdbEnvironment((data / kActivity).string(),
                                                        (partial / kActivity).string()));
      if (fs::exists(data / kLedger, ec) && fs::file_size(data / kLedger, ec) > 0) {
        ADS_RETURN_IF_ERROR(CopyFileSynced(data / kLedger, partial / kLedger));
        report.ledger = true;
      }
      return OkStatus();
    }));
  }
  if (fs::exists(data / kExposures / "data.mdb", ec)) {
    ADS_ASSIGN_OR_RETURN(report.exposure_bytes,
                         store::BackupLmdbEnvironment((data / kExposures).string(),
                                                      (partial / kExposures).string()));
  }
  ADS_RETURN_IF_ERROR(
      store::BackupSqliteDatabase((data / kDatabase).string(), (partial / kDatabase).string()));
  report.database_bytes = static_cast<int64_t>(fs::file_size(partial / kDatabase, ec));
  // The checks opened the LMDB copies, which left their lock files: not part of a backup.
  fs::remove(partial / kActivity / "lock.mdb", ec);
  fs::remove(partial / kExposures / "lock.mdb", ec);
  return OkStatus();
}

}  // namespace

Result<BackupReport> BackupDataDir(const std::string& data_dir, const std::string& dest) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  const fs::path data(data_dir);
  if (!fs::exists(data / kDatabase, ec)) {
    return InvalidArgumentError(data_dir + " is not a data directory (no " + kDatabase + ")");
  }
  ADS_RETURN_IF_ERROR(RequireEmpty(dest, "the backup directory"));
  fs::path target = fs::absolute(dest, ec);
  fs::path partial = target;
  partial += ".partial";
  fs::remove_all(partial, ec);  // a backup interrupted before
  BackupReport report;
  Status copied = Backup(data, partial, report);
  if (!copied.ok()) {
    fs::remove_all(partial, ec);
    return copied;
  }
  if (fs::exists(target, ec)) fs::remove(target, ec);  // the empty directory allowed above
  fs::rename(partial, target, ec);
  if (ec) return UnavailableError("cannot rename the backup to " + dest + ": " + ec.message());
  report.milliseconds = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  return report;
}

Status RestoreDataDir(const std::string& backup_dir, const std::string& data_dir) {
  std::error_code ec;
  const fs::path from(backup_dir);
  if (!fs::exists(from / kDatabase, ec)) {
    return InvalidArgumentError(backup_dir + " is not a backup (no " + kDatabase + ")");
  }
  ADS_RETURN_IF_ERROR(RequireEmpty(data_dir, "the data directory"));
  const fs::path to(data_dir);
  fs::create_directories(to, ec);
  if (ec) return UnavailableError("cannot create " + data_dir + ": " + ec.message());
  ADS_RETURN_IF_ERROR(store::CheckSqliteDatabase((from / kDatabase).string()));
  ADS_RETURN_IF_ERROR(CopyFileSynced(from / kDatabase, to / kDatabase));
  for (const char* env : {kActivity, kExposures}) {
    if (!fs::exists(from / env / "data.mdb", ec)) continue;
    fs::create_directories(to / env, ec);
    ADS_RETURN_IF_ERROR(CopyFileSynced(from / env / "data.mdb", to / env / "data.mdb"));
    ADS_RETURN_IF_ERROR(store::CheckLmdbEnvironment((to / env).string()));
  }
  if (fs::exists(from / kLedger, ec)) {
    ADS_RETURN_IF_ERROR(CopyFileSynced(from / kLedger, to / kLedger));
  }
  return store::CheckSqliteDatabase((to / kDatabase).string());
}

void PrintBackupReport(const BackupReport& report, const std::string& dest, std::ostream& out) {
  out << "backup written to " << dest << " in " << report.milliseconds << " ms\n"
      << "  " << kDatabase << ": " << report.database_bytes << " bytes\n";
  if (report.activity_bytes > 0) {
    out << "  " << kActivity << ": " << report.activity_bytes << " bytes"
        << (report.ledger ? " (with the import ledger)" : "") << "\n";
  }
  if (report.exposure_bytes > 0) {
    out << "  " << kExposures << ": " << report.exposure_bytes << " bytes\n";
  }
}

}  // namespace adserver::app
