#pragma once

#include <string>

namespace fencegate::gateway {

// The configuration file's bytes (for its hash and the next reload's diff); false when it cannot
// be read.
bool ReadConfigText(const std::string& path, std::string* text);

// The first 16 hex digits of the SHA-256 of `text`: the `hash` label of fencegate_config_info
// and the config_hash of a reload's answer (`sha256sum FILE | cut -c1-16` gives the same).
std::string ConfigHash(const std::string& text);

}  // namespace fencegate::gateway
