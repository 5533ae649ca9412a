#include "store/redis/redis_cap_counters.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "common/address.h"
#include "common/mutex.h"

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
                                                                 std::string key_prefix,
                                                                 bool wait_for_redis) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<RedisConnection> conn,
                       RedisConnection::Open(url, std::chrono::seconds(2), wait_for_redis));
  return std::unique_ptr<RedisCapCounters>(
      new RedisCapCounters(std::move(conn), std::move(key_prefix)));
}

namespace {
// Pairs read per MGET.
constexpr size_t kReadsPerCommand = 1000;

uint32_t CountOf(const RedisReply& r) {
  int64_t v = r.integer;
  if (r.type == RedisReply::Type::kString) v = std::strtoll(r.text.c_str(), nullptr, 10);
  if (r.type == RedisReply::Type::kNil) v = 0;
  return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, UINT32_MAX));
}
}  // namespace

std::string RedisCapCounters::Key(const decision::CapIncrement& inc) const {
  return prefix_ + "cap:" + std::to_string(inc.campaign_id) + ":" +
         HexEncode(inc.wallet.bytes.data(), inc.wallet.bytes.size());
}

// One pipeline: a script call per pair with impressions to add, and the pairs only read in
// MGETs of up to kReadsPerCommand keys (a read is most of a sync: the pairs served here
// recently, read again for what other nodes served).
Result<std::vector<uint32_t>> RedisCapCounters::AddAndRead(
    std::span<const decision::CapIncrement> increments) {
  MutexLock lock(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    ADS_ASSIGN_OR_RETURN(std::string sha, conn_->ScriptSha(add_, attempt > 0));
    std::vector<std::vector<std::string>> commands;
    std::vector<size_t> reads;  // indexes of the pairs only read, in MGET order
    for (size_t i = 0; i < increments.size(); ++i) {
      const decision::CapIncrement& inc = increments[i];
      if (inc.add == 0) {
        reads.push_back(i);
        continue;
      }
      commands.push_back({"EVALSHA", sha, "1", Key(inc), std::to_string(inc.add),
                          std::to_string(std::max<int64_t>(1, int64_t{inc.hours} * 3600))});
    }
    const size_t scripts = commands.size();
    for (size_t at = 0; at < reads.size(); at += kReadsPerCommand) {
      std::vector<std::string> mget = {"MGET"};
      for (size_t j = at; j < std::min(reads.size(), at + kReadsPerCommand); ++j) {
        mget.push_back(Key(increments[reads[j]]));
      }
      commands.push_back(std::move(mget));
    }
    Result<std::vector<RedisReply>> replies = conn_->Pipeline(commands);
    if (!replies.ok() && replies.status().message().find("NOSCRIPT") != std::string::npos) {
      continue;  // Redis restarted (or was flushed) since the script was loaded
    }
    ADS_RETURN_IF_ERROR(replies.status());
    if (replies->size() != commands.size()) return InternalError("Redis pipeline reply count");
    std::vector<uint32_t> counts(increments.size(), 0);
    size_t script = 0;
    for (size_t i = 0; i < increments.size(); ++i) {
      if (increments[i].add != 0) counts[i] = CountOf((*replies)[script++]);
    }
    size_t read = 0;
    for (size_t c = scripts; c < replies->size(); ++c) {
      for (const RedisReply& value : (*replies)[c].elements) {
        if (read < reads.size()) counts[reads[read++]] = CountOf(value);
      }
    }
    if (read != reads.size()) return InternalError("Redis MGET reply count");
    return counts;
  }
  return InternalError("Redis keeps forgetting the cap script");
}

}  // namespace adserver::store
