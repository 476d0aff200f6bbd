#include "resource_adapters/s3/bucket_conditions.h"

#include <utility>

#include <boost/asio/post.hpp>

namespace fencegate::adapters::s3 {

namespace {

bool ProbeHolds(const ConditionReport& report, std::string_view name) {
  for (const ConditionProbeResult& probe : report.probes) {
    if (probe.name == name) return probe.holds;
  }
  return false;
}

}  // namespace

ConditionReport ScopeReport(std::string scope, ConditionVerdict verdict, std::string error) {
  ConditionReport report;
  report.scope = std::move(scope);
  report.verdict = verdict;
  report.error = std::move(error);
  return report;
}

BucketConditions::BucketConditions(std::string backend_name, ConditionProbeOptions options)
    : book_(std::make_shared<ConditionBook>(std::move(backend_name), std::move(options))) {
  if (book_->options().policy == ConditionProbeOptions::Policy::kTrust) {
    book_->Record(ScopeReport("", ConditionVerdict::kTrusted));
    return;
  }
  for (const std::string& bucket : book_->options().buckets) {
    book_->Record(ScopeReport(bucket, ConditionVerdict::kPending));
  }
}

bool BucketConditions::Join(const std::string& bucket, boost::asio::any_io_executor executor,
                            std::weak_ptr<ProbeWait> wait) {
  const std::lock_guard lock(mutex_);
  auto [it, inserted] = running_.try_emplace(bucket);
  if (executor) it->second.push_back(Waiter{std::move(executor), std::move(wait)});
  return inserted;
}

void BucketConditions::Finish(const std::string& bucket, BucketProbe probe) {
  std::vector<Waiter> waiters;
  {
    const std::lock_guard lock(mutex_);
    if (!probe.bucket_missing) {
      book_->Record(probe.report);
      generation_.fetch_add(1, std::memory_order_release);
    }
    const auto it = running_.find(bucket);
    if (it != running_.end()) {
      waiters = std::move(it->second);
      running_.erase(it);
    }
  }
  for (Waiter& waiter : waiters) {
    boost::asio::post(waiter.executor, [wait = std::move(waiter.wait), probe] {
      if (const std::shared_ptr<ProbeWait> alive = wait.lock()) {
        alive->probe = probe;
        alive->timer.cancel();
      }
    });
  }
}

void BucketConditions::SetProbeAgain(std::function<void()> probe_again) {
  const std::lock_guard lock(mutex_);
  probe_again_ = std::move(probe_again);
}

void BucketConditions::ProbeAgain() const {
  std::function<void()> probe_again;
  {
    const std::lock_guard lock(mutex_);
    probe_again = probe_again_;
  }
  if (probe_again) probe_again();
}

std::vector<std::string> BucketConditions::Scopes() const {
  std::vector<std::string> scopes;
  for (const ConditionReport& report : book_->Reports()) scopes.push_back(report.scope);
  return scopes;
}

std::optional<BucketGate> GateFromReport(const ConditionReport& report) {
  switch (report.verdict) {
    case ConditionVerdict::kEnforced:
    case ConditionVerdict::kPartial:
    case ConditionVerdict::kIgnored:
    case ConditionVerdict::kTrusted:
      break;
    case ConditionVerdict::kPending:
    case ConditionVerdict::kUnreachable:
      return std::nullopt;
  }
  BucketGate gate;
  gate.verdict = report.verdict;
  gate.copy_destination_conditions = ProbeHolds(report, "copy-destination-if-match-wrong-etag");
  if (report.verdict == ConditionVerdict::kIgnored) gate.failed_probes = report.FailedProbesText();
  return gate;
}

const BucketGate* BucketGates::Find(const std::string& bucket) {
  if (conditions_->options().policy == ConditionProbeOptions::Policy::kTrust) {
    // Not probed: the paths that need only conditional PUT (the optional flags stay false).
    if (!trusted_) {
      trusted_.emplace();
      trusted_->verdict = ConditionVerdict::kTrusted;
    }
    return &*trusted_;
  }
  const std::uint64_t generation = conditions_->generation();
  if (generation != generation_) {
    gates_.clear();
    generation_ = generation;
  }
  if (const auto it = gates_.find(bucket); it != gates_.end()) return &it->second;
  const std::optional<ConditionReport> report = conditions_->book()->Find(bucket);
  if (!report) return nullptr;
  std::optional<BucketGate> gate = GateFromReport(*report);
  if (!gate) return nullptr;
  return &gates_.insert_or_assign(bucket, std::move(*gate)).first->second;
}

}  // namespace fencegate::adapters::s3
