#include "gateway/session/backend_failure_log.h"

#include <chrono>
#include <string>

#include "base/log/event_log.h"
#include "base/log/log_rate_limit.h"
#include "resource_adapters/registry/registry.h"

namespace fencegate::gateway {
namespace {

using Failure = adapters::ForwardOutcome::Failure;

// What the line says, and how bad it is; empty for failures that are not the backend's.
struct FailureText {
  std::string_view msg;
  log::Level level = log::Level::kError;
};

FailureText Describe(Failure failure) {
  switch (failure) {
    case Failure::kUpstreamConnect:
      return {"backend connection failed"};
    case Failure::kUpstreamTimeout:
      return {"backend timed out", log::Level::kWarn};
    case Failure::kUpstreamProtocol:
      return {"backend answered with something that is not HTTP/1.1"};
    case Failure::kBackendIO:
      return {"backend I/O failed"};
    case Failure::kNone:
    case Failure::kClient:
      break;
  }
  return {};
}

}  // namespace

void LogBackendFailure(const BackendConfig& backend, std::string_view route,
                       const adapters::ForwardOutcome& outcome) {
  const FailureText text = Describe(outcome.failure);
  if (text.msg.empty() || !log::ProcessLog().Enabled(text.level)) return;
  static log::LogRateLimit limit;
  const auto second = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  const log::LogRateLimit::Verdict verdict = limit.Admit(backend.name, second);
  if (!verdict.log) return;
  std::string address;
  if (const adapters::BackendKindRow* kind = adapters::FindBackendKind(backend.kind)) {
    if (const adapters::UpstreamOptions* upstream = kind->upstream(backend)) {
      address = upstream->host + ":" + std::to_string(upstream->port);
    }
  }
  log::ProcessLog().Write(text.level, text.msg,
                          {{"backend", backend.name},
                           {"kind", backend.kind},
                           {"address", address},
                           {"route", route},
                           {"error", outcome.error ? outcome.error.message() : std::string()},
                           {"suppressed", verdict.suppressed}});
}

}  // namespace fencegate::gateway
