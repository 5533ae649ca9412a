// adserver-bench-import-data: writes a BigQuery crypto_ethereum.token_transfers CSV export for
// the bulk import benchmark (bench/import_bench.sh, docs/BENCHMARKS.md "Bulk import"). The
// token addresses are the chain-1 contracts of the registry already imported into --data DIR
// (Zipf popularity), plus a share of tokens the registry does not know; wallets are drawn from
// a pool with a skewed distribution, ~2% of transfers are mints (from = 0x0). Same seed, same
// registry -> same file.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "app/data_dir.h"
#include "common/address.h"
#include "common/status.h"

namespace adserver::bench {
namespace {

struct Flags {
  std::string data_dir;
  std::string out = "-";
  int64_t rows = 5'000'000;
  int64_t wallets = 0;          // 0 = rows / 5
  double unknown_share = 0.25;  // transfers of tokens not in the registry
  uint64_t seed = 7;
};

constexpr char kHex[] = "0123456789abcdef";

void AppendHex(std::string& out, std::mt19937_64& rng, int digits) {
  out += "0x";
  for (int i = 0; i < digits; i += 16) {
    uint64_t r = rng();
    for (int k = 0; k < 16 && i + k < digits; ++k, r >>= 4) out += kHex[r & 15];
  }
}

std::string RandomAddress(std::mt19937_64& rng) {
  std::string s;
  AppendHex(s, rng, 40);
  return s;
}

// Civil date of `days` since the epoch, as "YYYY-MM-DD" (H. Hinnant's civil_from_days).
void AppendDate(std::string& out, int64_t z) {
  z += 719468;
  const int64_t era = z / 146097, doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", static_cast<int>(yoe + era * 400 + (m <= 2)),
                static_cast<int>(m), static_cast<int>(d));
  out += buf;
}

Result<std::vector<std::string>> RegistryTokens(const std::string& data_dir) {
  ADS_ASSIGN_OR_RETURN(store::Stores stores, app::OpenStore(data_dir));
  ADS_ASSIGN_OR_RETURN(std::vector<store::ProjectRecord> projects,
                       stores.inventory->ListProjects());
  std::vector<std::string> tokens;
  for (const store::ProjectRecord& p : projects) {
    for (const store::ContractRef& c : p.contracts) {
      if (c.chain_id == 1) tokens.push_back(FormatAddress(c.address));
    }
  }
  if (tokens.empty()) {
    return InvalidArgumentError("no chain-1 contracts in " + data_dir +
                                " (run `adserver projects import` first)");
  }
  return tokens;
}

// Zipf(1) sampler over [0, n): inverse CDF on precomputed cumulative weights.
class Zipf {
 public:
  explicit Zipf(size_t n) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = sum += 1.0 / double(i + 1);
    for (double& c : cdf_) c /= sum;
  }
  size_t operator()(std::mt19937_64& rng) const {
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min(size_t(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()),
                    cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

Status Generate(const Flags& flags) {
  ADS_ASSIGN_OR_RETURN(std::vector<std::string> known, RegistryTokens(flags.data_dir));
  std::mt19937_64 rng(flags.seed);
  std::shuffle(known.begin(), known.end(), rng);
  std::vector<std::string> unknown(2'000);
  for (std::string& t : unknown) t = RandomAddress(rng);
  const int64_t wallet_count =
      flags.wallets > 0 ? flags.wallets : std::max<int64_t>(1, flags.rows / 5);
  std::vector<std::string> wallets(static_cast<size_t>(wallet_count));
  for (std::string& w : wallets) w = RandomAddress(rng);
  Zipf known_pick(known.size()), unknown_pick(unknown.size());
  std::uniform_real_distribution<double> unit(0, 1);
  // Skewed wallet activity: index = n * u^3 (a few wallets trade a lot).
  auto wallet = [&]() -> const std::string& {
    double u = unit(rng);
    return wallets[std::min(wallets.size() - 1, size_t(double(wallets.size()) * u * u * u))];
  };
  FILE* out = flags.out == "-" ? stdout : std::fopen(flags.out.c_str(), "wb");
  if (out == nullptr) return UnavailableError("cannot write " + flags.out);
  std::string line =
      "token_address,from_address,to_address,value,transaction_hash,log_index,block_timestamp,"
      "block_number,block_hash\n";
  const int64_t first_day = 20'089;  // 2025-01-01
  const int64_t first_block = 21'525'000;
  for (int64_t i = 0; i < flags.rows; ++i) {
    // Rows are in block order, one year of blocks spread over the file.
    const int64_t seconds =
        first_day * 86400 + i * (365 * 86400) / std::max<int64_t>(1, flags.rows);
    const int64_t block = first_block + (seconds - first_day * 86400) / 12;
    line += unit(rng) < flags.unknown_share ? unknown[unknown_pick(rng)] : known[known_pick(rng)];
    line += ',';
    line += unit(rng) < 0.02 ? "0x0000000000000000000000000000000000000000" : wallet();
    line += ',';
    line += wallet();
    line += ',';
    line += std::to_string(rng() % 10'000'000'000'000'000'000ull);
    line += ',';
    AppendHex(line, rng, 64);
    line += ',' + std::to_string(rng() % 400) + ',';
    AppendDate(line, seconds / 86400);
    char time[32];
    std::snprintf(time, sizeof time, " %02d:%02d:%02d UTC,", int(seconds % 86400 / 3600),
                  int(seconds % 3600 / 60), int(seconds % 60));
    line += time;
    line += std::to_string(block);
    line += ',';
    AppendHex(line, rng, 64);
    line += '\n';
    if (line.size() > (1 << 20)) {
      std::fwrite(line.data(), 1, line.size(), out);
      line.clear();
    }
  }
  std::fwrite(line.data(), 1, line.size(), out);
  if (out != stdout && std::fclose(out) != 0) return UnavailableError("cannot write " + flags.out);
  return OkStatus();
}

}  // namespace
}  // namespace adserver::bench

int main(int argc, char** argv) {
  adserver::bench::Flags flags;
  CLI::App app{"Writes a BigQuery token_transfers CSV for the bulk import benchmark"};
  app.add_option("--data", flags.data_dir, "Data directory whose registry supplies the tokens")
      ->required();
  app.add_option("--out", flags.out, "Output file (- = stdout)");
  app.add_option("--rows", flags.rows, "Transfers to write");
  app.add_option("--wallets", flags.wallets, "Distinct wallets (default rows / 5)");
  app.add_option("--unknown-share", flags.unknown_share, "Share of tokens not in the registry");
  app.add_option("--seed", flags.seed);
  CLI11_PARSE(app, argc, argv);
  adserver::Status status = adserver::bench::Generate(flags);
  if (!status.ok()) {
    std::cerr << "adserver-bench-import-data: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
