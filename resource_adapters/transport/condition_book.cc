#include "resource_adapters/transport/condition_book.h"

#include <utility>

#include "base/log/event_log.h"

namespace fencegate::adapters {

std::string_view ConditionVerdictName(ConditionVerdict verdict) {
  switch (verdict) {
    case ConditionVerdict::kPending:
      return "pending";
    case ConditionVerdict::kEnforced:
      return "enforced";
    case ConditionVerdict::kPartial:
      return "partial";
    case ConditionVerdict::kIgnored:
      return "ignored";
    case ConditionVerdict::kUnreachable:
      return "unreachable";
    case ConditionVerdict::kTrusted:
      return "trusted";
  }
  return "pending";
}

ConditionVerdict ConditionReport::FromProbes(const std::vector<ConditionProbeResult>& probes) {
  ConditionVerdict verdict = ConditionVerdict::kEnforced;
  for (const ConditionProbeResult& probe : probes) {
    if (probe.holds) continue;
    if (probe.required) return ConditionVerdict::kIgnored;
    verdict = ConditionVerdict::kPartial;
  }
  return verdict;
}

std::string ConditionReport::FailedProbesText() const {
  std::string text;
  for (const ConditionProbeResult& probe : probes) {
    if (probe.holds) continue;
    if (!text.empty()) text += "; ";
    text += probe.name;
    if (!probe.detail.empty()) text += ": " + probe.detail;
  }
  if (text.empty()) text = error;
  return text;
}

ConditionBook::ConditionBook(std::string backend_name, ConditionProbeOptions options)
    : backend_name_(std::move(backend_name)), options_(std::move(options)) {}

namespace {

// The operator's line when a scope's verdict changes: a warning unless all is well.
void LogVerdictChange(const std::string& backend, const ConditionReport& report) {
  const std::string verdict(ConditionVerdictName(report.verdict));
  const std::string scope = report.scope.empty() ? "" : " bucket '" + report.scope + "'";
  const bool fine =
      report.verdict == ConditionVerdict::kEnforced || report.verdict == ConditionVerdict::kPending;
  const std::string message = "backend '" + backend + "'" + scope + ": conditions " + verdict +
                              (fine ? "" : ": " + report.FailedProbesText());
  if (fine) {
    log::Info(message, {{"backend", backend}, {"scope", report.scope}, {"verdict", verdict}});
  } else {
    log::Warn(message, {{"backend", backend}, {"scope", report.scope}, {"verdict", verdict}});
  }
}

// Every probe that failed once and then held is worth a line each time, verdict changed or not.
void LogEarlierFailures(const std::string& backend, const ConditionReport& report) {
  for (const ConditionProbeResult& probe : report.probes) {
    if (probe.earlier_failure.empty()) continue;
    log::Warn("backend '" + backend + "': probe " + probe.name +
                  " failed on one run and held on the next: " + probe.earlier_failure,
              {{"backend", backend}, {"scope", report.scope}, {"probe", probe.name}});
  }
}

}  // namespace

void ConditionBook::Record(ConditionReport report) {
  LogEarlierFailures(backend_name_, report);
  bool changed = false;
  {
    const std::lock_guard lock(mutex_);
    const auto it = reports_.find(report.scope);
    changed = it == reports_.end() || it->second.verdict != report.verdict;
    reports_.insert_or_assign(report.scope, report);
  }
  if (changed) LogVerdictChange(backend_name_, report);
}

std::optional<ConditionReport> ConditionBook::Find(std::string_view scope) const {
  const std::lock_guard lock(mutex_);
  const auto it = reports_.find(scope);
  if (it == reports_.end()) return std::nullopt;
  return it->second;
}

std::vector<ConditionReport> ConditionBook::Reports() const {
  const std::lock_guard lock(mutex_);
  std::vector<ConditionReport> out;
  out.reserve(reports_.size());
  for (const auto& [scope, report] : reports_) out.push_back(report);
  return out;
}

}  // namespace fencegate::adapters
