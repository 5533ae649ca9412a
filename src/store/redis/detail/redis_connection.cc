#include "store/redis/detail/redis_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <charconv>
#include <utility>

namespace adserver::store::redis_detail {
namespace {

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

bool Retryable(std::string_view error) {
  return error.starts_with("LOADING") || error.starts_with("BUSY") ||
         error.starts_with("TRYAGAIN") || error.starts_with("MASTERDOWN") ||
         error.starts_with("READONLY");
}

}  // namespace

Result<RedisAddress> ParseRedisUrl(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  if (!url.starts_with(kScheme)) {
    return InvalidArgumentError("a Redis URL starts with redis:// (rediss:// is not supported)");
  }
  std::string_view rest = url.substr(kScheme.size());
  RedisAddress a;
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = credentials.find(':');
    if (colon == std::string_view::npos) {
      a.password = std::string(credentials);
    } else {
      a.user = std::string(credentials.substr(0, colon));
      a.password = std::string(credentials.substr(colon + 1));
    }
  }
  std::string_view hostport = rest.substr(0, rest.find('/'));
  std::string_view path = rest.size() > hostport.size() ? rest.substr(hostport.size() + 1) : "";
  size_t colon = hostport.rfind(':');
  a.host = std::string(hostport.substr(0, colon));
  if (colon != std::string_view::npos) {
    std::string_view port = hostport.substr(colon + 1);
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
    if (ec != std::errc() || end != port.data() + port.size() || a.port <= 0 || a.port > 65535) {
      return InvalidArgumentError("invalid port in the Redis URL");
    }
  }
  if (a.host.empty()) return InvalidArgumentError("the Redis URL names no host");
  if (!path.empty()) {
    auto [end, ec] = std::from_chars(path.data(), path.data() + path.size(), a.db);
    if (ec != std::errc() || end != path.data() + path.size() || a.db < 0) {
      return InvalidArgumentError("invalid database number in the Redis URL");
    }
  }
  return a;
}

RedisConnection::RedisConnection(RedisAddress address, std::chrono::milliseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

Result<std::unique_ptr<RedisConnection>> RedisConnection::Open(std::string_view url,
                                                               std::chrono::milliseconds timeout,
                                                               bool wait_for_redis) {
  ADS_ASSIGN_OR_RETURN(RedisAddress address, ParseRedisUrl(url));
  auto conn = std::unique_ptr<RedisConnection>(new RedisConnection(std::move(address), timeout));
  Status connected = conn->Connect();
  if (!connected.ok() && !(wait_for_redis && connected.code() == Code::kUnavailable)) {
    return connected;
  }
  return conn;
}

Status RedisConnection::Connect() {
  if (context_ != nullptr) {
    redisFree(context_);
    context_ = nullptr;
  }
  redisContext* c =
      redisConnectWithTimeout(address_.host.c_str(), address_.port, ToTimeval(timeout_));
  if (c == nullptr) return InternalError("hiredis cannot allocate a connection");
  if (c->err != 0) {
    std::string message = c->errstr;
    redisFree(c);
    return UnavailableError("cannot connect to Redis at " + address_.host + ":" +
                            std::to_string(address_.port) + ": " + message);
  }
  redisSetTimeout(c, ToTimeval(timeout_));
  context_ = c;
  if (!address_.password.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!address_.user.empty()) auth.push_back(address_.user);
    auth.push_back(address_.password);
    ADS_RETURN_IF_ERROR(Run(auth).status());
  }
  if (address_.db != 0) {
    std::string db = std::to_string(address_.db);
    ADS_RETURN_IF_ERROR(Run({"SELECT", db}).status());
  }
  return OkStatus();
}

Result<RedisReply> RedisConnection::Run(const std::vector<std::string_view>& args) {
  if (context_ == nullptr || context_->err != 0) ADS_RETURN_IF_ERROR(Connect());
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data()));
  if (reply == nullptr) {
    // The context is unusable now (I/O error or timeout); the next call reconnects.
    return UnavailableError(std::string("Redis: ") + context_->errstr);
  }
  std::unique_ptr<redisReply, void (*)(void*)> owned(reply, freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR) {
    std::string error(reply->str, reply->len);
    return Retryable(error) ? UnavailableError("Redis: " + error)
                            : InternalError("Redis: " + error);
  }
  return Convert(reply);
}

Result<RedisReply> RedisConnection::Command(std::initializer_list<std::string_view> args) {
  return Run(std::vector<std::string_view>(args));
}

Result<RedisReply> RedisConnection::Command(const std::vector<std::string>& args) {
  return Run(std::vector<std::string_view>(args.begin(), args.end()));
}

Result<std::vector<RedisReply>> RedisConnection::Pipeline(
    const std::vector<std::vector<std::string>>& commands) {
  if (context_ == nullptr || context_->err != 0) ADS_RETURN_IF_ERROR(Connect());
  for (const std::vector<std::string>& args : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      return UnavailableError(std::string("Redis: ") + context_->errstr);
    }
  }
  std::vector<RedisReply> replies;
  replies.reserve(commands.size());
  Status first = OkStatus();
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
      return UnavailableError(std::string("Redis: ") + context_->errstr);
    }
    std::unique_ptr<redisReply, void (*)(void*)> reply(static_cast<redisReply*>(raw),
                                                       freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR) {
      // Every reply is still read, so the connection stays in step.
      if (first.ok()) {
        std::string error(reply->str, reply->len);
        first = Retryable(error) ? UnavailableError("Redis: " + error)
                                 : InternalError("Redis: " + error);
      }
      continue;
    }
    replies.push_back(Convert(reply.get()));
  }
  if (!first.ok()) return first;
  return replies;
}

Result<std::string> RedisConnection::ScriptSha(RedisScript& script, bool reload) {
  if (script.sha_.empty() || reload) {
    ADS_ASSIGN_OR_RETURN(RedisReply loaded, Run({"SCRIPT", "LOAD", script.source_}));
    script.sha_ = loaded.text;
  }
  return script.sha_;
}

Result<RedisReply> RedisConnection::Eval(RedisScript& script, const std::vector<std::string>& keys,
                                         const std::vector<std::string>& args) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (script.sha_.empty()) {
      ADS_ASSIGN_OR_RETURN(RedisReply loaded, Run({"SCRIPT", "LOAD", script.source_}));
      script.sha_ = loaded.text;
    }
    std::string count = std::to_string(keys.size());
    std::vector<std::string_view> argv = {"EVALSHA", script.sha_, count};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    Result<RedisReply> reply = Run(argv);
    // A restarted (or flushed) Redis forgets its scripts: load it again once.
    if (!reply.ok() && reply.status().message().find("NOSCRIPT") != std::string::npos) {
      script.sha_.clear();
      continue;
    }
    return reply;
  }
  return InternalError("Redis keeps forgetting a script it just loaded");
}

}  // namespace adserver::store::redis_detail
