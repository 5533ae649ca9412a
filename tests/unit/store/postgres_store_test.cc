// What only the PostgreSQL adapter has to get right (the shared behaviour is in
// store_contract_test.cc): nodes migrating one database at once, erasure writers on several
// nodes with a follower that must miss none, a connection the server drops, and the cluster
// CLI's conversions billed in their own transaction with the Redis takes they queue.

#include "store/postgres/postgres_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "cluster/budget_takes.h"
#include "cluster/placements.h"
#include "common/clock.h"
#include "store/postgres/detail/pg_connection.h"
#include "store/postgres/detail/pg_migrations.h"
#include "store/postgres/postgres_events_store.h"
#include "store/postgres/postgres_placement_counters.h"
#include "store/redis/redis_budget_authority.h"
#include "support/postgres/test_database.h"
#include "support/redis/test_redis.h"

namespace adserver::store {
namespace {

using pg_detail::PgConnection;

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ADSERVER_REQUIRE_TEST_DATABASE(db_); }
  adserver::testing::TestDatabase db_;
};

TEST_F(PostgresStoreTest, NodesStartingTogetherApplyEachMigrationOnce) {
  std::vector<std::thread> nodes;
  std::atomic<int> opened{0};
  for (int i = 0; i < 6; ++i) {
    nodes.emplace_back([&] {
      auto store = PostgresStore::Open(db_.url());
      EXPECT_TRUE(store.ok()) << store.status().message();
      if (store.ok()) ++opened;
    });
  }
  for (std::thread& t : nodes) t.join();
  EXPECT_EQ(opened.load(), 6);
  auto conn = PgConnection::Open(db_.url());
  ASSERT_TRUE(conn.ok());
  auto rows = (*conn)->Exec("SELECT count(*), max(version) FROM schema_migrations");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(*rows->Int(0, 0), pg_detail::LatestSchemaVersion());
  EXPECT_EQ(*rows->Int(0, 1), pg_detail::LatestSchemaVersion());
}

TEST_F(PostgresStoreTest, AFollowerMissesNoErasureOfConcurrentWriters) {
  constexpr int kWriters = 4, kEach = 40;
  std::atomic<int> done{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto store = PostgresStore::Open(db_.url());
      ASSERT_TRUE(store.ok());
      for (int i = 0; i < kEach; ++i) {
        auto put = (*store)->PutErasure(static_cast<uint64_t>(w * 1000 + i + 1), 100);
        EXPECT_TRUE(put.ok()) << put.status().message();
      }
      ++done;
    });
  }
  auto follower = PostgresStore::Open(db_.url());
  ASSERT_TRUE(follower.ok());
  std::multiset<uint64_t> seen;
  int64_t after = 0;
  auto poll = [&] {
    Status st = (*follower)->ScanErasures(after, [&](const ErasureRecord& r) {
      EXPECT_GT(r.seq, after);
      after = r.seq;
      seen.insert(r.digest);
    });
    EXPECT_TRUE(st.ok()) << st.message();
  };
  while (done.load() < kWriters) poll();
  for (std::thread& t : writers) t.join();
  poll();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kWriters * kEach));
  EXPECT_EQ(std::set<uint64_t>(seen.begin(), seen.end()).size(), seen.size()) << "none twice";
}

