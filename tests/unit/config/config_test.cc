#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "support/temp_dir.h"

namespace adserver::config {
namespace {

// The fields a failed validation names.
std::string FieldsOf(const Status& s) {
  std::string fields;
  for (const auto& d : s.details()) fields += d.field + ";";
  return fields;
}

std::string WriteFile(const testing::TempDir& dir, const std::string& text) {
  std::string path = dir.File("c.toml");
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTest, DefaultsAreValid) {
  Result<Config> c = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(Validate(*c).ok());
  EXPECT_TRUE(c->admin.token.empty());
}

TEST(ConfigTest, ExampleFileLoadsAndIsValid) {
  Result<Config> c = LoadConfig(std::string(ADSERVER_EXAMPLE_CONFIG), {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(Validate(*c).ok()) << Validate(*c).ToString();
  EXPECT_EQ(c->http.listen, "127.0.0.1:8080");
  // The file lists the defaults (issue 39: admin bodies 1 MiB, bulk imports 64 MiB).
  EXPECT_EQ(c->admin.max_body_bytes, admin::AdminOptions{}.max_body_bytes);
  EXPECT_EQ(c->admin.max_import_body_bytes, admin::AdminOptions{}.max_import_body_bytes);
}

TEST(ConfigTest, EnvironmentOverridesFile) {
  testing::TempDir dir;
  std::string path = WriteFile(dir, "data_dir = \"/from/file\"\n[http]\nlisten = \"1.2.3.4:1\"\n");
  Result<Config> c = LoadConfig(
      path, {{"ADSERVER_DATA", "/from/env"}, {"ADSERVER_ADMIN_TOKEN", "0123456789abcdef"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->data_dir, "/from/env");
  EXPECT_EQ(c->http.listen, "1.2.3.4:1");
  EXPECT_EQ(c->admin.token, "0123456789abcdef");
}

TEST(ConfigTest, UnknownKeysAndWrongTypesNameTheKey) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(WriteFile(dir, "colour = 1\n[http]\nio_threads = \"two\"\n"), {});
  ASSERT_FALSE(c.ok());
  std::vector<std::string> fields;
  for (const auto& d : c.status().details()) fields.push_back(d.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"colour", "http.io_threads"}));
}

// Found by the config fuzzer under UBSan: a float where an integer belongs (one beyond int64's
// range included) is a named error, not a conversion.
TEST(ConfigTest, FloatsWhereIntegersBelongNameTheKey) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(
      WriteFile(dir, "[http]\nio_threads = 2.0\n[indexer]\nrpc = \"http://127.0.0.1:8545\"\n"
                     "from_block = 1900000111111111111111111111.0\n"
                     "[traffic]\nclick_limits = [[60.0, 1]]\n"),
      {});
  ASSERT_FALSE(c.ok());
  std::vector<std::string> fields;
  for (const auto& d : c.status().details()) fields.push_back(d.field);
  EXPECT_THAT(fields, ::testing::IsSupersetOf({"http.io_threads", "indexer.from_block"}));
}

TEST(ConfigTest, WalletTableIsOnByDefaultAndCanBeTurnedOff) {
  Result<Config> defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->snapshots.wallet_table);
  testing::TempDir dir;
  Result<Config> off = LoadConfig(WriteFile(dir, "[snapshots]\nwallet_table = false\n"), {});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->snapshots.wallet_table);
  Result<Config> bad = LoadConfig(WriteFile(dir, "[snapshots]\nwallet_table = \"no\"\n"), {});
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.status().details().size(), 1u);
  EXPECT_EQ(bad.status().details()[0].field, "snapshots.wallet_table");
  EXPECT_TRUE(defaults->snapshots.wallet_table_in_memory);
  Result<Config> mapped =
      LoadConfig(WriteFile(dir, "[snapshots]\nwallet_table_in_memory = false\n"), {});
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_FALSE(mapped->snapshots.wallet_table_in_memory);
  Result<Config> bad_memory =
      LoadConfig(WriteFile(dir, "[snapshots]\nwallet_table_in_memory = 1\n"), {});
  ASSERT_FALSE(bad_memory.ok());
  EXPECT_EQ(bad_memory.status().details()[0].field, "snapshots.wallet_table_in_memory");
}

