#pragma once

// Online copy of an LMDB environment (issue 19 item 6): mdb_env_copy2 with compaction, under one
// read transaction, so the copy is one consistent snapshot while the server keeps writing.

#include <cstdint>
#include <string>

#include "common/status.h"

namespace adserver::store {

// Copies the environment in directory `from` (its data.mdb; opened read-only next to the
// server, which may keep writing) into directory `to` (created; must not hold a data.mdb),
// compacted. Returns the copy's size in bytes.
Result<int64_t> BackupLmdbEnvironment(const std::string& from, const std::string& to);

// Opens the environment in `dir` read-only and reads its main database's statistics: OK when
// LMDB can read it.
Status CheckLmdbEnvironment(const std::string& dir);

}  // namespace adserver::store
