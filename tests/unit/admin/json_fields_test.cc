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

TEST(FieldErrorsTest, UnknownKeysBeyondTheListedOnesAreCountedNotNamed) {
  Json body = Json::object();
  for (int i = 0; i < 5000; ++i) body["k" + std::to_string(i)] = i;
  body["id"] = 7;  // read-only, echoed from a GET: ignored
  FieldErrors errors;
  ObjectReader reader(body, "", errors);
  reader.RejectUnknown();
  EXPECT_EQ(errors.count(), 5000u);
  Status status = errors.ToStatus();
  ASSERT_EQ(status.details().size(), FieldErrors::kMaxListed + 1);
  EXPECT_EQ(status.details().back().message, "4900 more errors not listed");
}

// Nesting is checked before the tree is built (a 1 MiB body of '[' took 120 ms to parse and
// free); strings may hold brackets and escaped quotes.
TEST(ParseJsonObjectTest, RefusesDeepNestingBeforeParsing) {
  std::string deep = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_EQ(ParseJsonObject("{\"a\":" + deep + "}").status().details().at(0).field, "body");
  std::string fits = std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']');
  EXPECT_TRUE(ParseJsonObject("{\"a\":" + fits + "}").ok());
  Result<Json> brackets = ParseJsonObject(R"({"a":"[[[[\"[[[[","b":[]})");
  ASSERT_TRUE(brackets.ok()) << brackets.status().ToString();
  EXPECT_EQ((*brackets)["a"], "[[[[\"[[[[");
  EXPECT_EQ(ParseJsonObject("[1]").status().message(), "request body must be a JSON object");
  EXPECT_EQ(ParseJsonObject("{").status().message(), "request body is not valid JSON");
}

}  // namespace
}  // namespace adserver::admin::detail