TEST(ConfigTest, SyntaxErrorIsInvalidArgument) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(WriteFile(dir, "[http\n"), {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
}

TEST(ConfigTest, ValidateNamesBadFields) {
  Config c;
  c.http.io_threads = -1;
  c.admin.token = "short";
  c.snapshots.poll_interval = std::chrono::milliseconds(5000);
  Status s = Validate(c);
  ASSERT_FALSE(s.ok());
  std::vector<std::string> fields;
  for (const auto& d : s.details()) fields.push_back(d.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"http.io_threads", "snapshots.poll_interval_ms",
                                              "admin.token"}));
}

TEST(ConfigTest, OverloadSettingsAreReadAndChecked) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->http.shed_after, std::chrono::microseconds(0));  // off unless configured
  EXPECT_EQ(c->http.max_worker_queue, 1024);
  EXPECT_EQ(c->http.max_connections_per_ip, 1000);

  c = LoadConfig(WriteFile(dir, "[http]\nshed_after_us = 500\nmax_worker_queue = 64\n"
                                "max_connections_per_ip = 0\n"),
                 {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->http.shed_after, std::chrono::microseconds(500));
  EXPECT_EQ(c->http.max_worker_queue, 64);
  EXPECT_EQ(c->http.max_connections_per_ip, 0);
  EXPECT_TRUE(Validate(*c).ok());

  c->http.shed_after = std::chrono::microseconds(-1);
  c->http.max_worker_queue = 0;
  c->http.max_connections_per_ip = -1;
  Status s = Validate(*c);
  std::vector<std::string> fields;
  for (const auto& d : s.details()) fields.push_back(d.field);
  EXPECT_THAT(fields, ::testing::IsSupersetOf({"http.shed_after_us", "http.max_worker_queue",
                                               "http.max_connections_per_ip"}));
}

