#include "admin/detail/json_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace adserver::admin::detail {
namespace {

// Issue 39 item 1: one error per field, the first 100 listed and the rest counted, so neither
// the time nor the answer grows with the square of a hostile body.
TEST(FieldErrorsTest, ListsTheFirstHundredAndCountsTheRest) {
  FieldErrors errors;
  for (int i = 0; i < 1000; ++i) {
    errors.Add("targeting.projects[" + std::to_string(i) + "]", "unknown project");
    errors.Add("targeting.projects[" + std::to_string(i) + "]", "a second error of the field");
  }
  EXPECT_EQ(errors.count(), 1000u);
  Status status = errors.ToStatus();
  ASSERT_EQ(status.details().size(), FieldErrors::kMaxListed + 1);
  EXPECT_EQ(status.details()[0].field, "targeting.projects[0]");
  EXPECT_EQ(status.details()[0].message, "unknown project");
  EXPECT_EQ(status.details().back().field, "body");
  EXPECT_EQ(status.details().back().message, "900 more errors not listed");
  EXPECT_NE(status.message().find("(and 999 more)"), std::string::npos) << status.message();
}

TEST(FieldErrorsTest, FewErrorsAreListedWhole) {
  FieldErrors errors;
  errors.Add("name", "is required");
  errors.Add("name", "too long");
  errors.Add("pricing", "is required");
  Status status = errors.ToStatus();
  ASSERT_EQ(status.details().size(), 2u);
  EXPECT_EQ(status.details()[0].message, "is required");
  EXPECT_EQ(status.details()[1].field, "pricing");
}

TEST(FieldErrorsTest, AddAllSkipsWhatAFieldWithAnErrorContains) {
  FieldErrors errors;
  errors.Add("pricing", "is required");
  errors.Add("targeting.projects[1]", "unknown project");
  errors.AddAll(Status(Code::kInvalidArgument, "x",
                       {{"pricing.bid", "must be greater than 0"},
                        {"pricingModel", "a field of its own"},
                        {"targeting.projects[1].x", "inside an indexed error"},
                        {"targeting.projects[2]", "another index"}}));
  Status status = errors.ToStatus();
  std::vector<std::string> fields;
  for (const FieldError& e : status.details()) fields.push_back(e.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"pricing", "targeting.projects[1]", "pricingModel",
                                              "targeting.projects[2]"}));
}

}  // namespace
}  // namespace adserver::admin::detail
