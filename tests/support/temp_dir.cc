#include "support/temp_dir.h"

#include <stdlib.h>

#include <system_error>

namespace adserver::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "adserver-test-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  path_ = made ? std::filesystem::path(made) : std::filesystem::path(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace adserver::testing
