// The [indexer] section and ADSERVER_INDEXER_* variables (the live indexer inside `serve`).

#include <gtest/gtest.h>

#include <fstream>

#include "config/config.h"
#include "support/temp_dir.h"

namespace adserver::config {
namespace {

std::string WriteFile(const testing::TempDir& dir, const std::string& text) {
  std::string path = dir.File("c.toml");
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> BadFields(const Status& status) {
  std::vector<std::string> fields;
  for (const FieldError& e : status.details()) fields.push_back(e.field);
  return fields;
}

TEST(IndexerConfigTest, OffWithoutSection) {
  Result<Config> c = LoadConfig(std::nullopt, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->indexer.has_value());
}

TEST(IndexerConfigTest, SectionTurnsItOnWithItsValues) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(WriteFile(dir,
                                          "[indexer]\nrpc = \"http://127.0.0.1:8545\"\n"
                                          "chain_id = 10\nconfirmations = 0\n"
                                          "poll_ms = 50\nbatch_blocks = 20\n"
                                          "from_block = 7\n"),
                                {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->indexer.has_value());
  EXPECT_EQ(c->indexer->rpc_url, "http://127.0.0.1:8545");
  EXPECT_EQ(c->indexer->chain_id, 10);
  EXPECT_EQ(c->indexer->confirmations, 0);
  EXPECT_EQ(c->indexer->poll_interval, std::chrono::milliseconds(50));
  EXPECT_EQ(c->indexer->batch_blocks, 20);
  EXPECT_EQ(c->indexer->from_block, 7u);
  EXPECT_TRUE(Validate(*c).ok()) << Validate(*c).ToString();
}

TEST(IndexerConfigTest, EnvironmentTurnsItOnAndOverridesTheFile) {
  testing::TempDir dir;
  Result<Config> c =
      LoadConfig(WriteFile(dir, "[indexer]\nrpc = \"http://a:1\"\nchain_id = 10\n"),
                 {{"ADSERVER_INDEXER_RPC", "http://b:2"}, {"ADSERVER_INDEXER_CONFIRMATIONS", "0"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->indexer->rpc_url, "http://b:2");
  EXPECT_EQ(c->indexer->chain_id, 10);
  EXPECT_EQ(c->indexer->confirmations, 0);

  Result<Config> env_only = LoadConfig(
      std::nullopt, {{"ADSERVER_INDEXER_RPC", "http://b:2"}, {"ADSERVER_INDEXER_CHAIN_ID", "137"}});
  ASSERT_TRUE(env_only.ok());
  EXPECT_EQ(env_only->indexer->chain_id, 137);
  EXPECT_TRUE(Validate(*env_only).ok());
}

TEST(IndexerConfigTest, BadEnvironmentValuesNameTheVariable) {
  Result<Config> c = LoadConfig(std::nullopt, {{"ADSERVER_INDEXER_RPC", "http://b:2"},
                                               {"ADSERVER_INDEXER_CHAIN_ID", "mainnet"}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(BadFields(c.status()), std::vector<std::string>{"ADSERVER_INDEXER_CHAIN_ID"});
  Result<Config> no_rpc = LoadConfig(std::nullopt, {{"ADSERVER_INDEXER_CONFIRMATIONS", "3"}});
  ASSERT_FALSE(no_rpc.ok());
  EXPECT_EQ(BadFields(no_rpc.status()), std::vector<std::string>{"ADSERVER_INDEXER_CONFIRMATIONS"});
}

TEST(IndexerConfigTest, ValidationNamesEachBadField) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(WriteFile(dir,
                                          "[indexer]\nrpc = \"https://node\"\nchain_id = 0\n"
                                          "confirmations = -1\npoll_ms = 0\n"
                                          "batch_blocks = 0\n"),
                                {});
  ASSERT_TRUE(c.ok());
  Status st = Validate(*c);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(BadFields(st),
            (std::vector<std::string>{"indexer.rpc", "indexer.chain_id", "indexer.confirmations",
                                      "indexer.poll_ms", "indexer.batch_blocks"}));
}

TEST(IndexerConfigTest, SectionWithoutRpcIsAnError) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(WriteFile(dir, "[indexer]\nchain_id = 1\n"), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(BadFields(Validate(*c)), std::vector<std::string>{"indexer.rpc"});
}

TEST(IndexerConfigTest, UnknownKeysAndWrongTypesNameTheKey) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(
      WriteFile(dir, "[indexer]\nrpc = \"http://a:1\"\nconfirmation = 1\nchain_id = \"one\"\n"),
      {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(BadFields(c.status()),
            (std::vector<std::string>{"indexer.confirmation", "indexer.chain_id"}));
}

}  // namespace
}  // namespace adserver::config
