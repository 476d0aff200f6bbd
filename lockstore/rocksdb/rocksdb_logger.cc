#include "lockstore/rocksdb/rocksdb_logger.h"

#include <rocksdb/env.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace fencegate::lockstore {
namespace {

class ForwardingLogger final : public rocksdb::Logger {
 public:
  explicit ForwardingLogger(LogSink sink)
      : rocksdb::Logger(rocksdb::InfoLogLevel::ERROR_LEVEL), sink_(std::move(sink)) {}

  // The options dump RocksDB writes on every open: operator noise, not a warning.
  void LogHeader(const char*, va_list) override {}

  // RocksDB filters by GetInfoLogLevel() before calling this overload.
  void Logv(const char* format, va_list ap) override {
    if (!sink_) return;
    char line[1024];
    const int length = std::vsnprintf(line, sizeof line, format, ap);
    if (length < 0) return;
    std::string_view text(line, std::min<std::size_t>(length, sizeof line - 1));
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    sink_(LogSeverity::kError, text);
  }

 private:
  const LogSink sink_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> MakeForwardingLogger(LogSink sink) {
  return std::make_shared<ForwardingLogger>(std::move(sink));
}

}  // namespace fencegate::lockstore
