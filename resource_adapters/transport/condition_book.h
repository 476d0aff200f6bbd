#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resource_adapters/transport/condition_probe_options.h"

namespace fencegate::adapters {

// What a backend (or one of its s3 buckets) was found to do with the conditions a fenced write
// relies on.
enum class ConditionVerdict {
  kPending,      // not probed yet (or the first probe is running)
  kEnforced,     // every probed behaviour holds
  kPartial,      // the behaviours fenced writes need hold; some others (named) do not
  kIgnored,      // a behaviour fenced writes need does not hold: no fenced writes (verify)
  kUnreachable,  // the probe could not reach the backend, or it answered unexpectedly
  kTrusted,      // policy trust: not probed
};

std::string_view ConditionVerdictName(ConditionVerdict verdict);

// One probed behaviour, e.g. {"put-if-match-wrong-etag", false, "PUT answered 200, not 412"}.
struct ConditionProbeResult {
  std::string name;
  bool holds = false;
  // Whether fenced writes need it: a required behaviour that does not hold makes the verdict
  // kIgnored; an optional one kPartial (the adapter then takes a path that does not rely on it).
  bool required = true;
  std::string detail;
  // Set when the probe failed on an earlier run and held on the run the verdict was taken from:
  // that run's detail. A server that loses state under concurrent requests (Apache mod_dav_fs
  // drops lock entries of other resources, docs/BACKEND_TRUST.md) shows here, not as a verdict.
  std::string earlier_failure{};
};

// The verdict of one scope: an s3 bucket, or "" for a backend probed as a whole (webdav).
struct ConditionReport {
  std::string scope{};
  ConditionVerdict verdict = ConditionVerdict::kPending;
  std::vector<ConditionProbeResult> probes{};
  std::string error{};               // kUnreachable: why
  std::int64_t checked_unix_ms = 0;  // 0: not yet
  // The verdict from the probes' results: kIgnored if a required one fails, kPartial if an
  // optional one fails, else kEnforced. (kUnreachable and kTrusted are set by the prober.)
  static ConditionVerdict FromProbes(const std::vector<ConditionProbeResult>& probes);
  // The first failed probe, for a refusal's detail ("put-if-match-wrong-etag: ...").
  std::string FailedProbesText() const;
};

// The verdicts of one backend, shared by its per-thread adapters and read by the admin thread
// (/readyz, /admin/backends, metrics, and the log line when a verdict changes). Thread-safe;
// touched only when a probe finishes or a scope is first seen on a thread, never per request
// (threads keep their own copy of a verdict once it is final).
class ConditionBook {
 public:
  ConditionBook(std::string backend_name, ConditionProbeOptions options);

  const std::string& backend_name() const { return backend_name_; }
  const ConditionProbeOptions& options() const { return options_; }

  // Records a probe's outcome for report.scope (replacing the previous one); logs a changed
  // verdict.
  void Record(ConditionReport report);
  std::optional<ConditionReport> Find(std::string_view scope) const;
  std::vector<ConditionReport> Reports() const;  // ordered by scope

 private:
  const std::string backend_name_;
  const ConditionProbeOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, ConditionReport, std::less<>> reports_;
};

}  // namespace fencegate::adapters
