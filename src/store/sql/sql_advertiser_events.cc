#include "store/sql/sql_advertiser_events.h"

#include <string>
#include <utility>

#include "store/sql/detail/transact.h"

namespace adserver::store::sql {
namespace {

// The campaign of `decision_id`'s first click (any status), when that campaign is
// `community`'s: an events key never learns, nor writes into, another community's campaign
// through a click id it saw (issue 39).
Result<std::optional<Id>> CampaignOfClick(Connection& c, const std::array<uint8_t, 16>& decision_id,
                                          Id community) {
  ADS_ASSIGN_OR_RETURN(
      Statement sel,
      c.Prepare("SELECT k.campaign_id FROM clicks k JOIN campaigns c ON c.id = k.campaign_id "
                "WHERE k.decision_id = ?1 AND c.community_id = ?2 ORDER BY k.id LIMIT 1"));
  sel.BindBlob(1, decision_id.data(), decision_id.size());
  sel.Bind(2, community);
  ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
  if (!row) return std::optional<Id>();
  return std::optional<Id>(sel.Int(0));
}

Result<Id> InsertEvent(Connection& c, const AdvertiserEventRecord& e) {
  ADS_ASSIGN_OR_RETURN(
      Statement ins,
      c.Prepare("INSERT INTO advertiser_events (community_id, key_id, name, url, decision_id, "
                "campaign_id, person, created_at, invalid_reason) VALUES (?1, ?2, ?3, ?4, ?5, "
                "?6, ?7, ?8, ?9) RETURNING id"));
  ins.Bind(1, e.community_id).Bind(2, e.key_id).Bind(3, e.name);
  if (e.url) {
    ins.Bind(4, *e.url);
  } else {
    ins.BindNull(4);
  }
  if (e.decision_id) {
    ins.BindBlob(5, e.decision_id->data(), e.decision_id->size());
  } else {
    ins.BindNull(5);
  }
  ins.Bind(6, e.campaign_id).Bind(7, static_cast<int64_t>(e.person)).Bind(8, e.created_at);
  if (e.invalid_reason.empty()) {
    ins.BindNull(9);
  } else {
    ins.Bind(9, e.invalid_reason);
  }
  ADS_ASSIGN_OR_RETURN(bool row, ins.Step());
  if (!row) return InternalError("an advertiser event was not inserted");
  return Id{ins.Int(0)};
}

// Counts `e` under its name, or under its reason when it is invalid. Columns are qualified:
// PostgreSQL rejects a name that both the table and `excluded` have.
Status CountEvent(Connection& c, const AdvertiserEventRecord& e) {
  const bool invalid = !e.invalid_reason.empty();
  ADS_ASSIGN_OR_RETURN(
      Statement count,
      c.Prepare(invalid ? "INSERT INTO advertiser_event_invalid_counts (community_id, "
                          "campaign_id, reason, count) VALUES (?1, ?2, ?3, 1) ON CONFLICT "
                          "(community_id, campaign_id, reason) DO UPDATE SET count = "
                          "advertiser_event_invalid_counts.count + 1"
                        : "INSERT INTO advertiser_event_counts (community_id, campaign_id, name, "
                          "count) VALUES (?1, ?2, ?3, 1) ON CONFLICT (community_id, campaign_id, "
                          "name) DO UPDATE SET count = advertiser_event_counts.count + 1"));
  return count.Bind(1, e.community_id)
      .Bind(2, e.campaign_id.value_or(0))
      .Bind(3, invalid ? e.invalid_reason : e.name)
      .Run();
}

AdvertiserEventRecord ReadEvent(const Statement& sel) {
  AdvertiserEventRecord e;
  e.id = sel.Int(0);
  e.community_id = sel.Int(1);
  e.key_id = sel.Int(2);
  e.name = sel.Text(3);
  if (!sel.IsNull(4)) e.url = sel.Text(4);
  std::array<uint8_t, 16> decision{};
  if (!sel.IsNull(5) && sel.Blob(5, decision.data(), decision.size())) e.decision_id = decision;
  e.campaign_id = sel.OptInt(6);
  e.person = static_cast<uint64_t>(sel.Int(7));
  e.created_at = sel.Int(8);
  if (!sel.IsNull(9)) e.invalid_reason = sel.Text(9);
  return e;
}

// SUM(count) per `key` of `table` with Counts' filters.
Result<std::vector<AdvertiserEventCount>> SumCounts(Runner& runner, const char* table,
                                                    const char* key, std::optional<Id> campaign_id,
                                                    std::optional<Id> community_id) {
  return Transact<std::vector<AdvertiserEventCount>>(
      runner, false, [&](Connection& c) -> Result<std::vector<AdvertiserEventCount>> {
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare(std::string("SELECT ") + key + ", SUM(count) FROM " + table +
                      " WHERE (CAST(?1 AS BIGINT) IS NULL OR campaign_id = ?1) "
                      "AND (CAST(?2 AS BIGINT) IS NULL OR community_id = ?2) GROUP BY " +
                      key + " ORDER BY " + key));
        sel.Bind(1, campaign_id).Bind(2, community_id);
        std::vector<AdvertiserEventCount> out;
        for (;;) {
          ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
          if (!row) return out;
          AdvertiserEventCount& count = out.emplace_back();
          count.name = sel.Text(0);
          count.count = sel.Int(1);
        }
      });
}

}  // namespace

