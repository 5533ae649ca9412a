#include "store/redis/redis_budget_authority.h"

#include <utility>

#include "common/mutex.h"

namespace adserver::store {
namespace {

using redis_detail::RedisConnection;
using redis_detail::RedisReply;

// KEYS[1] remaining budget; ARGV[1] wanted. -1: no such key (seed it). Lua numbers are
// doubles: exact for budgets below 2^53 micros (9 billion currency units).
constexpr std::string_view kTake = R"lua(
local remaining = redis.call('GET', KEYS[1])
if not remaining then return -1 end
remaining = tonumber(remaining)
local take = math.min(remaining, tonumber(ARGV[1]))
if take <= 0 then return 0 end
redis.call('DECRBY', KEYS[1], take)
return take
)lua";

// KEYS[1] remaining budget; ARGV[1] amount. Only onto a key that exists: a lost key is seeded
// again from the persisted spend, which a give-back must not inflate.
constexpr std::string_view kGive = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
)lua";

}  // namespace

RedisBudgetAuthority::RedisBudgetAuthority(std::unique_ptr<RedisConnection> conn,
                                           std::string prefix)
    : conn_(std::move(conn)),
      take_(std::string(kTake)),
      give_(std::string(kGive)),
      prefix_(std::move(prefix)) {}

Result<std::unique_ptr<RedisBudgetAuthority>> RedisBudgetAuthority::Open(std::string_view url,
                                                                         std::string key_prefix,
                                                                         bool wait_for_redis) {
  ADS_ASSIGN_OR_RETURN(std::unique_ptr<RedisConnection> conn,
                       RedisConnection::Open(url, std::chrono::seconds(2), wait_for_redis));
  return std::unique_ptr<RedisBudgetAuthority>(
      new RedisBudgetAuthority(std::move(conn), std::move(key_prefix)));
}

std::string RedisBudgetAuthority::Key(int64_t campaign_id) const {
  return prefix_ + "budget:" + std::to_string(campaign_id);
}

Result<Micros> RedisBudgetAuthority::Take(int64_t campaign_id, Micros want) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(RedisReply r,
                       conn_->Eval(take_, {Key(campaign_id)}, {std::to_string(want)}));
  if (r.type != RedisReply::Type::kInteger) return InternalError("budget take: not an integer");
  if (r.integer < 0) {
    return NotFoundError("no remaining budget for campaign " + std::to_string(campaign_id) +
                         " in Redis");
  }
  return r.integer;
}

Status RedisBudgetAuthority::Give(int64_t campaign_id, Micros amount) {
  MutexLock lock(mu_);
  return conn_->Eval(give_, {Key(campaign_id)}, {std::to_string(amount)}).status();
}

Result<bool> RedisBudgetAuthority::Seed(int64_t campaign_id, Micros remaining) {
  MutexLock lock(mu_);
  ADS_ASSIGN_OR_RETURN(RedisReply r,
                       conn_->Command({"SET", Key(campaign_id), std::to_string(remaining), "NX"}));
  return r.type == RedisReply::Type::kStatus;  // OK; nil when another node seeded it first
}

Status RedisBudgetAuthority::Forget(int64_t campaign_id) {
  MutexLock lock(mu_);
  return conn_->Command({"DEL", Key(campaign_id)}).status();
}

}  // namespace adserver::store
