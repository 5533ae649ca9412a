#include "cli/context.h"

#include <fstream>
#include <iostream>
#include <iterator>

#include "app/admin_call.h"
#include "common/json_writer.h"

namespace adserver::cli {

void AddDataOptions(CLI::App& cmd, Context& ctx) {
  cmd.add_option("--data", ctx.data_dir, "Data directory (default ./data, or $ADSERVER_DATA)");
  cmd.add_option("--database-url", ctx.cluster.database_url,
                 "Cluster mode: PostgreSQL URL (or $ADSERVER_DATABASE_URL); needs --redis-url");
  cmd.add_option("--redis-url", ctx.cluster.redis_url,
                 "Cluster mode: Redis URL (or $ADSERVER_REDIS_URL); needs --database-url");
  cmd.add_option("--redis-key-prefix", ctx.cluster.redis_key_prefix,
                 "Cluster mode: prefix of the cluster's Redis keys (default adserver:, or "
                 "$ADSERVER_REDIS_KEY_PREFIX)");
}

Status CheckCluster(const Context& ctx) {
  config::Config c;
  c.cluster = ctx.cluster;
  return config::Validate(c);
}

Status Call(const Context& ctx, http::Method method, const std::string& target,
            const std::string& body, const std::string& content_type) {
  ADS_RETURN_IF_ERROR(CheckCluster(ctx));
  ADS_ASSIGN_OR_RETURN(app::AdminCallResult r, app::RunAdminCall(ctx.data_dir, ctx.cluster, method,
                                                                 target, body, content_type));
  std::cout << r.body << std::endl;
  if (r.status < 200 || r.status >= 300) {
    return Status(Code::kInvalidArgument, "admin call answered HTTP " + std::to_string(r.status));
  }
  return OkStatus();
}

Result<std::string> ReadBodyArg(const std::string& arg) {
  if (arg.empty() || arg[0] != '@') return arg;
  std::string path = arg.substr(1);
  std::istream* in = &std::cin;
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return UnavailableError("cannot read " + path);
    in = &file;
  }
  return std::string(std::istreambuf_iterator<char>(*in), {});
}

std::string JsonString(const std::string& s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

std::string JsonStringArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, items[i]);
  }
  return out + "]";
}

}  // namespace adserver::cli
