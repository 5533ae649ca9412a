// Google Benchmark micro-benchmarks of the serving path (issue 6): request parsing and
// validation, key lookup, wallet index lookup, Decide() on a 10k-campaign catalog, and the
// whole handler including response serialization; identity tokens (issue 20): opening and
// sealing a cookie, and the consented request's identity step. Catalogs are built in memory from
// the dataset of bench/dataset.h (ADSERVER_BENCH_WALLETS wallets, default 1M; 10k campaigns).

#include <benchmark/benchmark.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/clock.h"
#include "common/crypto.h"
#include "common/published.h"
#include "dataset.h"
#include "decision/engine.h"
#include "ingest/catalog_builder.h"
#include "serve/ad_handler.h"
#include "serve/ad_render.h"
#include "serve/ad_request.h"
#include "serve/identity_binding.h"

// Heap allocations made by this thread, reported per iteration as the "allocs" counter.
thread_local int64_t g_allocations = 0;

// Not inlined: GCC takes an inlined free() of operator new's memory for a mismatch.
[[gnu::noinline]] void* operator new(size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace adserver::bench {
namespace {

const std::string kLiveKey = "spk_" + std::string(30, 'B');
constexpr int kRequests = 1024;  // distinct requests cycled through per benchmark

struct World {
  DatasetOptions options;
  std::shared_ptr<const decision::Catalog> catalog;
  std::shared_ptr<const decision::ActivityIndex> activity;
};

const World& GetWorld() {
  static const World world = [] {
    ADS_CHECK(InitCrypto());
    World w;
    if (const char* n = std::getenv("ADSERVER_BENCH_WALLETS")) w.options.wallets = std::atoll(n);
    // Rendered as the server renders its catalogs (serve/ad_render.h).
    auto catalog = ingest::BuildCatalog(MakeCatalogData(w.options, kLiveKey),
                                        {.render_ad = serve::RenderAd});
    ADS_CHECK(catalog.ok()) << catalog.status().message();
    w.catalog = *catalog;
    w.activity = std::make_shared<const decision::ActivityIndex>(MakeActivityIndex(w.options));
    return w;
  }();
  return world;
}

// Wallet lists: request r has `n` wallets, known (in the dataset) or not.
std::vector<std::vector<Address>> WalletSets(int n, bool known) {
  const World& w = GetWorld();
  std::vector<std::vector<Address>> sets(kRequests);
  uint64_t x = 12345;
  for (auto& set : sets) {
    for (int j = 0; j < n; ++j) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      int64_t i = static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(w.options.wallets));
      set.push_back(WalletAt(w.options, known ? i : w.options.wallets + i));
    }
  }
  return sets;
}

std::string Body(const std::vector<Address>& wallets, ImageFormat format) {
  std::string body = "{\"walletAddresses\":[";
  for (size_t i = 0; i < wallets.size(); ++i) {
    if (i > 0) body += ',';
    body += '"' + FormatAddress(wallets[i]) + '"';
  }
  body += "],\"imageFormat\":\"";
  body += ImageFormatName(format);
  body += "\",\"adUnitId\":\"slot-1\"}";
  return body;
}

ImageFormat FormatOf(int r, bool earlier) {
  return static_cast<ImageFormat>(r % (earlier ? kImageFormatsWithImage : kImageFormatCount));
}

void ReportAllocations(benchmark::State& state, int64_t before) {
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(g_allocations - before) / state.iterations());
}

void BM_ParseAdRequest(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  std::vector<std::string> bodies;
  int r = 0;
  for (const auto& set : WalletSets(n, true)) bodies.push_back(Body(set, FormatOf(r++, false)));
  serve::ServeOptions options;
  size_t i = 0;
  int64_t allocations = g_allocations;
  for (auto _ : state) {
    auto parsed = serve::ParseAdRequest(bodies[i++ % bodies.size()], serve::Variant::kCurrent,
                                        options);
    benchmark::DoNotOptimize(parsed);
  }
  ReportAllocations(state, allocations);
}
BENCHMARK(BM_ParseAdRequest)->Arg(1)->Arg(3)->Arg(50);

// One wallet of a request body: "0x" + 40 hex digits, lower, upper and mixed case.
void BM_ParseAddress(benchmark::State& state) {
  std::vector<std::string> texts;
  int r = 0;
  for (const auto& set : WalletSets(1, true)) {
    std::string text = FormatAddress(set[0]);
    for (size_t c = 2; c < text.size(); ++c) {
      if (r % 3 == 1 || (r % 3 == 2 && c % 2 == 0)) {
        text[c] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[c])));
      }
    }
    texts.push_back(std::move(text));
    ++r;
  }
  size_t i = 0;
  for (auto _ : state) {
    auto address = ParseAddress(texts[i++ % texts.size()]);
    benchmark::DoNotOptimize(address);
  }
}
BENCHMARK(BM_ParseAddress);

