#pragma once

// The Redis adapter of decision::BudgetAuthority (cluster mode, issue 17 item 5): each
// campaign's remaining budget is one integer key, `{prefix}budget:{campaign id}` (micros). Take
// and Give are Lua scripts, so a take of min(remaining, want) is atomic across every node.
// Seed is SET NX. When Redis loses its data, Take answers NotFound and the first node to refill
// seeds the key again from the spend persisted in PostgreSQL. Thread-safe: one connection
// behind a mutex (called from the lease refill thread, never from an event loop).

#include <memory>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "decision/budget_leases.h"
#include "store/redis/detail/redis_connection.h"

namespace adserver::store {

class RedisBudgetAuthority final : public decision::BudgetAuthority {
 public:
  static Result<std::unique_ptr<RedisBudgetAuthority>> Open(std::string_view url,
                                                            std::string key_prefix = "adserver:",
                                                            bool wait_for_redis = false);

  Result<Micros> Take(int64_t campaign_id, Micros want) override;
  Status Give(int64_t campaign_id, Micros amount) override;
  Result<bool> Seed(int64_t campaign_id, Micros remaining) override;
  Status Forget(int64_t campaign_id) override;

 private:
  RedisBudgetAuthority(std::unique_ptr<redis_detail::RedisConnection> conn, std::string prefix);
  std::string Key(int64_t campaign_id) const;

  Mutex mu_;
  std::unique_ptr<redis_detail::RedisConnection> conn_ ADS_GUARDED_BY(mu_);
  redis_detail::RedisScript take_ ADS_GUARDED_BY(mu_);
  redis_detail::RedisScript give_ ADS_GUARDED_BY(mu_);
  const std::string prefix_;
};

}  // namespace adserver::store