TEST(ConfigTest, TokenFileIsRead) {
  testing::TempDir dir;
  std::string path = dir.File("token");
  std::ofstream(path) << "file-token-0123456789\n";
  Result<Config> c = LoadConfig(std::nullopt, {{"ADSERVER_ADMIN_TOKEN_FILE", path}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->admin.token, "file-token-0123456789");
}

TEST(ConfigTest, IdentitySectionAndKeyRingSources) {
  testing::TempDir dir;
  std::string ring = "2:" + std::string(64, 'b') + "\n1:" + std::string(64, 'a') + "\n";
  std::string keys = dir.File("keys");
  std::ofstream(keys) << ring;
  Result<Config> c =
      LoadConfig(WriteFile(dir, "[identity]\ncookie_name = \"sid\"\nretention_seconds = 60\n"),
                 {{"ADSERVER_IDENTITY_KEYS_FILE", keys}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->identity.cookie_name, "sid");
  EXPECT_EQ(c->identity.retention_seconds, 60);
  EXPECT_EQ(c->identity.keys, ring);
  EXPECT_EQ(c->identity.cookie_max_age_seconds, 395 * 86400);
  c = LoadConfig(std::nullopt, {{"ADSERVER_IDENTITY_KEYS", "1:ab"}});
  EXPECT_EQ(c->identity.keys, "1:ab");  // parsed (and rejected) when the server starts
  Config bad;
  bad.identity.cookie_name = "bad name;";
  bad.identity.cookie_max_age_seconds = 395 * 86400 + 1;
  Status st = Validate(bad);
  ASSERT_FALSE(st.ok());
  std::vector<std::string> fields;
  for (const FieldError& e : st.details()) fields.push_back(e.field);
  EXPECT_THAT(fields, ::testing::Contains("identity.cookie_name"));
  EXPECT_THAT(fields, ::testing::Contains("identity.cookie_max_age_seconds"));
  c = LoadConfig(WriteFile(dir, "[identity]\ncolour = 1\n"), {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().details()[0].field, "identity.colour");
}

TEST(ConfigTest, IdentityTokenBoundsAndTheLocalIdLimitThatMustAcceptThem) {
  testing::TempDir dir;
  Result<Config> c =
      LoadConfig(WriteFile(dir, "[identity]\nmax_wallets = 10\ncookie_refresh_seconds = 0\n"), {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->identity.max_wallets, 10u);
  EXPECT_EQ(c->identity.cookie_refresh_seconds, 0);
  EXPECT_GE(Config().serve.max_local_id_bytes,
            identity::MaxTokenChars(identity::kMaxWalletsPerIdentity))
      << "the defaults accept every localId the server issues";
  Config bad;
  bad.identity.max_wallets = 51;
  bad.identity.cookie_refresh_seconds = -1;
  bad.serve.max_local_id_bytes = 128;  // the pre-token default
  Status st = Validate(bad);
  ASSERT_FALSE(st.ok());
  std::vector<std::string> fields;
  for (const FieldError& e : st.details()) fields.push_back(e.field);
  EXPECT_THAT(fields, ::testing::Contains("identity.max_wallets"));
  EXPECT_THAT(fields, ::testing::Contains("identity.cookie_refresh_seconds"));
  EXPECT_THAT(fields, ::testing::Contains("serve.max_local_id_bytes"));
  Config small;
  small.identity.max_wallets = 2;
  small.serve.max_local_id_bytes = identity::MaxTokenChars(2);
  EXPECT_TRUE(Validate(small).ok()) << Validate(small).message();
}


TEST(TrafficConfigTest, DefaultsAreTheIssuesThresholds) {
  Result<Config> c = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(c.ok());
  const events::TrafficOptions& t = c->traffic;
  EXPECT_TRUE(t.require_user_agent);
  EXPECT_TRUE(t.block_crawlers);
  EXPECT_EQ(t.min_click_delay_ms, 1000);
  EXPECT_TRUE(t.require_same_user_agent);
  EXPECT_TRUE(t.check_click_origin);
  EXPECT_EQ(t.click_limits, (std::vector<events::RateWindow>{
                                {60, 1}, {600, 3}, {3600, 10}, {86400, 25}}));
  EXPECT_TRUE(t.trusted_proxies.empty());
  EXPECT_TRUE(t.ip_blocklists.empty());
}

TEST(TrafficConfigTest, EveryThresholdIsASetting) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(
      WriteFile(dir,
                "[http]\ntrusted_proxies = [\"10.0.0.0/8\", \"2001:db8::/32\"]\n"
                "[traffic]\nrequire_user_agent = false\nblock_crawlers = false\n"
                "ip_blocklists = [\"/etc/tor.txt\"]\nblocklist_check_seconds = 2\n"
                "min_click_delay_ms = 500\nrequire_same_user_agent = false\n"
                "check_click_origin = false\n"
                "click_limits = [[60, 2], [3600, 20]]\nevent_limits = []\n"
                "rate_table_entries = 1024\n"),
      {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(Validate(*c).ok()) << Validate(*c).ToString();
  const events::TrafficOptions& t = c->traffic;
  EXPECT_EQ(t.trusted_proxies, (std::vector<std::string>{"10.0.0.0/8", "2001:db8::/32"}));
  EXPECT_FALSE(t.require_user_agent);
  EXPECT_FALSE(t.block_crawlers);
  EXPECT_EQ(t.ip_blocklists, (std::vector<std::string>{"/etc/tor.txt"}));
  EXPECT_EQ(t.blocklist_check_seconds, 2);
  EXPECT_EQ(t.min_click_delay_ms, 500);
  EXPECT_FALSE(t.require_same_user_agent);
  EXPECT_FALSE(t.check_click_origin);
  EXPECT_EQ(t.click_limits, (std::vector<events::RateWindow>{{60, 2}, {3600, 20}}));
  EXPECT_TRUE(t.event_limits.empty());
  EXPECT_EQ(t.rate_table_entries, 1024u);
}

TEST(TrafficConfigTest, BadValuesNameTheirKey) {
  testing::TempDir dir;
  Result<Config> types = LoadConfig(
      WriteFile(dir, "[http]\ntrusted_proxies = \"10.0.0.0/8\"\n[traffic]\nclick_limits = "
                     "[[60]]\nip_blocklists = [1]\nblock_crawlers = 1\ncolour = 1\n"),
      {});
  ASSERT_FALSE(types.ok());
  std::vector<std::string> fields;
  for (const auto& d : types.status().details()) fields.push_back(d.field);
  EXPECT_THAT(fields, ::testing::UnorderedElementsAre(
                          "http.trusted_proxies", "traffic.click_limits", "traffic.ip_blocklists",
                          "traffic.block_crawlers", "traffic.colour"));
  Result<Config> ranges = LoadConfig(
      WriteFile(dir, "[http]\ntrusted_proxies = [\"proxy.example\"]\n[traffic]\n"
                     "click_limits = [[0, 1]]\nevent_limits = [[1, 1], [2, 1], [3, 1], [4, 1], "
                     "[5, 1]]\nmin_click_delay_ms = -1\nblocklist_check_seconds = 0\n"),
      {});
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  Status invalid = Validate(*ranges);
  ASSERT_FALSE(invalid.ok());
  fields.clear();
  for (const auto& d : invalid.details()) fields.push_back(d.field);
  EXPECT_THAT(fields, ::testing::UnorderedElementsAre(
                          "http.trusted_proxies", "traffic.click_limits", "traffic.event_limits",
                          "traffic.min_click_delay_ms", "traffic.blocklist_check_seconds"));
}

}  // namespace
TEST(ConfigTest, DecisionSectionTurnsExplorationOffAndSetsPriors) {
  Result<Config> defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->decision.explore);
  EXPECT_FALSE(defaults->decision.peer_priors);
  EXPECT_EQ(decision::CtrPriorWeight(defaults->decision), decision::kExploreCtrPriorWeight);
  testing::TempDir dir;
  Result<Config> c = LoadConfig(WriteFile(dir,
                                          "[decision]\nexplore = false\n"
                                          "ctr_prior_weight = 200\nhalf_life_impressions = 0\n"
                                          "conversion_delay_days = 2.5\npeer_priors = true\n"
                                          "half_life_events = 0\nchange_threshold = 0\n"
                                          "placement_prior_events = 0\n"
                                          "placement_pairs = 100000\n"
                                          "placement_ad_units = false\n"),
                                {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->decision.explore);
  EXPECT_TRUE(c->decision.peer_priors);
  EXPECT_EQ(c->decision.half_life_events, 0);
  EXPECT_EQ(defaults->decision.half_life_events, 50);
  EXPECT_EQ(c->decision.change_threshold, 0);
  EXPECT_EQ(defaults->decision.change_threshold, 15);
  EXPECT_EQ(c->decision.placement_prior_events, 0);
  EXPECT_EQ(defaults->decision.placement_prior_events, 3);
  EXPECT_EQ(c->live.placement_pairs, 100000u);
  EXPECT_EQ(defaults->live.placement_pairs, 65536u);
  EXPECT_FALSE(c->decision.placement_ad_units);
  EXPECT_TRUE(defaults->decision.placement_ad_units);
  EXPECT_EQ(c->decision.half_life_impressions, 0);
  EXPECT_EQ(c->decision.conversion_delay_days, 2.5);
  EXPECT_EQ(decision::CtrPriorWeight(c->decision), 200);
  // Greedy without a set weight: the weight of the rule before exploration.
  EXPECT_EQ(decision::CvrPriorWeight(c->decision), decision::kGreedyCvrPriorWeight);
  EXPECT_TRUE(Validate(*c).ok());

  Result<Config> types =
      LoadConfig(WriteFile(dir,
                           "[decision]\nexplore = 1\nhalf_life = 3\npeer_priors = \"yes\"\n"
                           "placement_ad_units = 0\n"),
                 {});
  ASSERT_FALSE(types.ok());
  EXPECT_EQ(FieldsOf(types.status()),
            "decision.half_life;decision.explore;decision.peer_priors;"
            "decision.placement_ad_units;");
  Result<Config> ranges = LoadConfig(WriteFile(dir,
                                               "[decision]\nctr_prior_weight = 0.5\n"
                                               "cvr_prior_weight = -3\n"
                                               "half_life_impressions = 5\n"
                                               "half_life_events = -2\n"
                                               "change_threshold = 1\n"
                                               "placement_prior_events = 0.1\n"
                                               "placement_pairs = 8\n"
                                               "conversion_delay_days = -1\n"),
                                     {});
  ASSERT_TRUE(ranges.ok()) << ranges.status().ToString();
  EXPECT_EQ(FieldsOf(Validate(*ranges)),
            "decision.half_life_impressions;decision.half_life_events;"
            "decision.change_threshold;decision.placement_prior_events;"
            "decision.placement_pairs;decision.conversion_delay_days;"
            "decision.ctr_prior_weight;decision.cvr_prior_weight;");
}

// Issue 38 item 2: the network's currency, an ISO 4217 code (USD unless set).
TEST(ConfigTest, TheNetworkCurrencyIsAnIso4217Code) {
  Result<Config> defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->admin.currency, "USD");
  testing::TempDir dir;
  Result<Config> eur = LoadConfig(WriteFile(dir, "[network]\ncurrency = \"EUR\"\n"), {});
  ASSERT_TRUE(eur.ok()) << eur.status().ToString();
  EXPECT_EQ(eur->admin.currency, "EUR");
  EXPECT_TRUE(Validate(*eur).ok());
  for (const char* bad : {"usd", "EURO", "", "U$D"}) {
    Result<Config> c =
        LoadConfig(WriteFile(dir, std::string("[network]\ncurrency = \"") + bad + "\"\n"), {});
    ASSERT_TRUE(c.ok()) << bad;
    EXPECT_EQ(FieldsOf(Validate(*c)), "network.currency;") << bad;
  }
  Result<Config> unknown = LoadConfig(WriteFile(dir, "[network]\nmoney = \"EUR\"\n"), {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(FieldsOf(unknown.status()), "network.money;");
}

// Issue 38: the chains the console names, with their explorers: the defaults, renamed,
// changed, removed (explorer = "") or added by [[network.chains]]; every mistake named.
TEST(ConfigTest, NetworkChainsMergeIntoTheDefaultsById) {
  Result<Config> defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  ASSERT_EQ(defaults->admin.chains.size(), admin::DefaultChains().size());
  EXPECT_EQ(defaults->admin.chains[0].name, "Ethereum");
  EXPECT_EQ(defaults->admin.chains[0].explorer, "https://etherscan.io");
  testing::TempDir dir;
  Result<Config> merged = LoadConfig(WriteFile(dir, R"(
[[network.chains]]
id = 1
name = "Ethereum mainnet"
explorer = "https://eth.blockscout.com"
[[network.chains]]
id = 8453
name = "Base"
explorer = ""
[[network.chains]]
id = 31337
name = "Local anvil"
explorer = "http://127.0.0.1:5100/explorer"
)"),
                                     {});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  const std::vector<admin::ChainInfo>& chains = merged->admin.chains;
  ASSERT_EQ(chains.size(), admin::DefaultChains().size() + 1);
  EXPECT_EQ(chains[0].name, "Ethereum mainnet");
  EXPECT_EQ(chains[0].explorer, "https://eth.blockscout.com");
  auto base =
      std::find_if(chains.begin(), chains.end(), [](const auto& c) { return c.id == 8453; });
  ASSERT_NE(base, chains.end());
  EXPECT_EQ(base->explorer, "");
  EXPECT_EQ(chains.back().id, 31337);
  EXPECT_EQ(chains.back().name, "Local anvil");

  Result<Config> bad = LoadConfig(WriteFile(dir, R"(
[[network.chains]]
id = 0
name = ""
explorer = "https://etherscan.io/"
[[network.chains]]
id = 10
name = "Optimism"
explorer = "ftp://example.com"
[[network.chains]]
id = 10
name = "OP"
colour = "red"
)"),
                                  {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(FieldsOf(bad.status()),
            "network.chains[0].id;network.chains[0].name;network.chains[0].explorer;"
            "network.chains[1].explorer;network.chains[2].colour;network.chains[2].id;");
  Result<Config> not_tables = LoadConfig(WriteFile(dir, "[network]\nchains = [1, 2]\n"), {});
  ASSERT_FALSE(not_tables.ok());
  EXPECT_EQ(FieldsOf(not_tables.status()), "network.chains[0];network.chains[1];");
}

// Issue 41 item 3: what the one-shot subcommands take from the environment before their flags.
TEST(ConfigTest, CommandDefaultsComeFromTheEnvironmentAndEmptyMeansUnset) {
  CommandDefaults none = CommandDefaultsFrom({});
  EXPECT_EQ(none.data_dir, "./data");
  EXPECT_FALSE(none.cluster.enabled());
  EXPECT_EQ(none.cluster.redis_key_prefix, "adserver:");
  CommandDefaults set = CommandDefaultsFrom({{"ADSERVER_DATA", "/var/lib/adserver"},
                                             {"ADSERVER_DATABASE_URL", "postgresql://db/ads"},
                                             {"ADSERVER_REDIS_URL", "redis://cache:6379"},
                                             {"ADSERVER_REDIS_KEY_PREFIX", "staging:"},
                                             {"ADSERVER_IDENTITY_KEYS_FILE", "/missing/file"}});
  EXPECT_EQ(set.data_dir, "/var/lib/adserver");
  EXPECT_TRUE(set.cluster.enabled());
  EXPECT_EQ(set.cluster.redis_key_prefix, "staging:");
  CommandDefaults empty =
      CommandDefaultsFrom({{"ADSERVER_DATA", ""}, {"ADSERVER_REDIS_KEY_PREFIX", ""}});
  EXPECT_EQ(empty.data_dir, "./data");
  EXPECT_EQ(empty.cluster.redis_key_prefix, "adserver:");
}

TEST(ConfigTest, ClusterModeNeedsBothUrlsAndNamesTheMissingOne) {
  Result<Config> both = LoadConfig(std::nullopt, {{"ADSERVER_DATABASE_URL", "postgresql://db/ads"},
                                                  {"ADSERVER_REDIS_URL", "redis://cache:6379"}});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->cluster.enabled());
  EXPECT_TRUE(Validate(*both).ok());
  Result<Config> neither = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(neither.ok());
  EXPECT_FALSE(neither->cluster.enabled());
  Result<Config> db_only = LoadConfig(std::nullopt, {{"ADSERVER_DATABASE_URL", "postgresql://db/ads"}});
  ASSERT_TRUE(db_only.ok());
  Status s = Validate(*db_only);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(FieldsOf(s).find("cluster.redis_url"), std::string::npos) << FieldsOf(s);
  Result<Config> redis_only = LoadConfig(std::nullopt, {{"ADSERVER_REDIS_URL", "redis://cache"}});
  ASSERT_TRUE(redis_only.ok());
  s = Validate(*redis_only);
  EXPECT_NE(FieldsOf(s).find("cluster.database_url"), std::string::npos) << FieldsOf(s);
}

TEST(ConfigTest, ClusterSectionIsReadAndChecked) {
  testing::TempDir dir;
  std::string path =
      WriteFile(dir,
                "[cluster]\ndatabase_url = \"mysql://x\"\nredis_url = \"redis://r\"\n"
                "node_id = \"n1\"\nlease_slice_share = 0.02\ncaps_sync_ms = 5\n"
                "dead_node_seconds = 1\n");
  Result<Config> c = LoadConfig(path, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->cluster.node_id, "n1");
  EXPECT_DOUBLE_EQ(c->cluster.lease_slice_share, 0.02);
  Status s = Validate(*c);
  EXPECT_NE(FieldsOf(s).find("cluster.database_url"), std::string::npos) << FieldsOf(s);
  EXPECT_NE(FieldsOf(s).find("cluster.caps_sync_ms"), std::string::npos) << FieldsOf(s);
  EXPECT_NE(FieldsOf(s).find("cluster.dead_node_seconds"), std::string::npos) << FieldsOf(s);
  EXPECT_EQ(FieldsOf(s).find("cluster.node_id"), std::string::npos) << FieldsOf(s);
  Result<Config> defaults = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->cluster.dead_node_seconds, 30);
  // The CLI's shared counters row is no node's name.
  Result<Config> cli = LoadConfig(std::nullopt, {{"ADSERVER_NODE_ID", "(cli)"}});
  ASSERT_TRUE(cli.ok()) << cli.status().message();
  EXPECT_NE(FieldsOf(Validate(*cli)).find("cluster.node_id"), std::string::npos);
}

}  // namespace adserver::config
