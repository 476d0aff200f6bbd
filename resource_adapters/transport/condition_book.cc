#include "resource_adapters/transport/condition_book.h"

#include <utility>

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

void ConditionBook::Record(ConditionReport report) {
  const std::lock_guard lock(mutex_);
  reports_.insert_or_assign(report.scope, std::move(report));
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
