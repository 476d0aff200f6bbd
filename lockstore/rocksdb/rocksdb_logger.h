#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "lockstore/log_sink.h"

namespace rocksdb {
class Logger;
}  // namespace rocksdb

namespace fencegate::lockstore {

// RocksDB's info log, forwarded line by line to `sink` from errors upwards (nothing when
// `sink` is empty). Not warnings: while a disk stays full RocksDB warns on every retry, and the
// store already logs the failure and the recovery once each, with the cause.
//
// Why not RocksDB's own LOG file: it lives in the data directory, so it fails exactly when the
// store does (disk full, read-only), and RocksDB's file logger asserts on its next line after a
// failed append, which aborts the process. A full disk must make advances fail closed and then
// recover, never crash the gateway.
std::shared_ptr<rocksdb::Logger> MakeForwardingLogger(LogSink sink);

}  // namespace fencegate::lockstore
