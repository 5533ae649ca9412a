// docs/openapi.yaml lists exactly the routes `adserver serve --demo` registers (issue 19 item 2):
// the composition root is built on a temporary data directory (not started) and its route table
// compared with the document's operations both ways. The console's HTML/JS/CSS assets are the
// only routes the document leaves out on purpose. Answers themselves are checked by
// openapi_test.py against the real binary.

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "app/server.h"
#include "config/config.h"
#include "demo/demo.h"
#include "http/router.h"
#include "support/temp_dir.h"

namespace adserver {
namespace {

using Operation = std::pair<std::string, std::string>;  // method (lower case), path pattern

std::string LowerMethod(http::Method method) {
  std::string name(http::MethodName(method));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// The operations of the document: path keys are the two-space-indented keys under `paths:`,
// methods the four-space-indented HTTP method keys under them (the document's layout, which
// the lint test keeps valid).
std::set<Operation> DocumentedOperations(const std::string& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << "cannot read " << file;
  static const std::regex kPath(R"(^  (/[^:]*):\s*$)");
  static const std::regex kMethod(R"(^    (get|head|post|put|patch|delete|options):\s*$)");
  std::set<Operation> operations;
  std::string line, path;
  bool in_paths = false;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("paths:", 0) == 0) in_paths = true;
    if (line.rfind("components:", 0) == 0) in_paths = false;
    if (!in_paths) continue;
    if (std::regex_match(line, m, kPath)) {
      path = m[1];
    } else if (!path.empty() && std::regex_match(line, m, kMethod)) {
      operations.insert({m[1], path});
    }
  }
  return operations;
}

// The console's static files are not API operations (see the document's `console` tag).
bool IsConsoleAsset(const std::string& pattern) {
  return pattern == "/console" ||
         (pattern.rfind("/console/", 0) == 0 && pattern.rfind("/console/api/", 0) != 0);
}

TEST(OpenApiRoutesTest, DocumentListsEveryRegisteredRouteAndNoOther) {
  testing::TempDir dir;
  config::Config config;
  config.data_dir = dir.File("data");
  config.http.listen = "127.0.0.1:0";
  config.admin.token = "openapi-routes-test-token";
  config.log_level = "warn";
  Result<std::unique_ptr<app::Server>> server = app::Server::Create(config);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  demo::RegisterDemoCreatives((*server)->router());  // as `serve --demo` does

  std::set<Operation> registered;
  for (const http::Router::RouteInfo& route : (*server)->router().Routes()) {
    if (!IsConsoleAsset(route.pattern))
      registered.insert({LowerMethod(route.method), route.pattern});
  }
  std::set<Operation> documented = DocumentedOperations(ADSERVER_OPENAPI_PATH);
  // A route count this low would mean the route table or the document was not read.
  ASSERT_GT(registered.size(), 50u);
  ASSERT_GT(documented.size(), 50u);
  for (const Operation& op : registered) {
    EXPECT_TRUE(documented.contains(op))
        << op.first << " " << op.second << " is served but not in docs/openapi.yaml";
  }
  for (const Operation& op : documented) {
    EXPECT_TRUE(registered.contains(op))
        << op.first << " " << op.second << " is in docs/openapi.yaml but not served";
  }
}

}  // namespace
}  // namespace adserver
