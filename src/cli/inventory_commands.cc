// The one-shot subcommands over the admin API (each runs one call, or a few, in-process on the
// data directory or the cluster, and prints the JSON answers): `admin METHOD PATH [BODY]`,
// publishers, keys, and communities/projects/campaigns/ads with the admin API's bodies.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"

namespace adserver::cli {
namespace {

std::optional<http::Method> ParseMethod(const std::string& name) {
  static const std::pair<const char*, http::Method> kMethods[] = {
      {"GET", http::Method::kGet},     {"POST", http::Method::kPost},
      {"PATCH", http::Method::kPatch}, {"DELETE", http::Method::kDelete},
      {"PUT", http::Method::kPut}};
  for (auto [n, m] : kMethods) {
    if (name == n) return m;
  }
  return std::nullopt;
}

// A subcommand of `parent` with the data options.
CLI::App& Sub(CLI::App& parent, const char* name, const char* help, Context& ctx) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  AddDataOptions(*cmd, ctx);
  return *cmd;
}

}  // namespace

// Generic admin call: adserver admin GET /admin/v1/campaigns
void AddAdmin(CLI::App& cmd, Context& ctx) {
  struct Flags {
    std::string method, target, body, content_type = "application/json";
  };
  Flags& f = ctx.Own<Flags>();
  AddDataOptions(cmd, ctx);
  cmd.add_option("method", f.method, "GET, POST, PATCH, DELETE")->required();
  cmd.add_option("path", f.target, "/admin/v1/...")->required();
  cmd.add_option("body", f.body, "JSON body, or @file, or @- for stdin");
  cmd.add_option("--content-type", f.content_type, "Body content type");
  cmd.callback([&] {
    std::optional<http::Method> method = ParseMethod(f.method);
    if (!method) {
      ctx.status = InvalidArgumentError("unknown method " + f.method);
      return;
    }
    Result<std::string> body = ReadBodyArg(f.body);
    ctx.status = body.ok() ? Call(ctx, *method, f.target, *body, f.content_type) : body.status();
  });
}

void AddPublishers(CLI::App& cmd, Context& ctx) {
  struct Flags {
    std::string name;
    std::vector<std::string> origins;
  };
  Flags& f = ctx.Own<Flags>();
  cmd.require_subcommand(1);
  CLI::App& create = Sub(cmd, "create", "Create a publisher", ctx);
  create.add_option("--name", f.name)->required();
  create.add_option("--allowed-origin", f.origins, "Allowed browser origin (repeatable)");
  create.callback([&] {
    std::string json = "{\"name\":" + JsonString(f.name);
    if (!f.origins.empty()) json += ",\"allowedOrigins\":" + JsonStringArray(f.origins);
    ctx.status = Call(ctx, http::Method::kPost, "/admin/v1/publishers", json + "}");
  });
  Sub(cmd, "list", "List publishers", ctx).callback([&] {
    ctx.status = Call(ctx, http::Method::kGet, "/admin/v1/publishers");
  });
}

void AddKeys(CLI::App& cmd, Context& ctx) {
  struct Flags {
    int64_t publisher = 0;
    int64_t key = 0;
    bool test = false;
  };
  Flags& f = ctx.Own<Flags>();
  cmd.require_subcommand(1);
  auto keys_path = [&] { return "/admin/v1/publishers/" + std::to_string(f.publisher) + "/keys"; };
  CLI::App& create = Sub(cmd, "create", "Create a key (printed once)", ctx);
  create.add_option("--publisher", f.publisher)->required();
  create.add_flag("--test", f.test, "Test key: sample ads, no events, no budget");
  create.callback([&, keys_path] {
    ctx.status = Call(ctx, http::Method::kPost, keys_path(), f.test ? R"({"test":true})" : R"({"test":false})");
  });
  CLI::App& list = Sub(cmd, "list", "List a publisher's keys", ctx);
  list.add_option("--publisher", f.publisher)->required();
  list.callback([&, keys_path] { ctx.status = Call(ctx, http::Method::kGet, keys_path()); });
  CLI::App& revoke = Sub(cmd, "revoke", "Revoke a key at once", ctx);
  revoke.add_option("--publisher", f.publisher)->required();
  revoke.add_option("--key", f.key)->required();
  revoke.callback([&, keys_path] {
    ctx.status = Call(ctx, http::Method::kDelete, keys_path() + "/" + std::to_string(f.key));
  });
}

void AddResource(CLI::App& cmd, Context& ctx, const char* path) {
  struct Flags {
    std::string json;
    std::string id;
  };
  Flags& f = ctx.Own<Flags>();
  const std::string base = path;
  cmd.require_subcommand(1);
  auto body_call = [&ctx, &f](http::Method method, const std::string& target) {
    Result<std::string> body = ReadBodyArg(f.json);
    ctx.status = body.ok() ? Call(ctx, method, target, *body) : body.status();
  };
  CLI::App& create = Sub(cmd, "create", "Create from a JSON body (admin API shape)", ctx);
  create.add_option("json", f.json, "JSON body, @file or @-")->required();
  create.callback([body_call, base] { body_call(http::Method::kPost, base); });
  Sub(cmd, "list", "List", ctx).callback([&ctx, base] {
    ctx.status = Call(ctx, http::Method::kGet, base);
  });
  CLI::App& get = Sub(cmd, "get", "Show one", ctx);
  get.add_option("id", f.id)->required();
  get.callback([&ctx, &f, base] { ctx.status = Call(ctx, http::Method::kGet, base + "/" + f.id); });
  CLI::App& update = Sub(cmd, "update", "Change fields (PATCH with a JSON body)", ctx);
  update.add_option("id", f.id)->required();
  update.add_option("json", f.json, "JSON body, @file or @-")->required();
  update.callback([body_call, &f, base] { body_call(http::Method::kPatch, base + "/" + f.id); });
  CLI::App& del = Sub(cmd, "delete", "Delete one", ctx);
  del.add_option("id", f.id)->required();
  del.callback([&ctx, &f, base] { ctx.status = Call(ctx, http::Method::kDelete, base + "/" + f.id); });
}

// projects import FILE... (token lists, MetaMask contract map, address books)
void AddProjectImport(CLI::App& cmd, Context& ctx) {
  std::vector<std::string>& files = ctx.Own<std::vector<std::string>>();
  CLI::App& import =
      Sub(cmd, "import", "Merge project lists into the registry (tools/registry/out/*.json)", ctx);
  import.add_option("files", files)->required();
  import.callback([&] {
    // Named entries of every list first, then the entries without a name, which join only
    // contracts some list names (issue 40): the registry does not depend on the files' order
    // past the first pass, and importing the same files again changes nothing.
    for (const char* pass : {"named", "unnamed"}) {
      for (const std::string& file : files) {
        Result<std::string> body = ReadBodyArg("@" + file);
        ctx.status = body.ok() ? Call(ctx, http::Method::kPost,
                                      std::string("/admin/v1/projects/import?entries=") + pass, *body)
                               : body.status();
        if (!ctx.status.ok()) return;
      }
    }
  });
}

}  // namespace adserver::cli