// The lost session is found when the next transaction begins: nothing ran, so it is begun again
// on a new session (a server restart or a failover costs the caller nothing).
TEST_F(PostgresStoreTest, ADroppedConnectionIsReestablishedWhenTheNextTransactionBegins) {
  auto store = PostgresStore::Open(db_.url());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->PutErasure(1, 100).ok());
  auto admin = PgConnection::Open(db_.url());
  ASSERT_TRUE(admin.ok());
  // What a server restart or a failover does to the adapter's connection.
  auto killed = (*admin)->Exec(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
      "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  ASSERT_TRUE(killed.ok()) << killed.status().message();
  ASSERT_EQ(*killed->Int(0, 0), 1);
  auto again = (*store)->PutErasure(2, 100);
  ASSERT_TRUE(again.ok()) << again.status().message();
  auto after = (*admin)->Exec(
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid()");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after->Int(0, 0), 1) << "one new session";
  std::vector<uint64_t> digests;
  ASSERT_TRUE(
      (*store)->ScanErasures(0, [&](const ErasureRecord& r) { digests.push_back(r.digest); }).ok());
  EXPECT_EQ(digests, (std::vector<uint64_t>{1, 2}));
}

// The CLI's conversions: any number of processes add to one shared counters row, and every
// node reads it with the other nodes' rows.
TEST_F(PostgresStoreTest, WritersSharingANodeIdAddTheirDeltasAndOtherNodesSeeTheSum) {
  constexpr int kWriters = 4, kEach = 25;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      auto store = PostgresStore::Open(db_.url());
      ASSERT_TRUE(store.ok());
      (*store)->SetNodeId("(cli)");
      for (int i = 0; i < kEach; ++i) {
        CampaignCountersRecord d{.campaign_id = 7, .total_spend = 3, .conversions = 1,
                                 .day = 100, .day_spend = 3, .hour = 2400, .hour_spend = 3};
        Status st = (*store)->AddCampaignCounters({d});
        EXPECT_TRUE(st.ok()) << st.message();
      }
    });
  }
  for (std::thread& t : writers) t.join();
  auto cli = PostgresStore::Open(db_.url());
  ASSERT_TRUE(cli.ok());
  (*cli)->SetNodeId("(cli)");
  auto own = (*cli)->LoadCampaignCounters();
  ASSERT_TRUE(own.ok());
  ASSERT_EQ(own->size(), 1u);
  CampaignCountersRecord expected{.campaign_id = 7, .total_spend = 300, .conversions = 100,
                                  .day = 100, .day_spend = 300, .hour = 2400, .hour_spend = 300};
  EXPECT_EQ((*own)[0], expected);

  // Periods: a newer hour starts over, an older day leaves the row's day alone, a negative
  // delta (a reverted conversion) takes back.
  ASSERT_TRUE((*cli)->AddCampaignCounters({{.campaign_id = 7, .total_spend = 5, .conversions = 1,
                                             .day = 100, .day_spend = 5, .hour = 2401,
                                             .hour_spend = 5}})
                  .ok());
  ASSERT_TRUE((*cli)->AddCampaignCounters({{.campaign_id = 7, .total_spend = -3,
                                             .conversions = -1, .day = 99, .day_spend = -3,
                                             .hour = 2376, .hour_spend = -3}})
                  .ok());
  own = (*cli)->LoadCampaignCounters();
  ASSERT_TRUE(own.ok());
  expected = {.campaign_id = 7, .total_spend = 302, .conversions = 100, .day = 100,
              .day_spend = 305, .hour = 2401, .hour_spend = 5};
  EXPECT_EQ((*own)[0], expected);

  auto node = PostgresStore::Open(db_.url());
  ASSERT_TRUE(node.ok());
  (*node)->SetNodeId("node-1");
  ASSERT_TRUE((*node)->SaveCampaignCounters({{.campaign_id = 7, .total_spend = 1000,
                                              .impressions = 9, .day = 100, .day_spend = 1000,
                                              .hour = 2401, .hour_spend = 10}})
                  .ok());
  auto others = (*node)->LoadOtherNodesCounters(100, 2401);
  ASSERT_TRUE(others.ok());
  ASSERT_EQ(others->size(), 1u);
  EXPECT_EQ((*others)[0].total_spend, 302);
  EXPECT_EQ((*others)[0].conversions, 100);
  EXPECT_EQ((*others)[0].day_spend, 305);
  EXPECT_EQ((*others)[0].hour_spend, 5);
  auto from_cli = (*cli)->LoadOtherNodesCounters(100, 2401);
  ASSERT_TRUE(from_cli.ok());
  ASSERT_EQ(from_cli->size(), 1u);
  EXPECT_EQ((*from_cli)[0].impressions, 9);

  auto unnamed = PostgresStore::Open(db_.url());
  ASSERT_TRUE(unnamed.ok());
  EXPECT_FALSE((*unnamed)->AddCampaignCounters({expected}).ok()) << "a node id is needed";
}

// The cluster CLI's conversions (PostgresEventsStore::BillConversionsTo): billed in the
// transaction that records them, unbilled in the one that reverts them, and the Redis takes
// queued for DrainBudgetTakes.
ConversionCandidate CliConversion(uint8_t tx, Id campaign) {
  ConversionCandidate c;
  ConversionRecord& r = c.record;
  r.campaign_id = campaign;
  r.ad_id = 20;
  r.publisher_id = 1;
  r.person = tx;
  r.chain_id = 1;
  r.tx_hash[0] = tx;
  r.block_number = 100 + tx;
  r.block_hash[0] = tx;
  r.block_time = 1'700'000'000;
  r.touched_at = r.block_time - 60;
  r.price = 3'000'000;
  c.window_seconds = 14 * 86400;
  return c;
}

