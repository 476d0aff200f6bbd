// Fuzzes the configuration loader with arbitrary YAML, from a buffer and from a file. Every
// problem must come back as a located ConfigError value (never an exception or a crash), a
// refused file must leave the caller's Config untouched, and an accepted one must satisfy the
// invariants the gateway relies on without checking again.

#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gateway/config/config_loader.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::gateway::Config;
using fencegate::gateway::ConfigError;

constexpr const char* kUntouched = "untouched by a refused load";

void CheckErrors(const std::vector<ConfigError>& errors, const std::string& file) {
  for (std::size_t i = 0; i < errors.size(); ++i) {
    FUZZ_CHECK(errors[i].file == file);
    FUZZ_CHECK(!errors[i].message.empty());
    FUZZ_CHECK(errors[i].line >= 0 && errors[i].column >= 0);
    FUZZ_CHECK(errors[i].ToString().starts_with(file));
    if (i > 0) {
      FUZZ_CHECK(std::tie(errors[i - 1].line, errors[i - 1].column) <=
                 std::tie(errors[i].line, errors[i].column));
    }
  }
}

void CheckAccepted(const Config& config, const std::string& file) {
  FUZZ_CHECK(config.source_path == file);
  FUZZ_CHECK(!config.data_dir.empty());
  FUZZ_CHECK(config.threads <= 1024);
  FUZZ_CHECK(!config.routes.empty());
  std::set<std::string> names;
  for (const auto& route : config.routes) {
    FUZZ_CHECK(!route.name.empty() && names.insert(route.name).second);
    FUZZ_CHECK(route.prefix.starts_with('/'));
    FUZZ_CHECK(config.backends.count(route.backend) == 1);
    FUZZ_CHECK(!route.fence_key.source().empty());
  }
  for (const auto& [name, backend] : config.backends) {
    FUZZ_CHECK(!name.empty() && backend.name == name);
    FUZZ_CHECK(backend.kind == "http" || backend.kind == "filesystem");
  }
}

// The file the same text is written to, one per fuzzing process.
const std::string& TempFile() {
  static const std::string path =
      "/tmp/fencegate-config-fuzz-" + std::to_string(::getpid()) + ".yaml";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fencegate::fuzz::AsText(data, size));

  // Named as the file below: relative paths in the text resolve against the file's directory, and
  // an error names the path it resolved to, so both loads must see one directory.
  Config config;
  config.data_dir = kUntouched;
  const std::vector<ConfigError> errors = LoadConfigText(text, TempFile(), &config);
  CheckErrors(errors, TempFile());
  if (errors.empty()) {
    CheckAccepted(config, TempFile());
  } else {
    FUZZ_CHECK(config.data_dir == kUntouched && config.routes.empty());
  }

  // The file loader reads the same bytes and reaches the same verdict.
  std::FILE* file = std::fopen(TempFile().c_str(), "wb");
  FUZZ_CHECK(file != nullptr);
  FUZZ_CHECK(std::fwrite(text.data(), 1, text.size(), file) == text.size());
  FUZZ_CHECK(std::fclose(file) == 0);
  Config from_file;
  const std::vector<ConfigError> file_errors = LoadConfigFile(TempFile(), &from_file);
  std::remove(TempFile().c_str());
  CheckErrors(file_errors, TempFile());
  FUZZ_CHECK(file_errors.size() == errors.size());
  for (std::size_t i = 0; i < errors.size(); ++i) {
    FUZZ_CHECK(std::tie(file_errors[i].line, file_errors[i].column, file_errors[i].key,
                        file_errors[i].message) ==
               std::tie(errors[i].line, errors[i].column, errors[i].key, errors[i].message));
  }
  return 0;
}
