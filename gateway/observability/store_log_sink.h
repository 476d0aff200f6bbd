#pragma once

#include "lockstore/log_sink.h"

namespace fencegate::gateway {

// The lockstore's lines (store failures and recoveries, RocksDB's errors, shard ownership) as
// events of the process's event log, at their severity.
lockstore::LogSink StoreEventLogSink();

}  // namespace fencegate::gateway
