#include "app/server.h"

#include <filesystem>
#include <system_error>

#include "common/log.h"
#include "store/sqlite/sqlite_store.h"

namespace adserver::app {

std::string DatabasePath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "adserver.db").string();
}

Result<std::unique_ptr<store::Store>> OpenStore(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return UnavailableError("cannot create data directory " + data_dir + ": " + ec.message());
  ADS_ASSIGN_OR_RETURN(auto sqlite, store::SqliteStore::Open(DatabasePath(data_dir)));
  return std::unique_ptr<store::Store>(std::move(sqlite));
}

Result<std::unique_ptr<Server>> Server::Create(const config::Config& config) {
  std::unique_ptr<Server> server(new Server(config));
  ADS_RETURN_IF_ERROR(server->Init());
  return server;
}

Status Server::Init() {
  ADS_ASSIGN_OR_RETURN(store_, OpenStore(config_.data_dir));
  snapshots_ = std::make_unique<ingest::SnapshotPublisher>(*store_, catalogs_, activity_,
                                                           config_.snapshots);
  ADS_RETURN_IF_ERROR(snapshots_->LoadNow());
  ads_ = std::make_unique<serve::AdHandler>(catalogs_, activity_, clock_, config_.serve);
  ads_->RegisterRoutes(router_);
  admin_ = std::make_unique<admin::AdminApi>(*store_, *snapshots_, clock_, config_.admin);
  admin_->RegisterRoutes(router_);
  router_.Add(http::Method::kGet, "/healthz", [](const http::Request&) {
    http::Response r;
    r.SetHeader("Content-Type", "application/json");
    r.SetHeader("Cache-Control", "no-store");
    r.body = R"({"status":"ok"})";
    return r;
  });
  router_.Add(http::Method::kGet, "/readyz", [this](const http::Request&) {
    if (!ready_.load(std::memory_order_acquire)) {
      return http::ErrorResponse(503, "not ready");
    }
    http::Response r;
    r.SetHeader("Content-Type", "application/json");
    r.SetHeader("Cache-Control", "no-store");
    r.body = R"({"status":"ready"})";
    return r;
  });
  return OkStatus();
}

Status Server::Start() {
  ADS_ASSIGN_OR_RETURN(http_, http::Server::Create(config_.http, router_));
  ADS_RETURN_IF_ERROR(http_->Start());
  snapshots_->Start();
  ready_.store(true, std::memory_order_release);
  ADS_LOG(info, "serving", "port", http_->port(), "data", config_.data_dir, "admin_api",
          config_.admin.token.empty() ? "disabled" : "enabled");
  return OkStatus();
}

uint16_t Server::port() const { return http_ ? http_->port() : 0; }

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  ready_.store(false, std::memory_order_release);
  if (http_) http_->Stop();  // drains in-flight requests, including admin writes
  if (snapshots_) snapshots_->Stop();
  ADS_LOG(info, "stopped");
}

Server::~Server() { Stop(); }

Result<AdminCallResult> RunAdminCall(const std::string& data_dir, http::Method method,
                                     const std::string& target, const std::string& body,
                                     const std::string& content_type) {
  ADS_ASSIGN_OR_RETURN(auto store, OpenStore(data_dir));
  Published<decision::Catalog> catalogs;
  Published<decision::ActivityIndex> activity;
  // Snapshots are rebuilt by the running server (it polls the store); here we only need the
  // publisher for the admin API's refresh calls, which are cheap on a small catalog.
  ingest::SnapshotPublisher snapshots(*store, catalogs, activity, ingest::SnapshotOptions{});
  // The CLI is trusted (it has the data directory); it authenticates with a one-off token.
  admin::AdminOptions options;
  options.token = "cli-" + RandomHex(16);
  admin::AdminApi api(*store, snapshots, SystemClock::Get(), options);
  http::Router router;
  api.RegisterRoutes(router);

  std::string authorization = "Bearer " + options.token;
  http::Request request;
  request.method = method;
  request.target = target;
  size_t q = target.find('?');
  request.path = std::string_view(target).substr(0, q);
  request.query = q == std::string::npos ? std::string_view() : std::string_view(target).substr(q + 1);
  request.headers = {{"Authorization", authorization}, {"Content-Type", content_type}};
  request.body = body;
  http::Router::Match match = router.Find(request);
  http::Response response;
  if (!match.handler) {
    response = http::ErrorResponse(match.status, match.status == 405 ? "method not allowed"
                                                                     : "no such admin path");
  } else {
    response = (*match.handler)(request);
  }
  return AdminCallResult{response.status, std::move(response.body)};
}

}  // namespace adserver::app