Status SqlAdvertiserEvents::Insert(AdvertiserEventRecord& e) {
  return runner_.Write(0, [&](Connection& c) -> Status {
    e.campaign_id.reset();
    if (e.decision_id) {
      ADS_ASSIGN_OR_RETURN(e.campaign_id, CampaignOfClick(c, *e.decision_id, e.community_id));
    }
    ADS_ASSIGN_OR_RETURN(e.id, InsertEvent(c, e));
    return CountEvent(c, e);
  });
}

Result<std::vector<AdvertiserEventRecord>> SqlAdvertiserEvents::List(
    const AdvertiserEventQuery& q) {
  return Transact<std::vector<AdvertiserEventRecord>>(
      runner_, false, [&](Connection& c) -> Result<std::vector<AdvertiserEventRecord>> {
        // NULL parameters disable their filter; one statement for every combination.
        ADS_ASSIGN_OR_RETURN(
            Statement sel,
            c.Prepare("SELECT id, community_id, key_id, name, url, decision_id, campaign_id, "
                      "person, created_at, invalid_reason FROM advertiser_events "
                      "WHERE (CAST(?1 AS BIGINT) IS NULL OR campaign_id = ?1) "
                      "AND (CAST(?2 AS BIGINT) IS NULL OR community_id = ?2) "
                      "AND (CAST(?3 AS BIGINT) IS NULL OR created_at >= ?3) "
                      "AND (CAST(?4 AS BIGINT) IS NULL OR created_at < ?4) "
                      "AND (CAST(?5 AS BIGINT) IS NULL OR id < ?5) "
                      "ORDER BY id DESC LIMIT ?6"));
        sel.Bind(1, q.campaign_id)
            .Bind(2, q.community_id)
            .Bind(3, q.from)
            .Bind(4, q.to)
            .Bind(5, q.before_id)
            .Bind(6, int64_t{q.limit});
        std::vector<AdvertiserEventRecord> rows;
        for (;;) {
          ADS_ASSIGN_OR_RETURN(bool row, sel.Step());
          if (!row) return rows;
          rows.push_back(ReadEvent(sel));
        }
      });
}

Result<std::vector<AdvertiserEventCount>> SqlAdvertiserEvents::Counts(
    std::optional<Id> campaign_id, std::optional<Id> community_id) {
  return SumCounts(runner_, "advertiser_event_counts", "name", campaign_id, community_id);
}

Result<std::vector<AdvertiserEventCount>> SqlAdvertiserEvents::InvalidCounts(
    std::optional<Id> campaign_id, std::optional<Id> community_id) {
  return SumCounts(runner_, "advertiser_event_invalid_counts", "reason", campaign_id, community_id);
}

Result<int64_t> SqlAdvertiserEvents::Prune(int64_t before) {
  return Transact<int64_t>(runner_, true, [&](Connection& c) -> Result<int64_t> {
    ADS_ASSIGN_OR_RETURN(Statement del,
                         c.Prepare("DELETE FROM advertiser_events WHERE created_at < ?1"));
    ADS_RETURN_IF_ERROR(del.Bind(1, before).Run());
    return c.Changes();
  });
}

}  // namespace adserver::store::sql
