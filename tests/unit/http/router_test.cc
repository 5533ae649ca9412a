#include "http/router.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "http/detail/gzip.h"

namespace adserver::http {
namespace {

Handler Returns(int status) {
  return [status](const Request&) {
    Response response;
    response.status = status;
    return response;
  };
}

Request MakeRequest(Method method, std::string_view path) {
  Request request;
  request.method = method;
  request.target = path;
  request.path = path;
  return request;
}

int Call(const Router::Match& match, const Request& request) {
  return match.handler == nullptr ? -1 : (*match.handler)(request).status;
}

TEST(RouterTest, MatchesLiteralPathAndMethod) {
  Router router;
  router.Add(Method::kPost, "/v1/ads", Returns(201));
  router.Add(Method::kGet, "/v1/ads", Returns(202));
  Request post = MakeRequest(Method::kPost, "/v1/ads");
  EXPECT_EQ(Call(router.Find(post), post), 201);
  Request get = MakeRequest(Method::kGet, "/v1/ads");
  EXPECT_EQ(Call(router.Find(get), get), 202);
}

TEST(RouterTest, CapturesNamedParameters) {
  Router router;
  router.Add(Method::kGet, "/admin/v1/publishers/{id}/keys/{keyId}", Returns(200));
  Request request = MakeRequest(Method::kGet, "/admin/v1/publishers/42/keys/spk_x");
  Router::Match match = router.Find(request);
  ASSERT_NE(match.handler, nullptr);
  EXPECT_EQ(request.Param("id"), "42");
  EXPECT_EQ(request.Param("keyId"), "spk_x");
  ASSERT_EQ(request.params.size(), 2u);
  EXPECT_EQ(request.params[0].first, "id");
}

TEST(RouterTest, EmptySegmentDoesNotMatchCapture) {
  Router router;
  router.Add(Method::kGet, "/a/{id}/b", Returns(200));
  Request request = MakeRequest(Method::kGet, "/a//b");
  EXPECT_EQ(router.Find(request).status, 404);
  EXPECT_TRUE(request.params.empty());
}

TEST(RouterTest, UnknownPathIs404) {
  Router router;
  router.Add(Method::kPost, "/v1/ads", Returns(200));
  Request request = MakeRequest(Method::kPost, "/v1/adz");
  Router::Match match = router.Find(request);
  EXPECT_EQ(match.handler, nullptr);
  EXPECT_EQ(match.status, 404);
  EXPECT_TRUE(match.allow.empty());
}

TEST(RouterTest, WrongMethodIs405WithAllowList) {
  Router router;
  router.Add(Method::kOptions, "/v1/ads", Returns(204));
  router.Add(Method::kPost, "/v1/ads", Returns(200));
  router.Add(Method::kGet, "/v1/other", Returns(200));
  Request request = MakeRequest(Method::kDelete, "/v1/ads");
  Router::Match match = router.Find(request);
  EXPECT_EQ(match.handler, nullptr);
  EXPECT_EQ(match.status, 405);
  EXPECT_EQ(match.allow, "POST, OPTIONS");
}

TEST(RouterTest, UnknownMethodIs405) {
  Router router;
  router.Add(Method::kGet, "/x", Returns(200));
  Request request = MakeRequest(Method::kOther, "/x");
  Router::Match match = router.Find(request);
  EXPECT_EQ(match.status, 405);
  EXPECT_EQ(match.allow, "GET, HEAD");
}

TEST(RouterTest, HeadUsesGetRouteUnlessHeadIsRegistered) {
  Router router;
  router.Add(Method::kGet, "/items/{id}", Returns(200));
  router.Add(Method::kGet, "/both", Returns(200));
  router.Add(Method::kHead, "/both", Returns(299));
  Request head = MakeRequest(Method::kHead, "/items/7");
  EXPECT_EQ(Call(router.Find(head), head), 200);
  EXPECT_EQ(head.Param("id"), "7");
  Request both = MakeRequest(Method::kHead, "/both");
  EXPECT_EQ(Call(router.Find(both), both), 299);
}

TEST(RouterTest, TrailingSlashIsADifferentPath) {
  Router router;
  router.Add(Method::kGet, "/v1/ads", Returns(200));
  router.Add(Method::kGet, "/dir/", Returns(201));
  Request with_slash = MakeRequest(Method::kGet, "/v1/ads/");
  EXPECT_EQ(router.Find(with_slash).status, 404);
  Request without_slash = MakeRequest(Method::kGet, "/dir");
  EXPECT_EQ(router.Find(without_slash).status, 404);
  Request dir = MakeRequest(Method::kGet, "/dir/");
  EXPECT_EQ(Call(router.Find(dir), dir), 201);
}

TEST(RouterTest, WildcardMatchesAnySuffixButNotTheBarePrefix) {
  Router router;
  router.Add(Method::kGet, "/static/*", Returns(200));
  Request deep = MakeRequest(Method::kGet, "/static/css/site.css");
  ASSERT_NE(router.Find(deep).handler, nullptr);
  EXPECT_EQ(deep.Param("*"), "css/site.css");
  Request empty_suffix = MakeRequest(Method::kGet, "/static/");
  EXPECT_NE(router.Find(empty_suffix).handler, nullptr);
  Request bare = MakeRequest(Method::kGet, "/static");
  EXPECT_EQ(router.Find(bare).status, 404);
  Request other = MakeRequest(Method::kGet, "/staticx/a");
  EXPECT_EQ(router.Find(other).status, 404);
}

TEST(RouterTest, RootPath) {
  Router router;
  router.Add(Method::kGet, "/", Returns(200));
  Request root = MakeRequest(Method::kGet, "/");
  EXPECT_NE(router.Find(root).handler, nullptr);
  Request other = MakeRequest(Method::kGet, "/x");
  EXPECT_EQ(router.Find(other).status, 404);
}

TEST(RouterTest, FirstMatchingRouteWinsAndCarriesItsOptions) {
  Router router;
  router.Add(Method::kGet, "/a/literal", Returns(1),
             RouteOptions{.dispatch = Dispatch::kWorker, .max_body_bytes = 10});
  router.Add(Method::kGet, "/a/{name}", Returns(2));
  Request literal = MakeRequest(Method::kGet, "/a/literal");
  Router::Match match = router.Find(literal);
  EXPECT_EQ(Call(match, literal), 1);
  EXPECT_EQ(match.options->dispatch, Dispatch::kWorker);
  EXPECT_EQ(match.options->max_body_bytes, 10u);
  EXPECT_TRUE(literal.params.empty());
  Request captured = MakeRequest(Method::kGet, "/a/other");
  EXPECT_EQ(Call(router.Find(captured), captured), 2);
  EXPECT_EQ(captured.Param("name"), "other");
}

TEST(RouterTest, AnEarlierCaptureRouteBeatsALaterLiteralOfTheSamePath) {
  // Literal paths are looked up directly; the answer must stay the table walk's.
  Router router;
  router.Add(Method::kGet, "/a/{name}", Returns(1));
  router.Add(Method::kGet, "/a/literal", Returns(2));
  router.Add(Method::kPost, "/a/literal", Returns(3));
  router.Add(Method::kGet, "/b/*", Returns(4));
  router.Add(Method::kGet, "/b/c", Returns(5));
  Request get = MakeRequest(Method::kGet, "/a/literal");
  EXPECT_EQ(Call(router.Find(get), get), 1);
  EXPECT_EQ(get.Param("name"), "literal");
  Request post = MakeRequest(Method::kPost, "/a/literal");
  EXPECT_EQ(Call(router.Find(post), post), 3);
  EXPECT_TRUE(post.params.empty());
  Request wild = MakeRequest(Method::kGet, "/b/c");
  EXPECT_EQ(Call(router.Find(wild), wild), 4);
  EXPECT_EQ(wild.Param("*"), "c");
  Request head = MakeRequest(Method::kHead, "/a/literal");  // no HEAD route: the GET one
  EXPECT_EQ(Call(router.Find(head), head), 1);
}

TEST(RouterTest, MatchesPathNotQuery) {
  Router router;
  router.Add(Method::kGet, "/v1/ads", Returns(200));
  Request request = MakeRequest(Method::kGet, "/v1/ads");
  request.target = "/v1/ads?x=/y";
  request.query = "x=/y";
  EXPECT_NE(router.Find(request).handler, nullptr);
}

}  // namespace
}  // namespace adserver::http

