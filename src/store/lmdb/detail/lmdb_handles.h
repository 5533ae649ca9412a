#pragma once

// LMDB's handle types, declared as <lmdb.h> declares them, so that the headers of store/lmdb do
// not bring LMDB to whoever includes them: only the adapters' .cc files include <lmdb.h>.

extern "C" {
typedef struct MDB_env MDB_env;
typedef struct MDB_txn MDB_txn;
typedef unsigned int MDB_dbi;
}
