#pragma once

// Clicks buffered on the node's disk while the events store cannot take them (cluster mode,
// issue 17 item 8: PostgreSQL down). InsertClicks goes to the primary store; when that answers
// Unavailable, the clicks are appended to the outbox instead (durable there, so their redirect is
// answered and nothing acknowledged is lost), up to `max_buffered` clicks; beyond that the
// click is refused as before (503, try again). Checkpoint() (the events service calls it every
// flush interval) delivers the outbox to the primary, oldest first, and removes what was
// delivered. Every other call goes to the primary.
//
// While buffering, a node decides a click's billing against its own outbox (a decision is billed
// once per node); the primary decides again on delivery, so a decision clicked through two nodes
// during one outage is stored billed once, but both nodes' counters billed it (docs/deploy.md).
// A crash between a delivery's commit and the outbox's removal delivers those clicks again: the
// primary stores them as duplicates of themselves, billed once.

#include <atomic>
#include <cstdint>

#include "common/mutex.h"
#include "store/advertiser_events_store.h"
#include "store/event_outbox.h"
#include "store/events_store.h"

namespace adserver::events {

class BufferedEventsStore final : public store::EventsStore {
 public:
  // `primary` and `outbox` must outlive this.
  BufferedEventsStore(store::EventsStore& primary, store::ClickOutbox& outbox,
                      int64_t max_buffered);

  // Clicks in the outbox (read at construction, then kept).
  int64_t buffered() const { return buffered_.load(std::memory_order_relaxed); }
  // Delivers up to `max_rows` buffered clicks; how many were delivered.
  Result<int64_t> Deliver(size_t max_rows);

  Status InsertClicks(std::span<store::ClickRecord> rows) override;
  // Delivers the outbox first (a failure is logged and left for the next call).
  Status Checkpoint() override;

  Result<std::vector<uint8_t>> Secret(std::string_view name,
                                      std::span<const uint8_t> candidate) override {
    return primary_.Secret(name, candidate);
  }
  Result<int64_t> RollUpClicks(int64_t max_rows) override {
    return primary_.RollUpClicks(max_rows);
  }
  Status AddRollups(std::span<const store::RollupRow> rows) override {
    return primary_.AddRollups(rows);
  }
  Result<std::vector<store::ClickRecord>> ListClicks(const store::EventQuery& query) override {
    return primary_.ListClicks(query);
  }
  Result<std::optional<int64_t>> BilledClickAt(const store::DecisionIdBytes& decision_id) override {
    return primary_.BilledClickAt(decision_id);
  }
  Result<std::optional<store::ClickRecord>> LastBilledClick(store::Id campaign_id, uint64_t person,
                                                            int64_t served_from,
                                                            int64_t clicked_by) override {
    return primary_.LastBilledClick(campaign_id, person, served_from, clicked_by);
  }
  Result<std::vector<store::ConversionRecord>> InsertConversions(
      std::span<const store::ConversionCandidate> candidates, int64_t now) override {
    return primary_.InsertConversions(candidates, now);
  }
  Result<std::vector<store::ConversionRecord>> RevertConversions(
      int64_t chain_id, int64_t block_number, const std::array<uint8_t, 32>& block_hash,
      int64_t now) override {
    return primary_.RevertConversions(chain_id, block_number, block_hash, now);
  }
  Result<std::vector<store::ConversionRecord>> RevertReplacedConversions(
      int64_t chain_id, std::span<const store::BlockAtHeight> blocks, int64_t now) override {
    return primary_.RevertReplacedConversions(chain_id, blocks, now);
  }
  Result<std::vector<store::ConversionRecord>> ListConversions(
      const store::EventQuery& query) override {
    return primary_.ListConversions(query);
  }
  Result<std::vector<store::ConversionRecord>> ConversionsAfter(store::Id after_id,
                                                                int limit) override {
    return primary_.ConversionsAfter(after_id, limit);
  }
  Result<std::vector<store::ConversionRecord>> ReorgedConversionsSince(
      int64_t since, store::Id after_id, store::Id up_to_id, int limit) override {
    return primary_.ReorgedConversionsSince(since, after_id, up_to_id, limit);
  }
  Result<store::Id> LastConversionId() override { return primary_.LastConversionId(); }
  Result<std::vector<store::ConversionRecord>> ReorgedConversionsAfterSeq(int64_t after_seq,
                                                                          int limit) override {
    return primary_.ReorgedConversionsAfterSeq(after_seq, limit);
  }
  Result<int64_t> LastRevertSeq() override { return primary_.LastRevertSeq(); }
  Result<store::CampaignEventTotals> CampaignTotals(store::Id campaign_id) override {
    return primary_.CampaignTotals(campaign_id);
  }
  Result<std::vector<store::CampaignCountersRecord>> CountersFromEvents(int64_t now) override {
    return primary_.CountersFromEvents(now);
  }
  Result<store::NodeBacklog> NodeBacklogAfter(std::string_view node_id, store::Id click_id,
                                              store::Id conversion_id,
                                              int64_t revert_seq) override {
    return primary_.NodeBacklogAfter(node_id, click_id, conversion_id, revert_seq);
  }
  Result<int64_t> Prune(const store::EventRetention& retention, int64_t now) override {
    return primary_.Prune(retention, now);
  }

 private:
  store::EventsStore& primary_;
  store::ClickOutbox& outbox_;
  const int64_t max_buffered_;
  Mutex deliver_mu_;  // one delivery at a time
  std::atomic<int64_t> buffered_{0};
};

// Advertiser events (POST /v1/events) buffered the same way: Insert goes to the primary store and,
// when that answers Unavailable, to the outbox (up to `max_buffered` events; the campaign of an
// event's spclid is found on delivery). Deliver() (the cluster node's sync thread calls it)
// moves them to the primary, oldest first, each removed once stored (a crash in between
// delivers that one event twice: events never bill). Reads go to the primary.
class BufferedAdvertiserEventsStore final : public store::AdvertiserEventsStore {
 public:
  // `primary` and `outbox` must outlive this.
  BufferedAdvertiserEventsStore(store::AdvertiserEventsStore& primary,
                                store::AdvertiserEventOutbox& outbox, int64_t max_buffered);

  int64_t buffered() const { return buffered_.load(std::memory_order_relaxed); }
  // Delivers up to `max_events` buffered events; how many were delivered.
  Result<int64_t> Deliver(size_t max_events);

  Status Insert(store::AdvertiserEventRecord& event) override;
  Result<std::vector<store::AdvertiserEventRecord>> List(
      const store::AdvertiserEventQuery& query) override {
    return primary_.List(query);
  }
  Result<std::vector<store::AdvertiserEventCount>> Counts(
      std::optional<store::Id> campaign_id, std::optional<store::Id> community_id) override {
    return primary_.Counts(campaign_id, community_id);
  }
  Result<std::vector<store::AdvertiserEventCount>> InvalidCounts(
      std::optional<store::Id> campaign_id, std::optional<store::Id> community_id) override {
    return primary_.InvalidCounts(campaign_id, community_id);
  }
  Result<int64_t> Prune(int64_t before) override { return primary_.Prune(before); }

 private:
  store::AdvertiserEventsStore& primary_;
  store::AdvertiserEventOutbox& outbox_;
  const int64_t max_buffered_;
  Mutex deliver_mu_;  // one delivery at a time
  std::atomic<int64_t> buffered_{0};
};

}  // namespace adserver::events