TEST_F(PostgresStoreTest, TheCliBillsConversionsInTheTransactionThatRecordsThem) {
  constexpr int64_t kNow = 1'700'000'100;
  auto events = PostgresEventsStore::Open(db_.url());
  ASSERT_TRUE(events.ok()) << events.status().message();
  (*events)->BillConversionsTo("(cli)", [](Id campaign) { return campaign != 11; });
  auto conn = PgConnection::Open(db_.url());
  ASSERT_TRUE(conn.ok());
  const auto counters = [&](Id campaign) {
    auto r = (*conn)->Exec("SELECT conversions, total_spend_micros, day_spend_micros FROM "
                           "node_campaign_counters WHERE node_id = '(cli)' AND campaign_id = $1",
                           {pg_detail::Param(campaign)});
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok() || r->rows() == 0) return std::vector<int64_t>{};
    return std::vector<int64_t>{*r->Int(0, 0), *r->Int(0, 1), *r->Int(0, 2)};
  };
  const auto queued = [&] {
    auto r = (*conn)->Exec("SELECT campaign_id, micros FROM budget_takes ORDER BY id");
    EXPECT_TRUE(r.ok());
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int i = 0; r.ok() && i < r->rows(); ++i) out.emplace_back(*r->Int(i, 0), *r->Int(i, 1));
    return out;
  };

  auto first = (*events)->InsertConversions(
      std::vector{CliConversion(1, 10), CliConversion(2, 11), CliConversion(3, 12)}, kNow);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ(counters(10), (std::vector<int64_t>{1, 3'000'000, 3'000'000}));
  EXPECT_EQ(counters(11), (std::vector<int64_t>{1, 3'000'000, 3'000'000}));
  // Campaign 11 has no total budget: nothing for Redis.
  EXPECT_EQ(queued(), (std::vector<std::pair<int64_t, int64_t>>{{10, 3'000'000}, {12, 3'000'000}}));

  // A conversion already recorded is skipped and billed nothing.
  auto again = (*events)->InsertConversions(std::vector{CliConversion(1, 10)}, kNow);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(counters(10), (std::vector<int64_t>{1, 3'000'000, 3'000'000}));
  EXPECT_EQ(queued().size(), 2u);

  // A reorg takes campaign 10's conversion back, with its spend and its take.
  std::array<uint8_t, 32> hash{};
  hash[0] = 1;
  auto reverted = (*events)->RevertConversions(1, 101, hash, kNow + 5);
  ASSERT_TRUE(reverted.ok()) << reverted.status().message();
  ASSERT_EQ(reverted->size(), 1u);
  EXPECT_EQ(counters(10), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(queued().back(), (std::pair<int64_t, int64_t>{10, -3'000'000}));

  // When the billing cannot be written, the conversion is not recorded either.
  ASSERT_TRUE((*conn)->ExecScript("ALTER TABLE budget_takes RENAME TO budget_takes_away").ok());
  auto refused = (*events)->InsertConversions(std::vector{CliConversion(4, 10)}, kNow);
  EXPECT_FALSE(refused.ok());
  auto last = (*events)->LastConversionId();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, first->back().id);
  EXPECT_EQ(counters(10), (std::vector<int64_t>{0, 0, 0}));
  ASSERT_TRUE((*conn)->ExecScript("ALTER TABLE budget_takes_away RENAME TO budget_takes").ok());
  auto retried = (*events)->InsertConversions(std::vector{CliConversion(4, 10)}, kNow);
  ASSERT_TRUE(retried.ok()) << retried.status().message();
  EXPECT_EQ(retried->size(), 1u);
  EXPECT_EQ(counters(10), (std::vector<int64_t>{1, 3'000'000, 3'000'000}));

  // Delivery: summed per campaign, in the order of each campaign's oldest row; a campaign the
  // taker refuses stops the drain and keeps its rows, what was delivered before it is gone.
  auto store = PostgresStore::Open(db_.url());
  ASSERT_TRUE(store.ok());
  std::vector<std::pair<Id, Micros>> applied;
  auto drained = (*store)->DrainBudgetTakes([&](Id campaign, Micros micros) -> Status {
    if (campaign == 12) return UnavailableError("redis down");
    applied.emplace_back(campaign, micros);
    return OkStatus();
  });
  EXPECT_EQ(drained.status().code(), Code::kUnavailable);
  EXPECT_EQ(applied, (std::vector<std::pair<Id, Micros>>{{10, 3'000'000}}));
  EXPECT_EQ(queued(), (std::vector<std::pair<int64_t, int64_t>>{{12, 3'000'000}}));
  applied.clear();
  drained = (*store)->DrainBudgetTakes([&](Id campaign, Micros micros) -> Status {
    applied.emplace_back(campaign, micros);
    return OkStatus();
  });
  ASSERT_TRUE(drained.ok()) << drained.status().message();
  EXPECT_EQ(*drained, 1u);
  EXPECT_EQ(applied, (std::vector<std::pair<Id, Micros>>{{12, 3'000'000}}));
  EXPECT_TRUE(queued().empty());
}