// SHA-256 of an x-api-key (34 bytes), as every ad request computes it.
void BM_Sha256(benchmark::State& state) {
  ADS_CHECK(InitCrypto());
  for (auto _ : state) {
    Sha256Digest digest = Sha256(kLiveKey);
    benchmark::DoNotOptimize(digest);
  }
}
BENCHMARK(BM_Sha256);

// The key path of every request: SHA-256 of the x-api-key, then the catalog's hash lookup.
void BM_KeyLookup(benchmark::State& state) {
  const World& w = GetWorld();
  for (auto _ : state) {
    const decision::ApiKey* key = w.catalog->FindKey(Sha256(kLiveKey));
    benchmark::DoNotOptimize(key);
  }
}
BENCHMARK(BM_KeyLookup);

void BM_WalletLookup(benchmark::State& state) {
  const World& w = GetWorld();
  auto sets = WalletSets(1, state.range(0) != 0);
  size_t i = 0;
  for (auto _ : state) {
    auto interactions = w.activity->Lookup(sets[i++ % sets.size()][0]);
    benchmark::DoNotOptimize(interactions);
  }
}
BENCHMARK(BM_WalletLookup)->ArgName("known")->Arg(1)->Arg(0);

void BM_Decide(benchmark::State& state) {
  const World& w = GetWorld();
  auto sets = WalletSets(static_cast<int>(state.range(0)), state.range(1) != 0);
  decision::Rng rng(7);
  size_t i = 0;
  int64_t filled = 0;
  for (auto _ : state) {
    size_t r = i++ % sets.size();
    decision::DecisionRequest request{.wallets = sets[r],
                                      .format = FormatOf(static_cast<int>(r), false),
                                      .publisher = &w.catalog->publishers[0],
                                      .now_seconds = w.options.now + 3600};
    auto decision = decision::Decide(request, *w.catalog, *w.activity, rng);
    filled += decision.has_value();
    benchmark::DoNotOptimize(decision);
  }
  state.counters["fill"] = benchmark::Counter(static_cast<double>(filled) / state.iterations());
}
BENCHMARK(BM_Decide)
    ->ArgNames({"wallets", "known"})
    ->Args({1, 1})->Args({3, 1})->Args({50, 1})
    ->Args({1, 0})->Args({3, 0})->Args({50, 0});

// Response serialization alone: the JSON body of a filled answer (AdResponseBody), for
// decisions taken beforehand on known wallets, all formats, both variants.
void BM_SerializeAd(benchmark::State& state) {
  const World& w = GetWorld();
  bool earlier = state.range(0) != 0;
  auto variant = earlier ? serve::Variant::kEarlier : serve::Variant::kCurrent;
  serve::ServeOptions options;
  decision::Rng rng(7);
  std::vector<std::pair<serve::AdRequest, decision::Decision>> answers;
  int r = 0;
  for (const auto& set : WalletSets(3, true)) {
    ImageFormat format = FormatOf(r++, earlier);
    auto parsed = serve::ParseAdRequest(Body(set, format), variant, options);
    if (!parsed.ok()) continue;
    decision::DecisionRequest request{.wallets = set,
                                      .format = format,
                                      .earlier_variant = earlier,
                                      .publisher = &w.catalog->publishers[0],
                                      .now_seconds = w.options.now + 3600};
    auto decision = decision::Decide(request, *w.catalog, *w.activity, rng);
    if (decision) answers.emplace_back(std::move(*parsed), *decision);
  }
  if (answers.empty()) {
    state.SkipWithError("no decision filled");
    return;
  }
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const auto& [request, decision] = answers[i++ % answers.size()];
    std::string body = serve::AdResponseBody(request, decision);
    bytes += body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["body_bytes"] = benchmark::Counter(static_cast<double>(bytes) / state.iterations());
}
BENCHMARK(BM_SerializeAd)->ArgName("earlier")->Arg(0)->Arg(1);

