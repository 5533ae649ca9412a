#include "app/admin_call.h"

#include <memory>
#include <utility>

#include "admin/accounts_admin.h"
#include "admin/admin_api.h"
#include "admin/authenticator.h"
#include "admin/identity_admin.h"
#include "admin/reports_admin.h"
#include "app/data_dir.h"
#include "common/clock.h"
#include "common/crypto.h"
#include "common/published.h"
#include "http/router.h"
#include "identity/identity_service.h"
#include "ingest/snapshot_publisher.h"
#include "store/postgres/postgres_report_store.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_identity_store.h"
#include "store/sqlite/sqlite_report_store.h"

namespace adserver::app {
namespace {

// What the admin routes read and write: the system of record, accounts, identity erasures and
// reports, from the data directory or the cluster's PostgreSQL.
struct AdminStores {
  store::Stores stores;
  std::unique_ptr<store::AccountStore> accounts;
  std::unique_ptr<store::IdentityStore> identity;
  std::unique_ptr<store::ReportStore> reports;
};

Result<AdminStores> OpenAdminStores(const std::string& data_dir,
                                    const store::ClusterOptions& cluster) {
  AdminStores out;
  if (cluster.enabled()) {
    ADS_RETURN_IF_ERROR(CreateDataDirectory(data_dir));  // the import ledger's directory
    ADS_ASSIGN_OR_RETURN(ClusterStore opened, OpenClusterStore(cluster.database_url));
    out.stores = opened.stores();
    ADS_ASSIGN_OR_RETURN(out.accounts, store::PostgresStore::Open(cluster.database_url));
    ADS_ASSIGN_OR_RETURN(out.identity, store::PostgresStore::Open(cluster.database_url));
    ADS_ASSIGN_OR_RETURN(out.reports, store::PostgresReportStore::Open(cluster.database_url));
  } else {
    ADS_ASSIGN_OR_RETURN(out.stores, OpenStore(data_dir));
    const std::string db = DatabasePath(data_dir);
    ADS_ASSIGN_OR_RETURN(out.accounts, store::SqliteAccountStore::Open(db));
    ADS_ASSIGN_OR_RETURN(out.identity, store::SqliteIdentityStore::Open(db));
    ADS_ASSIGN_OR_RETURN(out.reports, store::SqliteReportStore::Open(db));
  }
  return out;
}

// `target` ("/admin/v1/...?query") as a request of the CLI's one-off token.
http::Request AdminRequest(http::Method method, const std::string& target, const std::string& body,
                           const std::string& content_type, const std::string& authorization) {
  http::Request request;
  request.method = method;
  request.target = target;
  size_t q = target.find('?');
  request.path = std::string_view(target).substr(0, q);
  request.query =
      q == std::string::npos ? std::string_view() : std::string_view(target).substr(q + 1);
  request.headers = {{"Authorization", authorization}, {"Content-Type", content_type}};
  request.body = body;
  return request;
}

}  // namespace

Result<AdminCallResult> RunAdminCall(const std::string& data_dir, http::Method method,
                                     const std::string& target, const std::string& body,
                                     const std::string& content_type) {
  return RunAdminCall(data_dir, store::ClusterOptions{}, method, target, body, content_type);
}

Result<AdminCallResult> RunAdminCall(const std::string& data_dir,
                                     const store::ClusterOptions& cluster, http::Method method,
                                     const std::string& target, const std::string& body,
                                     const std::string& content_type) {
  ADS_ASSIGN_OR_RETURN(AdminStores s, OpenAdminStores(data_dir, cluster));
  const Clock& clock = SystemClock::Get();
  Published<decision::Catalog> catalogs;
  Published<decision::ActivityIndex> activity;
  // Snapshots are rebuilt by the running server (it polls the store); here we only need the
  // publisher for the admin API's refresh calls, which are cheap on a small catalog.
  ingest::SnapshotPublisher snapshots(*s.stores.inventory, *s.stores.activity, catalogs, activity,
                                      ingest::SnapshotOptions{.rebuild_activity = false});
  // The CLI is trusted (it has the data directory); it authenticates with a one-off token.
  admin::AdminOptions options;
  options.token = "cli-" + RandomHex(16);
  options.import_ledger_path = ImportLedgerPath(data_dir);
  admin::Authenticator auth(options, s.accounts.get(), clock);
  // Identity erasures go to the store's erasure list (under its digest key); a running server
  // picks them up within identity.flush_interval_ms.
  identity::IdentityOptions identity_options;
  identity_options.keys = "1:" + RandomHex(32);  // never seals anything here
  ADS_ASSIGN_OR_RETURN(auto identities,
                       identity::IdentityService::Create(s.identity.get(), clock, identity_options));
  ADS_RETURN_IF_ERROR(identities->Load());

  http::Router router;
  admin::AdminApi api(*s.stores.inventory, *s.stores.activity, snapshots, clock, options, auth);
  api.RegisterRoutes(router);
  admin::AccountsAdminApi accounts_api(*s.accounts, *s.stores.inventory, auth);
  accounts_api.RegisterRoutes(router);
  admin::IdentityAdminApi identity_api(*identities, auth);
  identity_api.RegisterRoutes(router);
  admin::ReportsAdminApi reports_api(*s.reports, *s.stores.inventory, clock, auth);
  reports_api.RegisterRoutes(router);

  // The request's headers are views: the strings they see live until the call returns.
  const std::string authorization = "Bearer " + options.token;
  http::Request request = AdminRequest(method, target, body, content_type, authorization);
  http::Router::Match match = router.Find(request);
  http::Response response =
      match.handler ? (*match.handler)(request)
                    : http::ErrorResponse(match.status, match.status == 405 ? "method not allowed"
                                                                            : "no such admin path");
  return AdminCallResult{response.status, std::move(response.body)};
}

}  // namespace adserver::app