ClickRecord NodeClick(uint8_t decision, int64_t clicked_at) {
  ClickRecord r;
  r.decision_id[0] = decision;
  r.publisher_id = 1;
  r.campaign_id = 10;
  r.ad_id = 20;
  r.served_at = clicked_at - 5;
  r.clicked_at = clicked_at;
  r.price = 1'000'000;
  return r;
}

// Issue 37 item 3: a node's clicks, conversions and reverts name it; its backlog is what it
// billed past its marks; a dead node's backlog is added to its counters once, by one live node.
TEST_F(PostgresStoreTest, ANodesBacklogIsWhatItBilledPastItsMarksAndADeadNodeIsReconciledOnce) {
  constexpr int64_t kNow = 1'700'000'100;
  auto events = PostgresEventsStore::Open(db_.url());
  ASSERT_TRUE(events.ok()) << events.status().message();
  (*events)->SetNodeId("node-a");
  auto node_a = PostgresStore::Open(db_.url());
  auto node_b = PostgresStore::Open(db_.url());
  ASSERT_TRUE(node_a.ok() && node_b.ok());
  (*node_a)->SetNodeId("node-a");
  (*node_b)->SetNodeId("node-b");

  // Three billed clicks, a duplicate, and one billed while buffered (no node: counted when it
  // was buffered).
  std::vector<ClickRecord> clicks{NodeClick(1, kNow), NodeClick(2, kNow), NodeClick(1, kNow),
                                  NodeClick(3, kNow + 1), NodeClick(4, kNow + 1)};
  clicks[4].buffered = true;
  ASSERT_TRUE((*events)->InsertClicks(clicks).ok());
  ASSERT_EQ(clicks[2].status, ClickStatus::kDuplicate);
  auto recorded =
      (*events)->InsertConversions(std::vector{CliConversion(1, 10), CliConversion(2, 10)}, kNow);
  ASSERT_TRUE(recorded.ok()) << recorded.status().message();
  ASSERT_EQ(recorded->size(), 2u);
  std::array<uint8_t, 32> hash{};
  hash[0] = 2;
  auto reverted = (*events)->RevertConversions(1, 102, hash, kNow + 5);
  ASSERT_TRUE(reverted.ok()) << reverted.status().message();
  ASSERT_EQ(reverted->size(), 1u);

  auto all = (*events)->NodeBacklogAfter("node-a", 0, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->clicks.size(), 3u);       // the duplicate and the buffered one are not billed here
  EXPECT_EQ(all->conversions.size(), 2u);  // one reorged since: billed when recorded
  ASSERT_EQ(all->reverts.size(), 1u);
  EXPECT_EQ(all->last_click_id, clicks[3].id);  // the duplicate's row is the node's too
  EXPECT_EQ(all->last_conversion_id, recorded->back().id);
  EXPECT_EQ(all->last_revert_seq, (*reverted)[0].revert_seq);
  auto other = (*events)->NodeBacklogAfter("node-b", 0, 0, 0);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->clicks.empty() && other->conversions.empty() && other->reverts.empty());

  // Node A saved counters holding its first two clicks and first conversion.
  EXPECT_FALSE(*(*node_a)->LoadCounterMarks());
  const CounterMarks marks{
      .conversion_id = (*recorded)[0].id, .revert_seq = 0, .click_id = clicks[1].id};
  CampaignCountersRecord row{.campaign_id = 10,
                             .total_spend = 5'000'000,
                             .clicks = 2,
                             .conversions = 1,
                             .day = DayOf(kNow),
                             .day_spend = 5'000'000,
                             .hour = kNow / 3600,
                             .hour_spend = 5'000'000};
  ASSERT_TRUE((*node_a)->SaveCampaignCountersAt({row}, marks).ok());
  auto loaded = (*node_a)->LoadCounterMarks();
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ(**loaded, marks);
  auto past = (*events)->NodeBacklogAfter("node-a", marks.click_id, marks.conversion_id, 0);
  ASSERT_TRUE(past.ok());
  ASSERT_EQ(past->clicks.size(), 1u);
  EXPECT_EQ(past->clicks[0].id, clicks[3].id);
  ASSERT_EQ(past->conversions.size(), 1u);
  EXPECT_EQ(past->reverts.size(), 1u);

  // Not dead yet: nothing happens.
  auto round = (*node_b)->ReconcileDeadNodes(30);
  ASSERT_TRUE(round.ok()) << round.status().message();
  EXPECT_TRUE(round->nodes.empty());
  // Dead: node B adds A's click, conversion and revert to A's rows, once.
  auto conn = PgConnection::Open(db_.url());
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->ExecScript("UPDATE node_counter_marks SET saved_at = saved_at - 100").ok());
  round = (*node_b)->ReconcileDeadNodes(30);
  ASSERT_TRUE(round.ok()) << round.status().message();
  EXPECT_EQ(round->nodes, std::vector<std::string>{"node-a"});
  EXPECT_EQ(round->clicks, 1);
  EXPECT_EQ(round->conversions, 1);
  EXPECT_EQ(round->reverts, 1);
  auto a_rows = (*node_a)->LoadCampaignCounters();
  ASSERT_TRUE(a_rows.ok());
  ASSERT_EQ(a_rows->size(), 1u);
  // 2 + 1 clicks; 1 + 1 - 1 conversions; 5 M + 1 M (click) + 3 M - 3 M (the revert).
  EXPECT_EQ((*a_rows)[0].clicks, 3);
  EXPECT_EQ((*a_rows)[0].conversions, 1);
  EXPECT_EQ((*a_rows)[0].total_spend, 6'000'000);
  auto moved = (*node_a)->LoadCounterMarks();
  ASSERT_TRUE(moved.ok() && moved->has_value());
  EXPECT_EQ((*moved)->click_id, clicks[3].id);
  EXPECT_EQ((*moved)->conversion_id, recorded->back().id);
  EXPECT_EQ((*moved)->revert_seq, (*reverted)[0].revert_seq);
  round = (*node_b)->ReconcileDeadNodes(30);
  ASSERT_TRUE(round.ok());
  EXPECT_TRUE(round->nodes.empty());
  auto again = (*node_a)->LoadCampaignCounters();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[0].clicks, 3);
  // A node is never its own dead node.
  round = (*node_a)->ReconcileDeadNodes(30);
  ASSERT_TRUE(round.ok());
  EXPECT_TRUE(round->nodes.empty());
}