// AdHandler::HandleWith end to end: key, headers, parse, decide, response JSON.
void BM_HandleWith(benchmark::State& state) {
  const World& w = GetWorld();
  bool earlier = state.range(2) != 0;
  auto sets = WalletSets(static_cast<int>(state.range(0)), state.range(1) != 0);
  std::vector<std::string> bodies;
  for (size_t r = 0; r < sets.size(); ++r)
    bodies.push_back(Body(sets[r], FormatOf(static_cast<int>(r), earlier)));
  Published<decision::Catalog> catalogs;
  Published<decision::ActivityIndex> activity;
  FakeClock clock;
  serve::AdHandler handler(catalogs, activity, clock, serve::ServeOptions{});
  http::Request request;
  request.method = http::Method::kPost;
  request.target = request.path = earlier ? "/api/ads" : "/v1/ads";
  request.headers = {{"Host", "127.0.0.1"},
                     {"Content-Type", "application/json"},
                     {"x-api-key", kLiveKey},
                     {"Origin", "https://pub.example"}};
  decision::Rng rng(7);
  auto variant = earlier ? serve::Variant::kEarlier : serve::Variant::kCurrent;
  size_t i = 0, bytes = 0;
  int64_t ok = 0;
  int64_t allocations = g_allocations;
  for (auto _ : state) {
    request.body = bodies[i++ % bodies.size()];
    http::Response response = handler.HandleWith(request, variant, w.catalog.get(),
                                                  w.activity.get(), w.options.now + 3600, rng);
    ok += response.status == 200;
    bytes += response.body.size();
    benchmark::DoNotOptimize(response);
  }
  state.counters["fill"] = benchmark::Counter(static_cast<double>(ok) / state.iterations());
  state.counters["body_bytes"] = benchmark::Counter(static_cast<double>(bytes) / state.iterations());
  ReportAllocations(state, allocations);
}
BENCHMARK(BM_HandleWith)
    ->ArgNames({"wallets", "known", "earlier"})
    ->Args({1, 1, 0})->Args({3, 1, 0})->Args({50, 1, 0})
    ->Args({3, 0, 0})->Args({3, 1, 1});

// Identity tokens (issue 20). One service for all: a fixed key, no store, no erasures.
identity::IdentityService& Identity() {
  static FakeClock clock;
  static std::unique_ptr<identity::IdentityService> service = [] {
    identity::IdentityOptions options;
    options.keys = "1:" + std::string(64, 'c');
    return std::move(*identity::IdentityService::Create(nullptr, clock, options));
  }();
  return *service;
}

identity::IdentityToken TokenOf(int wallets, int64_t now) {
  identity::IdentityToken token;
  token.id = identity::IdentityService::NewId();
  std::vector<Address> seen;
  for (int i = 0; i < wallets; ++i) {
    Address a;
    a.bytes.fill(static_cast<uint8_t>(i + 1));
    seen.push_back(a);
  }
  identity::MergeWallets(token.wallets, seen, now, identity::kMaxWalletsPerIdentity);
  return token;
}

// Opening a cookie value (base64url decode, XChaCha20-Poly1305, retention and erasure checks).
void BM_OpenCookie(benchmark::State& state) {
  const int64_t now = 1'767'225'600;
  identity::IdentityToken token = TokenOf(static_cast<int>(state.range(0)), now);
  std::string value = Identity().Seal(identity::TokenKind::kCookie, token, now);
  int64_t allocations = g_allocations;
  for (auto _ : state) {
    auto opened = Identity().Open(identity::TokenKind::kCookie, value, now);
    benchmark::DoNotOptimize(opened);
  }
  state.counters["value_chars"] = static_cast<double>(value.size());
  ReportAllocations(state, allocations);
}
BENCHMARK(BM_OpenCookie)->ArgName("wallets")->Arg(1)->Arg(50);

void BM_SealCookie(benchmark::State& state) {
  const int64_t now = 1'767'225'600;
  identity::IdentityToken token = TokenOf(static_cast<int>(state.range(0)), now);
  for (auto _ : state) {
    std::string value = Identity().Seal(identity::TokenKind::kCookie, token, now);
    benchmark::DoNotOptimize(value);
  }
}
BENCHMARK(BM_SealCookie)->ArgName("wallets")->Arg(1)->Arg(50);

// serve::ResolveIdentity for a consented /v1/ads request: a returning browser (its cookie and
// its wallet, nothing to re-seal) or a cookieless one (a new identity sealed into two cookies).
void BM_ResolveConsentedIdentity(benchmark::State& state) {
  const int64_t now = 1'767'225'600;
  bool with_cookie = state.range(0) != 0;
  identity::IdentityToken token = TokenOf(1, now);
  std::string value = Identity().Seal(identity::TokenKind::kCookie, token, now);
  http::Request http_request;
  if (with_cookie) {
    http_request.headers = {{"Cookie", "adserver_id=" + value + "; adserver_id_p=" + value}};
  }
  serve::AdRequest request;
  request.variant = serve::Variant::kCurrent;
  request.cookie_consent = true;
  int64_t allocations = g_allocations;
  size_t set_cookies = 0;
  for (auto _ : state) {
    request.wallets = {token.wallets[0].wallet};
    serve::IdentityOutcome out =
        serve::ResolveIdentity(&Identity(), http_request, request, false, now + 60);
    set_cookies += out.set_cookies.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["set_cookies"] =
      benchmark::Counter(static_cast<double>(set_cookies) / state.iterations());
  ReportAllocations(state, allocations);
}
BENCHMARK(BM_ResolveConsentedIdentity)->ArgName("cookie")->Arg(1)->Arg(0);

}  // namespace
}  // namespace adserver::bench

BENCHMARK_MAIN();
