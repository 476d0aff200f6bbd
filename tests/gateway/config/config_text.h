// Shared by the config loader tests: a valid minimal configuration, and loading from text.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"

namespace fencegate::gateway::config_text {

// One filesystem backend and one route to it (9 lines, so errors in appended text have known
// line numbers); tests append or splice lines into it.
inline const std::string kOneFilesRoute =
    "backends:\n"                         // line 1
    "  files:\n"                          // line 2
    "    kind: filesystem\n"              // line 3
    "    root: /srv/files\n"              // line 4
    "routes:\n"                           // line 5
    "  - name: files\n"                   // line 6
    "    prefix: /files/\n"               // line 7
    "    backend: files\n"                // line 8
    "    fence_key: \"files:{path}\"\n";  // line 9

// The path of a readable file for keys the loader opens (certificates, keys, CA bundles): it
// checks that they can be read. Created under the test's temporary directory.
inline std::string ReadableFile(const std::string& name) {
  const std::string path = ::testing::TempDir() + "config_text_" + name;
  std::ofstream(path) << "test\n";
  return path;
}

// Loads `text` as if read from test.yaml, into `config` when given.
inline std::vector<ConfigError> Load(const std::string& text, Config* config = nullptr) {
  Config scratch;
  return LoadConfigText(text, "test.yaml", config != nullptr ? config : &scratch);
}

// Every error on its own line, for failure messages.
inline std::string Dump(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& error : errors) out += error.ToString() + "\n";
  return out;
}

}  // namespace fencegate::gateway::config_text
