#include "admin/scope.h"

#include <gtest/gtest.h>

namespace adserver::admin {
namespace {

using store::ReviewStatus;
using store::Role;

Principal Publisher(store::Id id) {
  return Principal{.role = Role::kPublisher, .user_id = 10, .publisher_id = id};
}
Principal Advertiser(store::Id id) {
  return Principal{.role = Role::kAdvertiser, .user_id = 20, .community_id = id};
}

TEST(ScopeTest, AudienceAdmitsOperatorsEverywhereAndRolesToTheirRoutes) {
  const Principal op = Principal::OperatorToken();
  for (Audience a :
       {Audience::kOperator, Audience::kPublisher, Audience::kAdvertiser, Audience::kAnyUser}) {
    EXPECT_TRUE(InAudience(op, a));
  }
  EXPECT_FALSE(InAudience(Publisher(1), Audience::kOperator));
  EXPECT_TRUE(InAudience(Publisher(1), Audience::kPublisher));
  EXPECT_FALSE(InAudience(Publisher(1), Audience::kAdvertiser));
  EXPECT_TRUE(InAudience(Publisher(1), Audience::kAnyUser));
  EXPECT_FALSE(InAudience(Advertiser(1), Audience::kOperator));
  EXPECT_FALSE(InAudience(Advertiser(1), Audience::kPublisher));
  EXPECT_TRUE(InAudience(Advertiser(1), Audience::kAdvertiser));
}

TEST(ScopeTest, OutsideTheAudienceWritesAre403AndReadsOfOneAre404) {
  EXPECT_EQ(CheckAudience(Publisher(1), Audience::kAdvertiser, false).code(),
            Code::kPermissionDenied);
  EXPECT_EQ(CheckAudience(Publisher(1), Audience::kAdvertiser, true).code(), Code::kNotFound);
  EXPECT_TRUE(CheckAudience(Advertiser(1), Audience::kAdvertiser, false).ok());
}

TEST(ScopeTest, TenantChecksHideOtherTenants) {
  EXPECT_TRUE(CheckPublisher(Publisher(1), 1, "publisher 1").ok());
  EXPECT_EQ(CheckPublisher(Publisher(1), 2, "publisher 2").code(), Code::kNotFound);
  EXPECT_EQ(CheckPublisher(Advertiser(1), 1, "publisher 1").code(), Code::kNotFound);
  EXPECT_TRUE(CheckPublisher(Principal::OperatorToken(), 2, "publisher 2").ok());
  EXPECT_TRUE(CheckCommunity(Advertiser(3), 3, "community 3").ok());
  EXPECT_EQ(CheckCommunity(Advertiser(3), 4, "community 4").code(), Code::kNotFound);
  EXPECT_EQ(CheckCommunity(Publisher(3), 3, "community 3").code(), Code::kNotFound);
}

TEST(ScopeTest, ScopeOfEachRole) {
  EXPECT_EQ(ScopeOf(Principal::OperatorToken()), TenantScope{});
  EXPECT_EQ(ScopeOf(Publisher(5)), (TenantScope{.publisher_id = 5, .community_id = {}}));
  EXPECT_EQ(ScopeOf(Advertiser(6)), (TenantScope{.publisher_id = {}, .community_id = 6}));
}

TEST(ScopeTest, ForUserKeepsOnlyTheRolesTenant) {
  store::UserRecord user{.id = 7, .role = Role::kAdvertiser, .publisher_id = 1, .community_id = 2};
  Principal p = Principal::ForUser(user, /*via_session=*/true);
  EXPECT_EQ(p.user_id, 7);
  EXPECT_EQ(p.community_id, 2);
  EXPECT_FALSE(p.publisher_id.has_value());
  EXPECT_TRUE(p.via_session);
}

TEST(ScopeTest, AdvertiserWritesArePendingOperatorWritesApproved) {
  const Principal op = Principal::OperatorToken();
  const AdWrite create{.creating = true};
  const AdWrite edit{.writes_creative = true};
  EXPECT_EQ(ReviewAfterWrite(Advertiser(1), create, ReviewStatus::kApproved),
            ReviewStatus::kPending);
  EXPECT_EQ(ReviewAfterWrite(Advertiser(1), edit, ReviewStatus::kApproved), ReviewStatus::kPending);
  // An advertiser's requested status is refused before this; it never applies.
  EXPECT_EQ(ReviewAfterWrite(Advertiser(1),
                             {.writes_creative = true, .requested = ReviewStatus::kApproved},
                             ReviewStatus::kPending),
            ReviewStatus::kPending);
  EXPECT_EQ(ReviewAfterWrite(op, create, ReviewStatus::kApproved), ReviewStatus::kApproved);
  EXPECT_EQ(ReviewAfterWrite(op, edit, ReviewStatus::kPending), ReviewStatus::kApproved);
  EXPECT_EQ(ReviewAfterWrite(op, {.requested = ReviewStatus::kRejected}, ReviewStatus::kPending),
            ReviewStatus::kRejected);
}

// Issue 39: pausing, weights and arms leave the review alone, so an operator pausing an ad
// never approves the edit that waits for review, and an advertiser pausing stays approved.
TEST(ScopeTest, WritesThatLeaveTheCreativeAloneKeepTheReview) {
  for (ReviewStatus current :
       {ReviewStatus::kApproved, ReviewStatus::kPending, ReviewStatus::kRejected}) {
    EXPECT_EQ(ReviewAfterWrite(Principal::OperatorToken(), {}, current), current);
    EXPECT_EQ(ReviewAfterWrite(Advertiser(1), {}, current), current);
  }
}

TEST(ScopeTest, UsersManageThemselvesOperatorsEveryone) {
  EXPECT_TRUE(CanManageUser(Publisher(1), 10));
  EXPECT_FALSE(CanManageUser(Publisher(1), 11));
  EXPECT_TRUE(CanManageUser(Principal::OperatorToken(), 11));
  EXPECT_FALSE(CanManageUser(Principal{.role = Role::kPublisher, .user_id = 0}, 0));
}

}  // namespace
}  // namespace adserver::admin
