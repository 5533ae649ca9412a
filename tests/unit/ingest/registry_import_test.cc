#include "ingest/registry_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

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
  RegistryImportSummary Import(std::string_view json, ImportEntries entries = ImportEntries::kAll) {
    auto summary = ImportProjectList(json, *store_, kNow, entries);
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

TEST_F(RegistryImportTest, ChainVariantsJoinTheirTokenWhenTheTickersAgree) {
  Import(R"j({"name":"a","source":"list-a@1.0.0","tokens":[
    {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USD Coin",
     "symbol":"USDC"}]})j");
  RegistryImportSummary s = Import(R"j({"name":"b","source":"list-b@2.0.0","tokens":[
    {"chainId":137,"address":"0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174","name":"USD Coin (PoS)",
     "symbol":"USDC"},
    {"chainId":43114,"address":"0xA7D7079b0FEaD91F3e65f86E8915Cb59c1a4C664",
     "name":"USD Coin (Wormhole)","symbol":"USDC.e"},
    {"chainId":56,"address":"0x0000000000000000000000000000000000000b5c","name":"USD Coin (BSC)",
     "symbol":"FAKE"}]})j");
  EXPECT_EQ(s.merged, 1u);
  EXPECT_EQ(s.added, 1u);  // another ticker: its own project, under its own name
  auto usdc = store_->GetProjectBySlug("usd-coin");
  ASSERT_TRUE(usdc.ok());
  EXPECT_EQ(usdc->contracts.size(), 3u);
  EXPECT_EQ(usdc->symbol, "USDC");
  EXPECT_EQ(usdc->sources, (std::vector<std::string>{"list-a@1.0.0", "list-b@2.0.0"}));
  auto other = store_->GetProjectBySlug("usd-coin-bsc");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->symbol, "FAKE");
}

TEST_F(RegistryImportTest, ReceiptAndLpTokensBecomeContractsOfTheirProtocol) {
  Import(kAddressBook);  // uniswap, category dex
  RegistryImportSummary s = Import(R"j({"name":"t","source":"ledger@1","tokens":[
    {"chainId":1,"address":"0x98C23E9d8f34FEFb1B7BD6a91B7FF122F4e16F5c","name":"Aave Ethereum USDC",
     "symbol":"aEthUSDC"},
    {"chainId":1,"address":"0x72E364F2ABdC788b7E918bc238B21f109Cd634D7",
     "name":"Aave Ethereum Variable Debt USDC","symbol":"variableDebtEthUSDC"},
    {"chainId":1,"address":"0xB4e16d0168e52d35CaCD2c6185b44281Ec28C9Dc","name":"Uniswap V2",
     "symbol":"UNI-V2"},
    {"chainId":1,"address":"0x7Fc66500c84A76Ad7e9c93437bFc5Ac33E2DDaE9","name":"Aave Token",
     "symbol":"AAVE"}]})j");
  EXPECT_EQ(s.added, 1u);   // aave
  EXPECT_EQ(s.merged, 1u);  // uniswap gains its pool
  auto aave = store_->GetProjectBySlug("aave");
  ASSERT_TRUE(aave.ok());
  EXPECT_EQ(aave->name, "Aave");
  EXPECT_EQ(aave->category, "lending");
  EXPECT_EQ(aave->contracts.size(), 3u);  // aToken, debt token and the AAVE token itself
  EXPECT_EQ(aave->symbol, "AAVE");
  EXPECT_EQ(store_->GetProjectBySlug("uniswap")->contracts.size(), 3u);
  EXPECT_EQ(Projects().size(), 2u);
}

TEST_F(RegistryImportTest, AnEntryWithoutAHumanNameOnlyJoinsTheOwnerOfItsContract) {
  Import(kTokenList);
  RegistryImportSummary s = Import(R"j({"name":"tickers","source":"swapkit@2.4.0","tokens":[
    {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USDC",
     "symbol":"USDC"},
    {"chainId":42161,"address":"0xaf88d065e77c8cC2239327C5EDb3A432268e5831","name":"USDC",
     "symbol":"USDC"}]})j");
  EXPECT_EQ(s.added, 0u);
  EXPECT_EQ(s.merged, 0u);
  EXPECT_EQ(s.sources_added, 1u);
  EXPECT_EQ(s.skipped["no human name (no other list names the contract)"], 1u);
  auto usdc = store_->GetProjectBySlug("usd-coin");
  EXPECT_EQ(usdc->contracts.size(), 2u);
  EXPECT_EQ(usdc->sources, std::vector<std::string>{"swapkit@2.4.0"});
  RegistryImportSummary again = Import(R"j({"name":"tickers","source":"swapkit@2.4.0","tokens":[
    {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USDC",
     "symbol":"USDC"}]})j");
  EXPECT_EQ(again.sources_added, 0u);
  EXPECT_EQ(again.unchanged, 1u);
}