namespace adserver::http {
namespace {

std::string Gunzip(std::string_view body) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "";
  std::string out;
  char buffer[16384];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

// Issue 38 item 5: a route with RouteOptions::compress answers gzip to a client that takes it,
// from kCompressAfterBytes on, with Vary; a small answer, a client without gzip (or refusing it
// with q=0) and a route without the option get the body as it is.
TEST(RouterTest, CompressingRoutesGzipLargeAnswersForClientsThatTakeIt) {
  const std::string big(4096, 'x');
  Router router;
  const auto answers = [](std::string body) {
    return [body = std::move(body)](const Request&) {
      Response r;
      r.SetHeader("Content-Type", "application/json");
      r.body = body;
      return r;
    };
  };
  router.Add(Method::kGet, "/big", answers(big), RouteOptions{.compress = true});
  router.Add(Method::kGet, "/small", answers("{}"), RouteOptions{.compress = true});
  router.Add(Method::kGet, "/plain", answers(big));
  const auto get = [&](std::string_view path, std::string_view accept) {
    Request request = MakeRequest(Method::kGet, path);
    if (!accept.empty()) request.headers.push_back({"Accept-Encoding", accept});
    Router::Match match = router.Find(request);
    return (*match.handler)(request);
  };
  Response gz = get("/big", "gzip, deflate, br");
  EXPECT_EQ(gz.Header("Content-Encoding"), "gzip");
  EXPECT_EQ(gz.Header("Vary"), "Accept-Encoding");
  EXPECT_LT(gz.body.size(), 100u);
  EXPECT_EQ(Gunzip(gz.body), big);
  Response identity = get("/big", "");
  EXPECT_FALSE(identity.HasHeader("Content-Encoding"));
  EXPECT_EQ(identity.Header("Vary"), "Accept-Encoding");
  EXPECT_EQ(identity.body, big);
  EXPECT_FALSE(get("/big", "gzip;q=0, identity").HasHeader("Content-Encoding"));
  EXPECT_EQ(get("/big", "*;q=0.5").Header("Content-Encoding"), "gzip");
  EXPECT_FALSE(get("/small", "gzip").HasHeader("Content-Encoding"));
  EXPECT_FALSE(get("/plain", "gzip").HasHeader("Content-Encoding"));
}

TEST(GzipTest, AcceptEncodingFollowsTheCodingsAndTheirWeights) {
  EXPECT_TRUE(detail::AcceptsGzip("gzip"));
  EXPECT_TRUE(detail::AcceptsGzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(detail::AcceptsGzip(" br ,  gzip ; q=1"));
  EXPECT_TRUE(detail::AcceptsGzip("*"));
  EXPECT_FALSE(detail::AcceptsGzip(""));
  EXPECT_FALSE(detail::AcceptsGzip("identity"));
  EXPECT_FALSE(detail::AcceptsGzip("br, deflate"));
  EXPECT_FALSE(detail::AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(detail::AcceptsGzip("gzip; q=0.000"));
  EXPECT_FALSE(detail::AcceptsGzip("xgzip"));
  EXPECT_FALSE(detail::Gzip("", 6).has_value()) << "nothing to gain";
}

}  // namespace
}  // namespace adserver::http
