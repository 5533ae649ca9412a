// Per-placement counts shared across a cluster (issue 36 item 6), against an in-memory store
// that behaves as node_placement_counters does (one seq for every write); the PostgreSQL store
// itself is tested in tests/unit/store/postgres_store_test.cc.

#include "cluster/placements.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace adserver::cluster {
namespace {

using decision::PlacementDelta;
using decision::PlacementFeed;
using decision::PlacementKey;
using store::PlacementCountersRow;

// One PostgreSQL table seen by several nodes: each node's view knows its own id.
struct Table {
  std::map<std::tuple<std::string, int64_t, int64_t, uint64_t>, PlacementCountersRow> rows;
  int64_t next_seq = 1;
  void Put(PlacementCountersRow row, int64_t seq = 0) {
    row.seq = seq > 0 ? seq : next_seq++;
    rows[{row.node_id, row.campaign_id, row.publisher_id, row.ad_unit}] = row;
  }
};

class NodeView final : public store::PlacementCountersStore {
 public:
  NodeView(Table& table, std::string node) : table_(table), node_(std::move(node)) {}
  Status SaveOwn(std::span<const PlacementCountersRow> rows) override {
    if (fail_next_save) {
      fail_next_save = false;
      return UnavailableError("postgresql is away");
    }
    for (PlacementCountersRow row : rows) {
      row.node_id = node_;
      table_.Put(row);
    }
    return OkStatus();
  }
  Result<std::vector<PlacementCountersRow>> LoadOwn() override {
    std::vector<PlacementCountersRow> out;
    for (const auto& [key, row] : table_.rows) {
      if (row.node_id == node_) out.push_back(row);
    }
    return out;
  }
  Result<std::vector<PlacementCountersRow>> LoadOthersAfter(int64_t after_seq,
                                                            size_t limit) override {
    std::vector<PlacementCountersRow> out;
    for (const auto& [key, row] : table_.rows) {
      if (row.node_id != node_ && row.seq > after_seq) out.push_back(row);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
    if (out.size() > limit) out.resize(limit);
    return out;
  }
  bool fail_next_save = false;

 private:
  Table& table_;
  std::string node_;
};

// What the feed holds, per pair: {impressions, events}.
std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> Fed(PlacementFeed& feed) {
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> out;
  for (const PlacementDelta& d : feed.Take()) {
    auto& [impressions, events] = out[{d.key.campaign_id, d.key.publisher_id}];
    impressions += d.impressions;
    events += d.events;
  }
  return out;
}

using Fed_ = std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>>;

TEST(ClusterPlacementsTest, WhatOneNodeCountsIsFedToTheOtherOnce) {
  Table table;
  NodeView a_store(table, "a"), b_store(table, "b");
  ClusterPlacements a(a_store, 100), b(b_store, 100);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  PlacementFeed a_feed(100), b_feed(100);

  a.Note({7, 1}, 200, 0);
  a.Note({7, 1}, 0, 9);
  a.Note({7, 2}, 300, 0);
  ASSERT_TRUE(a.Sync(a_feed).ok());
  EXPECT_TRUE(Fed(a_feed).empty()) << "a node's own counts are not fed back to it";
  ASSERT_TRUE(b.Sync(b_feed).ok());
  EXPECT_EQ(Fed(b_feed), (Fed_{{{7, 1}, {200, 9}}, {{7, 2}, {300, 0}}}));

  // Read again (every sync reads from the one before's mark): nothing is fed twice.
  ASSERT_TRUE(b.Sync(b_feed).ok());
  ASSERT_TRUE(b.Sync(b_feed).ok());
  EXPECT_TRUE(Fed(b_feed).empty());

  // More, and a conversion taken back by a reorg: only the gains reach b.
  a.Note({7, 1}, 50, 2);
  a.Note({7, 1}, 0, -1);
  ASSERT_TRUE(a.Sync(a_feed).ok());
  ASSERT_TRUE(b.Sync(b_feed).ok());
  EXPECT_EQ(Fed(b_feed), (Fed_{{{7, 1}, {50, 1}}}));
  EXPECT_EQ(table.rows.at({"a", 7, 1, 0}).impressions, 250);
  EXPECT_EQ(table.rows.at({"a", 7, 1, 0}).events, 10);
}

TEST(ClusterPlacementsTest, RowsPresentAtStartAreNotFedAgain) {
  // The start-up's seeding from the hour rollups counted them already.
  Table table;
  table.Put(
      {.node_id = "a", .campaign_id = 7, .publisher_id = 1, .impressions = 1000, .events = 40});
  NodeView b_store(table, "b");
  ClusterPlacements b(b_store, 100);
  ASSERT_TRUE(b.Start().ok());
  PlacementFeed feed(100);
  ASSERT_TRUE(b.Sync(feed).ok());
  EXPECT_TRUE(Fed(feed).empty());
  table.Put(
      {.node_id = "a", .campaign_id = 7, .publisher_id = 1, .impressions = 1100, .events = 45});
  ASSERT_TRUE(b.Sync(feed).ok());
  EXPECT_EQ(Fed(feed), (Fed_{{{7, 1}, {100, 5}}}));
}

TEST(ClusterPlacementsTest, AWriteThatCommitsAfterALaterSeqIsStillRead) {
  Table table;
  NodeView b_store(table, "b");
  ClusterPlacements b(b_store, 100);
  ASSERT_TRUE(b.Start().ok());
  PlacementFeed feed(100);
  table.next_seq = 10;
  table.Put({.node_id = "c", .campaign_id = 8, .publisher_id = 1, .impressions = 10});  // seq 10
  ASSERT_TRUE(b.Sync(feed).ok());
  EXPECT_EQ(Fed(feed), (Fed_{{{8, 1}, {10, 0}}}));
  // Node a drew seq 9 before c drew 10, and commits only now.
  table.Put({.node_id = "a", .campaign_id = 7, .publisher_id = 1, .impressions = 5, .events = 1},
            /*seq=*/9);
  ASSERT_TRUE(b.Sync(feed).ok());
  EXPECT_EQ(Fed(feed), (Fed_{{{7, 1}, {5, 1}}}));
}

TEST(ClusterPlacementsTest, ARestartedNodeContinuesItsCountsAndAFailedSaveIsRetried) {
  Table table;
  NodeView a_store(table, "a"), b_store(table, "b");
  {
    ClusterPlacements a(a_store, 100);
    ASSERT_TRUE(a.Start().ok());
    PlacementFeed feed(100);
    a.Note({7, 1}, 100, 4);
    ASSERT_TRUE(a.Sync(feed).ok());
  }
  ClusterPlacements b(b_store, 100);
  ASSERT_TRUE(b.Start().ok());
  PlacementFeed b_feed(100);

  ClusterPlacements a(a_store, 100);  // restarted
  ASSERT_TRUE(a.Start().ok());
  PlacementFeed a_feed(100);
  a.Note({7, 1}, 10, 1);
  a_store.fail_next_save = true;
  EXPECT_FALSE(a.Sync(a_feed).ok());
  ASSERT_TRUE(b.Sync(b_feed).ok());
  EXPECT_TRUE(Fed(b_feed).empty()) << "nothing saved yet";
  ASSERT_TRUE(a.Sync(a_feed).ok());  // saved now
  EXPECT_EQ(table.rows.at({"a", 7, 1, 0}).impressions, 110);
  EXPECT_EQ(table.rows.at({"a", 7, 1, 0}).events, 5);
  ASSERT_TRUE(b.Sync(b_feed).ok());
  EXPECT_EQ(Fed(b_feed), (Fed_{{{7, 1}, {10, 1}}}));
}

TEST(ClusterPlacementsTest, PairsBeyondTheBoundsAreCountedNotKept) {
  Table table;
  NodeView a_store(table, "a"), b_store(table, "b");
  ClusterPlacements a(a_store, 2), b(b_store, 1);  // b follows at most 4 x 1 rows
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  PlacementFeed feed(100);
  for (int64_t publisher = 1; publisher <= 5; ++publisher) a.Note({7, publisher}, 10, 0);
  EXPECT_EQ(a.own_pairs(), 2u);
  EXPECT_EQ(a.dropped(), 3);
  for (int64_t publisher = 1; publisher <= 6; ++publisher) {
    table.Put({.node_id = "c", .campaign_id = 9, .publisher_id = publisher, .impressions = 1});
  }
  ASSERT_TRUE(a.Sync(feed).ok());
  ASSERT_TRUE(b.Sync(feed).ok());
  EXPECT_EQ(b.followed_rows(), 4u);
  EXPECT_EQ(b.dropped(), 4);  // the 2 + 6 rows of a and c, 4 followed
  // Another sync reads the same rows again; the dropped ones are counted again, nothing more
  // is kept.
  EXPECT_EQ(b.followed_rows(), 4u);
}

// Per placement within a publisher (issue 36 item 5): a unit's counts are rows of their own,
// fed to the other node under the same unit; adUnitIds beyond half the pairs are shared under
// their publisher, so a client inventing ids cannot take the rows publishers need.
TEST(ClusterPlacementsTest, AdUnitsAreRowsOfTheirOwnAndAtMostHalfThePairs) {
  Table table;
  NodeView a_store(table, "a"), b_store(table, "b");
  ClusterPlacements a(a_store, 8), b(b_store, 8);
  ASSERT_TRUE(a.Start().ok());
  ASSERT_TRUE(b.Start().ok());
  PlacementFeed a_feed(100), b_feed(100);
  const uint64_t hero = decision::AdUnitKey("hero");
  a.Note({7, 1, hero}, 40, 2);
  a.Note({7, 1}, 10, 0);  // requests without an adUnitId
  ASSERT_TRUE(a.Sync(a_feed).ok());
  EXPECT_EQ(table.rows.at({"a", 7, 1, hero}).impressions, 40);
  EXPECT_EQ(table.rows.at({"a", 7, 1, 0}).impressions, 10);
  ASSERT_TRUE(b.Sync(b_feed).ok());
  std::map<uint64_t, std::pair<int64_t, int64_t>> by_unit;
  for (const PlacementDelta& d : b_feed.Take()) by_unit[d.key.unit] = {d.impressions, d.events};
  EXPECT_EQ(by_unit,
            (std::map<uint64_t, std::pair<int64_t, int64_t>>{{0, {10, 0}}, {hero, {40, 2}}}));
  // Ten more adUnitIds: three more get rows (4 of 8 pairs are units), the rest count for the
  // publisher.
  for (int u = 0; u < 10; ++u) a.Note({7, 1, decision::AdUnitKey("u" + std::to_string(u))}, 1, 0);
  ASSERT_TRUE(a.Sync(a_feed).ok());
  size_t unit_rows = 0;
  for (const auto& [key, row] : table.rows) unit_rows += row.ad_unit != 0;
  EXPECT_EQ(unit_rows, 4u);
  EXPECT_EQ(table.rows.at({"a", 7, 1, 0}).impressions, 10 + 7);
  EXPECT_EQ(a.dropped(), 0);
}

}  // namespace
}  // namespace adserver::cluster
