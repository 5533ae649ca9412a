#include "http/message.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace adserver::http {
namespace {

TEST(MessageTest, ErrorBodyHasSpecShapeWithEmptyDetails) {
  nlohmann::json body = nlohmann::json::parse(ErrorBody("Not found"));
  EXPECT_EQ(body, nlohmann::json::parse(R"({"error":"Not found","details":[]})"));
}

TEST(MessageTest, ErrorBodyEscapesMessageAndDetails) {
  std::string text = ErrorBody("bad \"x\"\n", {{"a\\b", "ctl\x01"}});
  EXPECT_EQ(text, R"({"error":"bad \"x\"\n","details":[{"field":"a\\b","message":"ctl\u0001"}]})");
  nlohmann::json body = nlohmann::json::parse(text);
  EXPECT_EQ(body["error"], "bad \"x\"\n");
  EXPECT_EQ(body["details"][0]["field"], "a\\b");
}

TEST(MessageTest, ErrorResponseSetsJsonAndNoStore) {
  Response response = ErrorResponse(413, "Request body too large", {{"body", "too big"}});
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(response.header_lines(),
            "Content-Type: application/json\r\nCache-Control: no-store\r\n");
  nlohmann::json body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["details"][0]["field"], "body");
}

TEST(MessageTest, ResponseHeadersKeepOrderRepeatsAndEmptyValues) {
  Response response;
  EXPECT_FALSE(response.HasHeader("Set-Cookie"));
  EXPECT_EQ(response.Header("Set-Cookie"), "");
  response.SetHeader("Set-Cookie", "a=1");
  response.SetHeader("X-Empty", "");
  response.SetHeader("set-cookie", "b=2: with colon");
  EXPECT_EQ(response.header_lines(),
            "Set-Cookie: a=1\r\nX-Empty: \r\nset-cookie: b=2: with colon\r\n");
  EXPECT_EQ(response.Header("SET-COOKIE"), "a=1");  // the first one
  EXPECT_TRUE(response.HasHeader("x-empty"));
  EXPECT_EQ(response.Header("X-Empty"), "");
  std::vector<Header> headers = response.Headers();
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0].name, "Set-Cookie");
  EXPECT_EQ(headers[0].value, "a=1");
  EXPECT_EQ(headers[1].name, "X-Empty");
  EXPECT_EQ(headers[1].value, "");
  EXPECT_EQ(headers[2].name, "set-cookie");
  EXPECT_EQ(headers[2].value, "b=2: with colon");
}

TEST(MessageTest, ResponseIgnoresFramingHeaders) {
  Response response;
  response.SetHeader("Content-Length", "999");
  response.SetHeader("transfer-encoding", "chunked");
  response.SetHeader("CONNECTION", "close");
  response.SetHeader("Vary", "Origin");
  EXPECT_EQ(response.header_lines(), "Vary: Origin\r\n");
}

TEST(MessageTest, ToHttpStatusMapsEveryCode) {
  EXPECT_EQ(ToHttpStatus(OkStatus()), 200);
  EXPECT_EQ(ToHttpStatus(InvalidArgumentError("x")), 400);
  EXPECT_EQ(ToHttpStatus(NotFoundError("x")), 404);
  EXPECT_EQ(ToHttpStatus(ConflictError("x")), 409);
  EXPECT_EQ(ToHttpStatus(UnavailableError("x")), 503);
  EXPECT_EQ(ToHttpStatus(DeadlineExceededError("x")), 504);
  EXPECT_EQ(ToHttpStatus(InternalError("x")), 500);
}

TEST(MessageTest, ErrorResponseFromStatusCarriesFieldErrors) {
  Response response = ErrorResponse(InvalidFieldError("walletAddresses", "too many"));
  EXPECT_EQ(response.status, 400);
  nlohmann::json body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["error"], "too many");
  EXPECT_EQ(body["details"][0]["field"], "walletAddresses");
  EXPECT_EQ(body["details"][0]["message"], "too many");
}

TEST(MessageTest, RequestHeaderLookupIsCaseInsensitive) {
  Request request;
  request.headers = {
      {"Content-Type", "application/json"}, {"X-Api-Key", "k1"}, {"x-api-key", "k2"}};
  EXPECT_EQ(request.Header("content-type"), "application/json");
  EXPECT_EQ(request.Header("X-API-KEY"), "k1");
  EXPECT_TRUE(request.HasHeader("x-Api-key"));
  EXPECT_FALSE(request.HasHeader("Cookie"));
  EXPECT_EQ(request.Header("Cookie"), "");
}

TEST(MessageTest, ParamLookupByName) {
  Request request;
  request.params = {{"id", "42"}, {"keyId", "k"}};
  EXPECT_EQ(request.Param("id"), "42");
  EXPECT_EQ(request.Param("keyId"), "k");
  EXPECT_EQ(request.Param("ID"), "");
}

TEST(MessageTest, MethodNames) {
  EXPECT_EQ(MethodName(Method::kGet), "GET");
  EXPECT_EQ(MethodName(Method::kOptions), "OPTIONS");
  EXPECT_EQ(MethodName(Method::kOther), "OTHER");
}

}  // namespace
}  // namespace adserver::http