// cluster::DeliverBudgetTakes over a real PostgreSQL queue and a real Redis: takes and gives summed
// per campaign, a campaign Redis does not know left to its seed, and a Redis that cannot be
// reached keeping the queue and naming the amount.
TEST_F(PostgresStoreTest, QueuedBudgetTakesReachRedisOnce) {
  adserver::testing::TestRedis redis;
  if (!redis.error().empty()) FAIL() << redis.error();
  if (!redis.skip_reason().empty()) GTEST_SKIP() << redis.skip_reason();
  constexpr int64_t kNow = 1'700'000'100;
  auto events = PostgresEventsStore::Open(db_.url());
  ASSERT_TRUE(events.ok()) << events.status().message();
  (*events)->BillConversionsTo("(cli)", [](Id) { return true; });
  auto queue = PostgresStore::Open(db_.url());
  ASSERT_TRUE(queue.ok());
  auto budgets = RedisBudgetAuthority::Open(redis.url(), redis.prefix());
  ASSERT_TRUE(budgets.ok()) << budgets.status().message();
  ASSERT_TRUE(*(*budgets)->Seed(10, 10'000'000));
  const auto queued = [&] {
    auto conn = PgConnection::Open(db_.url());
    auto r = (*conn)->Exec("SELECT count(*) FROM budget_takes");
    return r.ok() ? *r->Int(0, 0) : -1;
  };

  // Two conversions of campaign 10, one reverted; one of campaign 12, which Redis does not know.
  ASSERT_TRUE((*events)
                  ->InsertConversions(std::vector{CliConversion(1, 10), CliConversion(2, 10),
                                                  CliConversion(3, 12)},
                                      kNow)
                  .ok());
  std::array<uint8_t, 32> hash{};
  hash[0] = 2;
  ASSERT_EQ((*events)->RevertConversions(1, 102, hash, kNow + 1)->size(), 1u);
  ASSERT_EQ(queued(), 4);
  ASSERT_TRUE(cluster::DeliverBudgetTakes(**queue, **budgets).ok());
  EXPECT_EQ(queued(), 0);
  // Delivered once: a second delivery finds nothing.
  ASSERT_TRUE(cluster::DeliverBudgetTakes(**queue, **budgets).ok());
  // A later revert gives the price back.
  hash[0] = 1;
  ASSERT_EQ((*events)->RevertConversions(1, 101, hash, kNow + 2)->size(), 1u);

  // Redis away: the take stays queued and the error names the campaign and the amount.
  auto away = RedisBudgetAuthority::Open("redis://127.0.0.1:1", redis.prefix(),
                                         /*wait_for_redis=*/true);
  ASSERT_TRUE(away.ok()) << away.status().message();
  Status refused = cluster::DeliverBudgetTakes(**queue, **away);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("campaign 10: -3000000 micros not delivered"),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(queued(), 1);
  ASSERT_TRUE(cluster::DeliverBudgetTakes(**queue, **budgets).ok());
  EXPECT_EQ(queued(), 0);
  // 10 M seeded, 3 M taken for the conversion that stayed, then given back when it was reverted.
  EXPECT_EQ(*(*budgets)->Take(10, 100'000'000), 10'000'000);
  EXPECT_EQ((*budgets)->Take(12, 1).status().code(), Code::kNotFound);
}

