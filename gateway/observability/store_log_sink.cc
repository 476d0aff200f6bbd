#include "gateway/observability/store_log_sink.h"

#include "base/log/event_log.h"

namespace fencegate::gateway {

lockstore::LogSink StoreEventLogSink() {
  return [](lockstore::LogSeverity severity, std::string_view line) {
    switch (severity) {
      case lockstore::LogSeverity::kInfo:
        log::Info(line);
        return;
      case lockstore::LogSeverity::kWarning:
        log::Warn(line);
        return;
      case lockstore::LogSeverity::kError:
        log::Error(line);
        return;
    }
  };
}

}  // namespace fencegate::gateway
