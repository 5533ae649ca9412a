#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "http/message.h"
#include "http/router.h"
#include "ingest/snapshot_publisher.h"
#include "ingest/transaction_sink.h"
#include "store/store.h"

namespace adserver::admin {

struct AdminOptions {
  // Bearer token required on every /admin/v1 call. Empty = admin API disabled (routes answer
  // 404 with an error body saying so).
  std::string token;
  // Largest admin request body (activity NDJSON uploads are large).
  size_t max_body_bytes = 64 * 1024 * 1024;
  // Largest decompressed activity upload (a gzip body expands): 413 beyond it.
  uint64_t max_decompressed_bytes = uint64_t{1} << 30;
  // Import ledger shared with `adserver activity import` (app sets DATA_DIR/imports.ledger):
  // content already imported (same decompressed bytes) is not written again. Empty = none.
  std::string import_ledger_path;
  // Activity uploads hand rows naming a transaction (tx hash) here: conversion attribution (app
  // sets serve's attributor; it must outlive the API). Null = not attributed.
  ingest::TransactionSink* transactions = nullptr;
};

// The admin API (/admin/v1/...): JSON CRUD for publishers, keys, communities, projects,
// campaigns, ads, and activity upload (NDJSON, and every CSV/JSON-lines export the bulk CLI
// import reads, plain or gzip). Every route runs on the worker pool
// (Dispatch::kWorker), checks `Authorization: Bearer <token>` in constant time, validates
// input with ingest/validation and answers errors in the spec's error shape. After a write it
// calls SnapshotPublisher::RefreshNow() so serving sees the change when the call returns.
// Thread-safe.
class AdminApi {
 public:
  // store, snapshots and clock must outlive this object.
  AdminApi(store::Store& store, ingest::SnapshotPublisher& snapshots, const Clock& clock,
           AdminOptions options);

  void RegisterRoutes(http::Router& router);

 private:
  store::Store& store_;
  ingest::SnapshotPublisher& snapshots_;
  const Clock& clock_;
  AdminOptions options_;
  Sha256Digest token_hash_{};
};

}  // namespace adserver::admin
