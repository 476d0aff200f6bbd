#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "gateway/config/key_path.h"
#include "gateway/http/http_token.h"
#include "resource_adapters/transport/upstream_options.h"

// The configuration's values, from text: the forms are described at the top of
// gateway/config/config_loader.cc.

namespace fencegate::gateway::config_reading {

// A plain decimal integer that fits 64 bits.
bool ParseDecimal(std::string_view text, std::uint64_t* out);

// A duration with a unit: ms, s, m, h.
bool ParseDuration(std::string_view text, std::chrono::milliseconds* out);

// For waits shorter than a millisecond: units us, ms and s.
bool ParseMicroseconds(std::string_view text, std::chrono::microseconds* out);

// A byte count with an optional unit: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB.
bool ParseSize(std::string_view text, std::uint64_t* out);

// `text` with every "{data_dir}" replaced by `data_dir`.
std::string ExpandDataDir(const std::string& text, const std::string& data_dir);

// `path` made absolute against `base_dir` (itself absolute) and normalized; "" stays "".
std::string ResolveAgainst(const std::string& base_dir, const std::string& path);

// Parses "http://HOST[:PORT][/]" into host and port; returns an error message or "".
std::string ParseBackendUrl(std::string_view url, adapters::UpstreamOptions* out);

}  // namespace fencegate::gateway::config_reading
