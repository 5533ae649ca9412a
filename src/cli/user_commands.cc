// users create --email E --role R [--publisher N | --community N] [--password-file F]
// (issue 16): the first operator of the console; the password comes from the file, else
// $ADSERVER_USER_PASSWORD, else the first line of stdin, never from the command line.

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/commands.h"

namespace adserver::cli {
namespace {

// A new user's password: the file's content, else $ADSERVER_USER_PASSWORD, else the first
// line of stdin; a trailing newline is dropped.
Result<std::string> ReadPassword(const std::string& file) {
  std::string password;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return UnavailableError("cannot read " + file);
    password.assign(std::istreambuf_iterator<char>(in), {});
  } else if (const char* env = std::getenv("ADSERVER_USER_PASSWORD"); env != nullptr) {
    password = env;
  } else {
    std::getline(std::cin, password);
  }
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) return InvalidArgumentError("no password given");
  return password;
}

}  // namespace

void AddUsers(CLI::App& cmd, Context& ctx) {
  struct Flags {
    std::string email, role, password_file;
    int64_t publisher = 0, community = 0;
  };
  Flags& f = ctx.Own<Flags>();
  cmd.require_subcommand(1);
  CLI::App* create = cmd.add_subcommand("create", "Create a user");
  AddDataOptions(*create, ctx);
  create->add_option("--email", f.email)->required();
  create->add_option("--role", f.role, "operator, publisher or advertiser")->required();
  create->add_option("--publisher", f.publisher, "The publisher of a publisher user");
  create->add_option("--community", f.community, "The community of an advertiser user");
  create->add_option("--password-file", f.password_file, "File holding the password");
  create->callback([&] {
    Result<std::string> password = ReadPassword(f.password_file);
    if (!password.ok()) {
      ctx.status = password.status();
      return;
    }
    std::string json = "{\"email\":" + JsonString(f.email) + ",\"role\":" + JsonString(f.role) +
                       ",\"password\":" + JsonString(*password);
    if (f.publisher > 0) json += ",\"publisherId\":" + std::to_string(f.publisher);
    if (f.community > 0) json += ",\"communityId\":" + std::to_string(f.community);
    ctx.status = Call(ctx, http::Method::kPost, "/admin/v1/users", json + "}");
  });
  CLI::App* list = cmd.add_subcommand("list", "List users");
  AddDataOptions(*list, ctx);
  list->callback([&] { ctx.status = Call(ctx, http::Method::kGet, "/admin/v1/users"); });
}

}  // namespace adserver::cli