TEST(PostgresStoreOpenTest, AnUnreachableServerIsUnavailableAndABadUrlInvalid) {
  // Port 1 on loopback: nothing listens there.
  auto down = PostgresStore::Open("postgresql://postgres@127.0.0.1:1/x?connect_timeout=2");
  EXPECT_EQ(down.status().code(), Code::kUnavailable) << down.status().message();
  auto bad = PostgresStore::Open("postgresql://[not a url");
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument) << bad.status().message();
}

// Issue 36 item 6: each node's per-placement counts, and the others' read by seq.
TEST_F(PostgresStoreTest, PlacementCountersAreEachNodesOwnAndReadBySeq) {
  auto a = PostgresPlacementCounters::Open(db_.url(), "a");
  auto b = PostgresPlacementCounters::Open(db_.url(), "b");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_FALSE(PostgresPlacementCounters::Open(db_.url(), "").ok());
  std::vector<PlacementCountersRow> rows = {
      {.campaign_id = 7, .publisher_id = 1, .impressions = 100, .events = 3},
      {.campaign_id = 7, .publisher_id = 2, .impressions = 50, .events = 0}};
  ASSERT_TRUE((*a)->SaveOwn(rows).ok());
  auto others = (*b)->LoadOthersAfter(0, 100);
  ASSERT_TRUE(others.ok()) << others.status().message();
  ASSERT_EQ(others->size(), 2u);
  EXPECT_EQ((*others)[0].node_id, "a");
  EXPECT_LT((*others)[0].seq, (*others)[1].seq);
  EXPECT_TRUE((*a)->LoadOthersAfter(0, 100)->empty()) << "a node's own rows are not the others'";

  // A save replaces the node's row of its pair (absolute values) with a newer seq.
  const int64_t seen = (*others)[1].seq;
  ASSERT_TRUE(
      (*a)->SaveOwn(std::vector<PlacementCountersRow>{
                        {.campaign_id = 7, .publisher_id = 1, .impressions = 120, .events = 2}})
          .ok());
  auto changed = (*b)->LoadOthersAfter(seen, 100);
  ASSERT_TRUE(changed.ok());
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].impressions, 120);
  EXPECT_EQ((*changed)[0].events, 2);
  EXPECT_GT((*changed)[0].seq, seen);
  EXPECT_EQ((*b)->LoadOthersAfter(0, 1)->size(), 1u) << "the limit";
  auto own = (*a)->LoadOwn();
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->size(), 2u);
  EXPECT_TRUE((*b)->LoadOwn()->empty());

  // End to end: what node a counts reaches node b's placement feed.
  cluster::ClusterPlacements node_a(**a, 100), node_b(**b, 100);
  ASSERT_TRUE(node_a.Start().ok());
  ASSERT_TRUE(node_b.Start().ok());
  decision::PlacementFeed feed_a(100), feed_b(100);
  node_a.Note({7, 1}, 30, 1);
  ASSERT_TRUE(node_a.Sync(feed_a).ok());
  ASSERT_TRUE(node_b.Sync(feed_b).ok());
  std::vector<decision::PlacementDelta> fed = feed_b.Take();
  ASSERT_EQ(fed.size(), 1u);
  EXPECT_EQ(fed[0].key.campaign_id, 7);
  EXPECT_EQ(fed[0].key.publisher_id, 1);
  EXPECT_EQ(fed[0].impressions, 30);
  EXPECT_EQ(fed[0].events, 1);
  // Node a continued from its saved row: 120 + 30.
  auto saved = (*a)->LoadOwn();
  ASSERT_TRUE(saved.ok());
  auto row = std::find_if(saved->begin(), saved->end(),
                          [](const PlacementCountersRow& r) { return r.publisher_id == 1; });
  ASSERT_NE(row, saved->end());
  EXPECT_EQ(row->impressions, 150);
  EXPECT_EQ(row->events, 3);

  // Per placement (issue 36 item 5): a unit's row is its own beside its publisher's, and its
  // key's 64 bits survive the bigint (this one's top bit is set).
  const uint64_t hero = decision::AdUnitKey("hero");
  ASSERT_GE(hero, uint64_t{1} << 63);
  ASSERT_TRUE((*a)->SaveOwn(std::vector<PlacementCountersRow>{{.campaign_id = 7,
                                                               .publisher_id = 1,
                                                               .ad_unit = hero,
                                                               .impressions = 20,
                                                               .events = 1}})
                  .ok());
  auto units = (*b)->LoadOthersAfter(0, 100);
  ASSERT_TRUE(units.ok()) << units.status().message();
  ASSERT_EQ(units->size(), 3u);
  const auto unit_row =
      std::find_if(units->begin(), units->end(),
                   [&](const PlacementCountersRow& r) { return r.ad_unit == hero; });
  ASSERT_NE(unit_row, units->end());
  EXPECT_EQ(unit_row->impressions, 20);
  EXPECT_EQ((*a)->LoadOwn()->size(), 3u);
  // Read in seq order across both tables: the unit row was written last.
  EXPECT_EQ(units->back().ad_unit, hero);

  // A rolling upgrade: a node one release behind (before migration 20) still saves its publisher
  // rows with its own statement, and the new nodes read them.
  auto old_node = PgConnection::Open(db_.url());
  ASSERT_TRUE(old_node.ok());
  auto saved_old = (*old_node)->Exec(
      "INSERT INTO node_placement_counters (node_id, campaign_id, publisher_id, impressions, "
      "events, seq) SELECT $1, c, p, i, e, nextval('node_placement_seq') FROM "
      "unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS t (c, p, i, e) "
      "ON CONFLICT (node_id, campaign_id, publisher_id) DO UPDATE SET "
      "impressions = EXCLUDED.impressions, events = EXCLUDED.events, seq = EXCLUDED.seq",
      {pg_detail::Param(std::string_view("old")), std::string("{9}"), std::string("{4}"),
       std::string("{77}"), std::string("{2}")});
  ASSERT_TRUE(saved_old.ok()) << saved_old.status().message();
  auto after_old = (*b)->LoadOthersAfter(units->back().seq, 100);
  ASSERT_TRUE(after_old.ok());
  ASSERT_EQ(after_old->size(), 1u);
  EXPECT_EQ((*after_old)[0].node_id, "old");
  EXPECT_EQ((*after_old)[0].ad_unit, 0u);
  EXPECT_EQ((*after_old)[0].impressions, 77);
}

}  // namespace
}  // namespace adserver::store
