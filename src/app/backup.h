#pragma once

// `adserver backup` and `adserver restore` (issue 19 item 6): a consistent online copy of a data
// directory while `serve` keeps serving and writing, and its restore into an empty directory.
//
// Each store is copied as one consistent snapshot: the activity index (LMDB, with the import
// ledger under the ledger's lock, so no import falls between the two), then the exposures
// (LMDB), then the database (SQLite backup API). The database is copied last: anything the
// LMDB copies hold that it depends on is older, and what the database holds beyond them (a
// conversion of a block the activity copy lacks) is re-derived without double counting when
// the restored server's indexer applies that block again (conversions are unique per
// transaction and campaign). The wallet table (wallets.table) is derived and rebuilt on start.
// The copy is written to DEST.partial and renamed to DEST when complete and checked, so DEST
// never holds half a backup.

#include <cstdint>
#include <ostream>
#include <string>

#include "common/status.h"

namespace adserver::app {

struct BackupReport {
  int64_t database_bytes = 0;
  int64_t activity_bytes = 0;   // 0: no activity index in the data directory
  int64_t exposure_bytes = 0;   // 0: no exposure store
  bool ledger = false;          // the import ledger was copied
  int64_t milliseconds = 0;
};

// Backs up `data_dir` into `dest`, which must not exist (or be an empty directory).
Result<BackupReport> BackupDataDir(const std::string& data_dir, const std::string& dest);

// Restores the backup in `backup_dir` into `data_dir`, which must not exist or be empty, then
// checks the copies (SQLite integrity_check, LMDB readable).
Status RestoreDataDir(const std::string& backup_dir, const std::string& data_dir);

// The CLI's output: one line per store and the total.
void PrintBackupReport(const BackupReport& report, const std::string& dest, std::ostream& out);

}  // namespace adserver::app
