#pragma once

// The Redis adapter of decision::CapCounterStore (cluster mode, issue 17 item 6): one counter
// per (campaign, wallet), `{prefix}cap:{campaign id}:{wallet hex}`, expiring `hours` after the
// pair's first impression anywhere (its cap window). A batch is one pipeline of EVALSHA calls
// (one round trip). Thread-safe: one connection behind a mutex (called by the sync thread).

#include <memory>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "decision/shared_caps.h"
#include "store/redis/detail/redis_connection.h"

namespace adserver::store {

class RedisCapCounters final : public decision::CapCounterStore {
 public:
  static Result<std::unique_ptr<RedisCapCounters>> Open(std::string_view url,
                                                        std::string key_prefix = "adserver:",
                                                        bool wait_for_redis = false);
  Result<std::vector<uint32_t>> AddAndRead(
      std::span<const decision::CapIncrement> increments) override;

 private:
  RedisCapCounters(std::unique_ptr<redis_detail::RedisConnection> conn, std::string prefix);
  std::string Key(const decision::CapIncrement& inc) const;

  Mutex mu_;
  std::unique_ptr<redis_detail::RedisConnection> conn_ ADS_GUARDED_BY(mu_);
  redis_detail::RedisScript add_ ADS_GUARDED_BY(mu_);
  const std::string prefix_;
};

}  // namespace adserver::store
