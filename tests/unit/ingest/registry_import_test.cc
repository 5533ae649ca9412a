#include "ingest/registry_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "store/sqlite/sqlite_store.h"
#include "support/temp_dir.h"

namespace adserver::ingest {
namespace {

constexpr int64_t kNow = 1'767'225'600;

constexpr char kTokenList[] = R"({"name":"t","tokens":[
  {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USD Coin","symbol":"USDC",
   "decimals":6,"logoURI":"https://example.org/usdc.png"},
  {"chainId":8453,"address":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","name":"USD Coin","symbol":"USDC",
   "decimals":6,"logoURI":"ipfs://not-https"},
  {"chainId":501000101,"address":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","name":"Solana USDC"},
  {"chainId":1,"address":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","name":"USDC dup"},
  {"address":"0x0000000000000000000000000000000000000001","name":"No chain"}]})";

constexpr char kContractMap[] = R"({
  "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48": {"name":"USDC","logo":"usdc.svg","erc20":true},
  "0x06012c8cf97BEaD5deAe237070F9587f8E7A266d": {"name":"CryptoKitties","logo":"ck.svg","erc721":true}})";

constexpr char kAddressBook[] = R"({"projects":[{"slug":"uniswap","name":"Uniswap","category":"dex",
  "contracts":[{"chainId":1,"address":"0x1F98431c8aD98523631AE4a59f267346ea31F984"},
               {"chainId":10,"address":"0x1F98431c8aD98523631AE4a59f267346ea31F984"}]}]})";

class RegistryImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::SqliteStore::Open(dir_.File("ads.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }
  RegistryImportSummary Import(std::string_view json) {
    auto summary = ImportProjectList(json, *store_, kNow);
    EXPECT_TRUE(summary.ok()) << summary.status().ToString();
    return summary.ok() ? *summary : RegistryImportSummary{};
  }
  std::vector<store::ProjectRecord> Projects() { return *store_->ListProjects(); }

  testing::TempDir dir_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST_F(RegistryImportTest, TokenListMergesChainsByNameAndReportsSkips) {
  RegistryImportSummary s = Import(kTokenList);
  EXPECT_EQ(s.format, ProjectListFormat::kTokenList);
  EXPECT_EQ(s.entries, 5u);
  EXPECT_EQ(s.added, 1u);
  EXPECT_EQ(s.contracts_added, 2u);
  EXPECT_EQ(s.skipped["not an EVM address (non-EVM chain or malformed)"], 1u);
  EXPECT_EQ(s.skipped["duplicate entry in the list"], 1u);
  EXPECT_EQ(s.skipped["missing or invalid chainId"], 1u);
  auto projects = Projects();
  ASSERT_EQ(projects.size(), 1u);
  EXPECT_EQ(projects[0].slug, "usd-coin");
  EXPECT_EQ(projects[0].category, "token");
  EXPECT_EQ(projects[0].contracts.size(), 2u);
  EXPECT_EQ(projects[0].logo_url, "https://example.org/usdc.png");
}

TEST_F(RegistryImportTest, ReimportChangesNothing) {
  Import(kTokenList);
  RegistryImportSummary again = Import(kTokenList);
  EXPECT_EQ(again.added, 0u);
  EXPECT_EQ(again.merged, 0u);
  EXPECT_EQ(again.contracts_added, 0u);
  EXPECT_EQ(again.skipped["already in the registry"], 2u);
  EXPECT_EQ(Projects().size(), 1u);
}

TEST_F(RegistryImportTest, ContractMapJoinsTheProjectOwningTheContract) {
  Import(kTokenList);
  RegistryImportSummary s = Import(kContractMap);
  EXPECT_EQ(s.format, ProjectListFormat::kContractMap);
  EXPECT_EQ(s.added, 1u);  // CryptoKitties; USDC already belongs to usd-coin
  EXPECT_EQ(s.unchanged, 1u);
  auto kitties = store_->GetProjectBySlug("cryptokitties");
  ASSERT_TRUE(kitties.ok());
  EXPECT_EQ(kitties->category, "nft");
  EXPECT_EQ(kitties->logo_url,
            "https://raw.githubusercontent.com/MetaMask/contract-metadata/master/images/ck.svg");
}

TEST_F(RegistryImportTest, AddressBookMergesIntoExistingSlug) {
  store::ProjectRecord uni;
  uni.slug = "uniswap";
  uni.name = "Uniswap";
  uni.contracts = {{1, *ParseAddress("0x1f9840a85d5aF5bf1D1762F925BDADdC4201F984")}};
  ASSERT_TRUE(store_->CreateProject(uni, kNow).ok());
  RegistryImportSummary s = Import(kAddressBook);
  EXPECT_EQ(s.format, ProjectListFormat::kAddressBook);
  EXPECT_EQ(s.added, 0u);
  EXPECT_EQ(s.merged, 1u);
  EXPECT_EQ(store_->GetProjectBySlug("uniswap")->contracts.size(), 3u);
}

TEST_F(RegistryImportTest, ContractOfAnotherProjectIsSkippedNotMoved) {
  Import(kTokenList);
  RegistryImportSummary s = Import(R"({"projects":[{"slug":"other","name":"Other","contracts":[
      {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"}]}]})");
  // The candidate joins usd-coin (owner of its only contract): nothing new.
  EXPECT_EQ(s.unchanged, 1u);
  EXPECT_FALSE(store_->GetProjectBySlug("other").ok());
}

TEST_F(RegistryImportTest, RejectsUnknownDocuments) {
  EXPECT_EQ(ImportProjectList("[1,2]", *store_, kNow).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ImportProjectList(R"({"foo":1})", *store_, kNow).status().code(),
            Code::kInvalidArgument);
}

TEST(SlugFromNameTest, KeepsLowerCaseAlphanumericsAndSingleDashes) {
  EXPECT_EQ(SlugFromName("USD Coin (PoS)"), "usd-coin-pos");
  EXPECT_EQ(SlugFromName("  --  "), "");
  EXPECT_EQ(SlugFromName(std::string(100, 'a')).size(), 64u);
}

// The real lists scripts/install-deps.sh installs from npm (tools/registry/out).
TEST_F(RegistryImportTest, InstalledRealListsGiveOverAThousandProjects) {
  std::filesystem::path dir(ADSERVER_REGISTRY_DIR);
  if (!std::filesystem::exists(dir / "protocol-address-books.json")) {
    GTEST_SKIP() << "run scripts/install-deps.sh to install the project lists";
  }
  for (const char* name : {"protocol-address-books.json", "metamask-contract-map.json",
                           "aave-tokenlist.json", "optimism-tokenlist.json"}) {
    std::ifstream in(dir / name, std::ios::binary);
    std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Import(json);
  }
  auto projects = Projects();
  EXPECT_GT(projects.size(), 1000u);
  auto uniswap = store_->GetProjectBySlug("uniswap");
  ASSERT_TRUE(uniswap.ok());
  EXPECT_GT(uniswap->contracts.size(), 300u);
  auto aave = store_->GetProjectBySlug("aave");
  ASSERT_TRUE(aave.ok());
  EXPECT_GT(aave->contracts.size(), 1000u);
}

}  // namespace
}  // namespace adserver::ingest
