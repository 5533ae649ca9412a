#include "store/sql/detail/advertiser_keys.h"

#include <string>

namespace adserver::store::sql {

Result<std::vector<AdvertiserKeyRecord>> LoadAdvertiserKeys(Connection& c,
                                                            std::optional<Id> community_id,
                                                            std::optional<Id> key_id) {
  // NULL parameters disable their filter.
  ADS_ASSIGN_OR_RETURN(
      Statement s,
      c.Prepare("SELECT id, community_id, key_hash, prefix, test, created_at, revoked_at "
                "FROM advertiser_keys WHERE (CAST(?1 AS BIGINT) IS NULL OR community_id = ?1) "
                "AND (CAST(?2 AS BIGINT) IS NULL OR id = ?2) ORDER BY id"));
  s.Bind(1, community_id).Bind(2, key_id);
  std::vector<AdvertiserKeyRecord> out;
  for (;;) {
    ADS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    AdvertiserKeyRecord& k = out.emplace_back();
    k.id = s.Int(0);
    k.community_id = s.Int(1);
    if (!s.Blob(2, k.hash.data(), k.hash.size())) {
      return InternalError("corrupt advertiser_keys.key_hash in row " + std::to_string(k.id));
    }
    k.prefix = s.Text(3);
    k.test = s.Int(4) != 0;
    k.created_at = s.Int(5);
    k.revoked_at = s.OptInt(6);
  }
  return out;
}

Result<Id> InsertAdvertiserKey(Connection& c, const AdvertiserKeyRecord& k, int64_t now) {
  Result<Id> inserted = InternalError("not inserted");
  {
    ADS_ASSIGN_OR_RETURN(
        Statement s, c.Prepare("INSERT INTO advertiser_keys (community_id, key_hash, prefix, test, "
                               "created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                               "RETURNING id"));
    s.Bind(1, k.community_id)
        .BindBlob(2, k.hash.data(), k.hash.size())
        .Bind(3, k.prefix)
        .Bind(4, int64_t{k.test})
        .Bind(5, now)
        .Bind(6, k.revoked_at);
    Result<bool> row = s.Step();
    if (!row.ok()) {
      inserted = row.status();
    } else if (!*row) {
      inserted = InternalError("INSERT ... RETURNING id returned no row");
    } else {
      inserted = s.Int(0);
    }
  }
  if (inserted.status().code() == Code::kConflict) {
    ADS_ASSIGN_OR_RETURN(Statement exists, c.Prepare("SELECT 1 FROM communities WHERE id = ?1"));
    ADS_ASSIGN_OR_RETURN(bool community, exists.Bind(1, k.community_id).Step());
    if (!community) {
      return ConflictError("community " + std::to_string(k.community_id) + " does not exist");
    }
    return ConflictError("an advertiser key with the same hash already exists");
  }
  return inserted;
}

Status RevokeAdvertiserKey(Connection& c, Id community_id, Id key_id, int64_t now) {
  ADS_ASSIGN_OR_RETURN(Statement s,
                       c.Prepare("UPDATE advertiser_keys SET revoked_at = COALESCE(revoked_at, ?3) "
                                 "WHERE id = ?1 AND community_id = ?2"));
  ADS_RETURN_IF_ERROR(s.Bind(1, key_id).Bind(2, community_id).Bind(3, now).Run());
  if (c.Changes() == 0) {
    return NotFoundError("advertiser key " + std::to_string(key_id) + " of community " +
                         std::to_string(community_id) + " not found");
  }
  return OkStatus();
}

}  // namespace adserver::store::sql
