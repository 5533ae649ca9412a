// The TOML configuration: config::LoadConfig on the input written to a file (as `adserver
// serve --config` reads it), then config::Validate; and the same input as the values of the
// ADSERVER_* variables (key rings, listen address, public URL, indexer settings).

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/log.h"
#include "config/config.h"
#include "fuzz_support.h"

namespace adserver::fuzz {
namespace {

std::string& ConfigPath() {
  static std::string path;
  return path;
}

void LoadAndValidate(const std::optional<std::string>& path, const config::Environment& env) {
  Result<config::Config> loaded = config::LoadConfig(path, env);
  if (!loaded.ok()) {
    Expect(loaded.status().code() == Code::kInvalidArgument, "bad config is InvalidArgument");
    return;
  }
  Status valid = config::Validate(*loaded);
  Expect(valid.ok() || valid.code() == Code::kInvalidArgument, "invalid config is InvalidArgument");
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/config_fuzzer.XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) std::abort();
  close(fd);
  adserver::fuzz::ConfigPath() = path;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adserver;
  const std::string& path = fuzz::ConfigPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
  fuzz::LoadAndValidate(path, {});

  std::string text(reinterpret_cast<const char*>(data), size);
  config::Environment env;
  for (const char* name :
       {"ADSERVER_IDENTITY_KEYS", "ADSERVER_EVENTS_KEYS", "ADSERVER_LISTEN", "ADSERVER_PUBLIC_URL",
        "ADSERVER_LOG_LEVEL", "ADSERVER_INDEXER_RPC", "ADSERVER_INDEXER_CONFIRMATIONS"}) {
    env[name] = text;
  }
  fuzz::LoadAndValidate(std::nullopt, env);
  return 0;
}
