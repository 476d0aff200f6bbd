#pragma once

#include <functional>
#include <string_view>

namespace fencegate::lockstore {

enum class LogSeverity { kInfo, kWarning, kError };

// Where a store says what happened to it (a failed write, the recovery, RocksDB's own errors,
// shard ownership): the gateway's event log. One line per call, from store threads; lockstore
// never writes to a stream itself. Empty: dropped.
using LogSink = std::function<void(LogSeverity, std::string_view)>;

}  // namespace fencegate::lockstore
