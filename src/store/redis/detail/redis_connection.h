#pragma once

// A thin layer over one hiredis connection: commands with binary-safe arguments, Lua scripts
// run by their SHA1 (loaded on first use and again after a Redis restart), connect and command
// timeouts, and hiredis' errors mapped to Status: Unavailable when Redis cannot be reached,
// times out, or is loading or busy; Internal for an error reply. A broken connection is
// re-established by the next call. Not thread-safe: an adapter guards it with a mutex.

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct redisContext;

namespace adserver::store::redis_detail {

struct RedisReply {
  enum class Type : uint8_t { kNil, kInteger, kString, kStatus, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string text;  // kString, kStatus
  std::vector<RedisReply> elements;
};

// Where a redis:// URL points: redis://[[user]:password@]host[:port][/db].
struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string user;
  std::string password;
  int db = 0;
};
Result<RedisAddress> ParseRedisUrl(std::string_view url);

class RedisScript {
 public:
  explicit RedisScript(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

 private:
  friend class RedisConnection;
  std::string source_;
  std::string sha_;  // as SCRIPT LOAD answered; "" until then
};

class RedisConnection {
 public:
  // Connects to `url`: InvalidArgument for a bad URL, Unavailable when Redis cannot be reached.
  // With `wait_for_redis`, an unreachable Redis is not an error: the connection is made by the
  // first call that finds it (a node starting during an outage serves, failing closed).
  static Result<std::unique_ptr<RedisConnection>> Open(
      std::string_view url, std::chrono::milliseconds timeout = std::chrono::seconds(2),
      bool wait_for_redis = false);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  Result<RedisReply> Command(std::initializer_list<std::string_view> args);
  Result<RedisReply> Command(const std::vector<std::string>& args);
  // Sends every command, then reads every reply: one round trip for the batch. The first error
  // reply fails the whole batch (the commands before it were applied).
  Result<std::vector<RedisReply>> Pipeline(const std::vector<std::vector<std::string>>& commands);
  // The SHA1 of `script` as Redis knows it, loading it first when needed (for pipelined
  // EVALSHA); `reload` loads it again (after a NOSCRIPT error).
  Result<std::string> ScriptSha(RedisScript& script, bool reload = false);
  // EVALSHA of `script` with `keys` and `args`; loads the script when Redis does not have it.
  Result<RedisReply> Eval(RedisScript& script, const std::vector<std::string>& keys,
                          const std::vector<std::string>& args);

 private:
  RedisConnection(RedisAddress address, std::chrono::milliseconds timeout);
  Status Connect();
  Result<RedisReply> Run(const std::vector<std::string_view>& args);

  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  redisContext* context_ = nullptr;
};

}  // namespace adserver::store::redis_detail
