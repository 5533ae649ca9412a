#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admin/chains.h"
#include "admin/sign_in_limiter.h"
#include "common/clock.h"
#include "common/password.h"
#include "http/message.h"
#include "http/router.h"
#include "ingest/snapshot_publisher.h"
#include "ingest/transaction_sink.h"
#include "store/activity_store.h"
#include "store/inventory_store.h"

namespace adserver::admin {

class Authenticator;

struct AdminOptions {
  // Bearer token required on every /admin/v1 call. Empty = admin API disabled (routes answer
  // 404 with an error body saying so).
  std::string token;
  // The network's currency (ISO 4217 code, [network] currency; issue 38 item 2): every amount
  // of the API (bids, budgets, spend, earnings) is in its units. Named in the console session's
  // and the reports' answers, and used by the console to format money.
  std::string currency = "USD";
  // The chains the console names, with their block explorers ([[network.chains]] merged into
  // DefaultChains(); issue 38): in the console session's answers.
  std::vector<ChainInfo> chains = DefaultChains();
  // Largest admin request body, except the bulk imports' (issue 39: a JSON object for one
  // record is a few KB; 64 MiB of it only ever cost the server time and memory).
  size_t max_body_bytes = 1024 * 1024;
  // Largest body of the bulk imports, POST /admin/v1/activity (NDJSON, CSV, gzip) and
  // POST /admin/v1/projects/import.
  size_t max_import_body_bytes = 64 * 1024 * 1024;
  // Largest decompressed activity upload (a gzip body expands): 413 beyond it.
  uint64_t max_decompressed_bytes = uint64_t{1} << 30;
  // Import ledger shared with `adserver activity import` (app sets DATA_DIR/imports.ledger):
  // content already imported (same decompressed bytes) is not written again. Empty = none.
  std::string import_ledger_path;
  // Activity uploads hand rows naming a transaction (tx hash) here: conversion attribution (app
  // sets serve's attributor; it must outlive the API). Null = not attributed.
  ingest::TransactionSink* transactions = nullptr;
  // Console sessions (issue 16) end after this long without a request...
  int64_t session_idle_seconds = 12 * 60 * 60;
  // ...and this long after sign-in in any case.
  int64_t session_absolute_seconds = 7 * 24 * 60 * 60;
  // Sessions kept per user; signing in again ends the oldest beyond it.
  int max_sessions_per_user = 20;
  // Unrevoked bearer tokens a user may hold; issuing one more answers 409.
  int max_tokens_per_user = 20;
  // How long a bearer token works unless its request says otherwise (expiresInDays, issue 39).
  int64_t token_lifetime_seconds = 90 * 24 * 60 * 60;
  // Name of the session cookie.
  std::string session_cookie = "adserver_session";
  // scheme://host[:port] of http.public_url (app sets it): https makes the cookie Secure, and
  // it is an accepted Origin of cookie-authenticated writes besides the request's Host.
  std::string public_origin;
  // Requests per second each caller (the operator token, a user) may make on average, at most
  // `rate_limit_burst` at once; beyond it 429 with Retry-After. 0 = unlimited.
  double rate_limit_per_second = 100;
  int64_t rate_limit_burst = 200;
  // Shortest password accepted for a user.
  size_t min_password_length = 10;
  // Cost of hashing a user's password (argon2id).
  PasswordHashOptions password_hash;
  // Back-off after failed sign-ins, per (email, client address) and per client address; also
  // after failed bearer tokens per client address.
  SignInLimiterOptions sign_in;
  // Failed sign-ins per account from any address (issue 39): a slower limit than the one per
  // (email, address) and per address, which one attacker cannot drive to a lockout (their own
  // address backs off long before), and whose back-off stays short for the owner.
  SignInLimiterOptions sign_in_per_account{.free_failures = 50, .max_backoff_seconds = 60};
};

namespace detail {
class RegistryCache;
}  // namespace detail

// The admin API (/admin/v1/...): JSON CRUD for publishers, keys, communities, projects,
// campaigns, ads, and activity upload (NDJSON, and every CSV/JSON-lines export the bulk CLI
// import reads, plain or gzip). Every route runs on the worker pool
// (Dispatch::kWorker), authenticates the caller and enforces its scope (detail::Guarded and the
// route table's audience column; issue 16), validates
// input with ingest/validation and answers errors in the spec's error shape. After a write it
// calls SnapshotPublisher::RefreshNow() so serving sees the change when the call returns.
// Thread-safe.
class AdminApi {
 public:
  // The stores, snapshots, clock and auth must outlive this object.
  AdminApi(store::InventoryStore& store, store::ActivityStore& activity,
           ingest::SnapshotPublisher& snapshots, const Clock& clock, AdminOptions options,
           const Authenticator& auth);

  void RegisterRoutes(http::Router& router);

 private:
  store::InventoryStore& store_;
  store::ActivityStore& activity_;
  ingest::SnapshotPublisher& snapshots_;
  const Clock& clock_;
  AdminOptions options_;
  const Authenticator& auth_;
  // The project search's copy of the registry, kept while the inventory is unchanged (issue 40).
  std::shared_ptr<detail::RegistryCache> registry_;
};

}  // namespace adserver::admin
