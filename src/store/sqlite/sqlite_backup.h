#pragma once

// Online copy of a SQLite database (issue 19 item 6): the SQLite backup API, all pages in one
// step, so the copy is one consistent snapshot (WAL mode: the read transaction it holds blocks
// no writer, and writers' commits after it began are not in the copy).

#include <string>

#include "common/status.h"

namespace adserver::store {

// Copies the database at `from` (opened read-only; its WAL is read, never checkpointed) to a new
// file `to` (must not exist), syncs it, and runs PRAGMA integrity_check on the copy.
Status BackupSqliteDatabase(const std::string& from, const std::string& to);

// PRAGMA integrity_check of the database at `path` (read-only): OK, or Internal with its first
// complaints.
Status CheckSqliteDatabase(const std::string& path);

}  // namespace adserver::store
