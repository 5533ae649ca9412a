#include "app/data_dir.h"

#include <filesystem>
#include <system_error>

namespace adserver::app {

std::string DatabasePath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "adserver.db").string();
}

Status CreateDataDirectory(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return UnavailableError("cannot create data directory " + data_dir + ": " + ec.message());
  return OkStatus();
}

Result<EmbeddedStore> OpenEmbeddedStore(const std::string& data_dir) {
  ADS_RETURN_IF_ERROR(CreateDataDirectory(data_dir));
  EmbeddedStore out;
  ADS_ASSIGN_OR_RETURN(out.sqlite, store::SqliteStore::Open(DatabasePath(data_dir)));
  // Wallet activity lives in the LMDB index (system of record; see docs/architecture.md).
  ADS_ASSIGN_OR_RETURN(auto index, store::LmdbActivityIndex::Open(ActivityIndexPath(data_dir)));
  ADS_RETURN_IF_ERROR(store::MigrateActivity(*out.sqlite, *index));
  out.activity = std::make_shared<store::LmdbActivityStore>(out.sqlite, std::move(index));
  return out;
}

Result<store::Stores> OpenStore(const std::string& data_dir) {
  ADS_ASSIGN_OR_RETURN(EmbeddedStore embedded, OpenEmbeddedStore(data_dir));
  return embedded.stores();
}

Result<ClusterStore> OpenClusterStore(const std::string& database_url) {
  ClusterStore out;
  ADS_ASSIGN_OR_RETURN(out.postgres, store::PostgresStore::Open(database_url));
  ADS_ASSIGN_OR_RETURN(out.activity, store::PostgresActivityStore::Open(database_url));
  return out;
}

std::string ImportLedgerPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "imports.ledger").string();
}

std::string ExposureIndexPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "exposures.lmdb").string();
}

std::string ActivityIndexPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "activity.lmdb").string();
}

}  // namespace adserver::app