// An unnamed entry of an earlier list whose contract a later list names: the two passes give it
// to that project in one import of the set, and a second import of the set changes nothing.
TEST_F(RegistryImportTest, TwoPassesMakeTheSetsImportOrderFreeAndIdempotent) {
  const std::string tickers = R"j({"name":"a","source":"tickers@1","tokens":[
    {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USDC",
     "symbol":"USDC"}]})j";
  const std::string names = R"j({"name":"b","source":"names@1","tokens":[
    {"chainId":1,"address":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","name":"USD Coin",
     "symbol":"USDC"}]})j";
  auto import_set = [&] {
    size_t changes = 0;
    for (ImportEntries pass : {ImportEntries::kNamed, ImportEntries::kUnnamed}) {
      for (const std::string* doc : {&tickers, &names}) {
        RegistryImportSummary s = Import(*doc, pass);
        changes += s.added + s.merged + s.sources_added + s.contracts_added;
      }
    }
    return changes;
  };
  RegistryImportSummary named_only = Import(tickers, ImportEntries::kNamed);
  EXPECT_EQ(named_only.entries, 0u);  // its only entry belongs to the second pass
  EXPECT_GT(import_set(), 0u);
  auto usdc = store_->GetProjectBySlug("usd-coin");
  ASSERT_TRUE(usdc.ok());
  EXPECT_EQ(usdc->sources, (std::vector<std::string>{"names@1", "tickers@1"}));
  EXPECT_EQ(import_set(), 0u);
}

// The real lists scripts/install-deps.sh installs from npm (tools/registry/out), in the order
// of their file names, as `adserver projects import tools/registry/out/*.json` reads them.
TEST_F(RegistryImportTest, InstalledRealListsGiveOneProjectPerRealProject) {
  std::filesystem::path dir(ADSERVER_REGISTRY_DIR);
  if (!std::filesystem::exists(dir / "00-protocol-address-books.json")) {
    // scripts/test.sh sets ADSERVER_REQUIRE_REGISTRY=1: there, missing lists are a failure.
    if (std::getenv("ADSERVER_REQUIRE_REGISTRY") != nullptr) {
      FAIL() << "no project lists in " << dir << " (scripts/install-deps.sh exports them)";
    }
    GTEST_SKIP() << "run scripts/install-deps.sh to install the project lists";
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  auto read = [](const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (ImportEntries pass : {ImportEntries::kNamed, ImportEntries::kUnnamed}) {
    for (const auto& file : files) Import(read(file), pass);
  }
  auto projects = Projects();
  EXPECT_GE(projects.size(), 10'000u);
  for (const store::ProjectRecord& p : projects) {
    EXPECT_FALSE(p.sources.empty()) << p.slug;  // every imported project says where from
  }
  auto usdc = store_->GetProjectBySlug("usd-coin");
  ASSERT_TRUE(usdc.ok());
  std::set<int64_t> chains;
  for (const store::ContractRef& c : usdc->contracts) chains.insert(c.chain_id);
  EXPECT_GE(chains.size(), 10u);  // one project on every chain, not "USD Coin (PoS)" besides
  EXPECT_FALSE(store_->GetProjectBySlug("usd-coin-pos").ok());
  auto uniswap = store_->GetProjectBySlug("uniswap");
  ASSERT_TRUE(uniswap.ok());
  EXPECT_GT(uniswap->contracts.size(), 300u);
  auto aave = store_->GetProjectBySlug("aave");
  ASSERT_TRUE(aave.ok());
  EXPECT_GT(aave->contracts.size(), 1000u);
  // WETH is an asset Aave lists, not Aave's own contract.
  const Address weth = *ParseAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2");
  for (const store::ContractRef& c : aave->contracts) {
    EXPECT_FALSE(c.chain_id == 1 && c.address == weth);
  }
  // Re-importing the largest list (both passes) changes nothing.
  const std::string ledger = read(dir / "20-ledger-tokenlist.json");
  for (ImportEntries pass : {ImportEntries::kNamed, ImportEntries::kUnnamed}) {
    RegistryImportSummary again = Import(ledger, pass);
    EXPECT_EQ(again.added + again.merged + again.sources_added + again.contracts_added, 0u);
  }
  EXPECT_EQ(Projects().size(), projects.size());
}

}  // namespace
}  // namespace adserver::ingest
