#include "store/redis/redis_cap_counters.h"

#include <algorithm>
#include <utility>

#include "common/address.h"

namespace adserver::store {
namespace {

using redis_detail::RedisConnection;
using redis_detail::RedisReply;

// KEYS[1] the pair's counter; ARGV[1] impressions to add (0: only read); ARGV[2] the window in
// seconds, set at the pair's first impression. A read of a missing pair creates nothing.
constexpr std::string_view kAdd = R"lua(
local add = tonumber(ARGV[1])
if add == 0 then return tonumber(redis.call('GET', KEYS[1]) or '0') end
local n = redis.call('INCRBY', KEYS[1], add)
if n == add then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return n
)lua";

}  // namespace

RedisCapCounters::RedisCapCounters(std::unique_ptr<RedisConnection> conn, std::string prefix)
    : conn_(std::move(conn)), add_(std::string(kAdd)), prefix_(std::move(prefix)) {}

Result<std::unique_ptr<RedisCapCounters>> RedisCapCounters::Open(std::string_view url,
                                                                 std::string key_prefix) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<RedisConnection> conn, RedisConnection::Open(url));
  return std::unique_ptr<RedisCapCounters>(
      new RedisCapCounters(std::move(conn), std::move(key_prefix)));
}

Result<std::vector<uint32_t>> RedisCapCounters::AddAndRead(
    std::span<const decision::CapIncrement> increments) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    ADS_ASSIGN_OR_RETURN(std::string sha, conn_->ScriptSha(add_, attempt > 0));
    std::vector<std::vector<std::string>> commands;
    commands.reserve(increments.size());
    for (const decision::CapIncrement& inc : increments) {
      commands.push_back({"EVALSHA", sha, "1",
                          prefix_ + "cap:" + std::to_string(inc.campaign_id) + ":" +
                              HexEncode(inc.wallet.bytes.data(), inc.wallet.bytes.size()),
                          std::to_string(inc.add),
                          std::to_string(std::max<int64_t>(1, int64_t{inc.hours} * 3600))});
    }
    Result<std::vector<RedisReply>> replies = conn_->Pipeline(commands);
    if (!replies.ok() && replies.status().message().find("NOSCRIPT") != std::string::npos) {
      continue;  // Redis restarted (or was flushed) since the script was loaded
    }
    ADS_RETURN_IF_ERROR(replies.status());
    std::vector<uint32_t> counts;
    counts.reserve(replies->size());
    for (const RedisReply& r : *replies) {
      counts.push_back(static_cast<uint32_t>(std::clamp<int64_t>(r.integer, 0, UINT32_MAX)));
    }
    return counts;
  }
  return InternalError("Redis keeps forgetting the cap script");
}

}  // namespace adserver::store
