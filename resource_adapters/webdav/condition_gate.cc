#include "resource_adapters/webdav/condition_gate.h"

#include <string>

#include <boost/asio/post.hpp>

#include "resource_adapters/webdav/condition_probe.h"

namespace fencegate::adapters::webdav {

namespace {

// Long enough for a backend that was down to come back, short enough for a client to retry.
constexpr std::uint32_t kUnverifiedRetryAfterSeconds = 5;

}  // namespace

ConditionGate::ConditionGate(std::shared_ptr<ConditionBook> book, Prober prober)
    : book_(std::move(book)), prober_(std::move(prober)) {
  // Trusted from the start (checked_unix_ms 0 until the first probe tells what the server
  // supports); otherwise pending until the first probe ends.
  if (trusted()) current_.verdict = ConditionVerdict::kTrusted;
  book_->Record(current_);
  generation_.store(1, std::memory_order_release);
}

bool ConditionGate::trusted() const {
  return book_->options().policy == ConditionProbeOptions::Policy::kTrust;
}

bool ConditionGate::StartOnce(boost::asio::io_context& ioc) {
  if (started_.exchange(true)) return false;
  timer_ = std::make_unique<boost::asio::steady_timer>(ioc);
  {
    const std::lock_guard lock(mutex_);
    ioc_ = &ioc;
    probing_ = true;
  }
  boost::asio::post(ioc, [self = shared_from_this()] { self->Probe(); });
  return true;
}

void ConditionGate::Stop() {
  std::vector<std::pair<boost::asio::any_io_executor, Waiter>> waiters;
  ConditionReport stopping;
  {
    const std::lock_guard lock(mutex_);
    stopped_ = true;
    waiters.swap(waiters_);
    stopping = current_;
  }
  if (timer_) timer_->cancel();
  stopping.verdict = ConditionVerdict::kUnreachable;
  stopping.error = "the gateway is stopping";
  for (auto& [executor, then] : waiters) {
    boost::asio::post(executor, [then = std::move(then), stopping] { then(stopping); });
  }
}

ConditionReport ConditionGate::Current() const {
  const std::lock_guard lock(mutex_);
  return current_;
}

void ConditionGate::WhenProbed(boost::asio::any_io_executor executor, Waiter then) {
  std::unique_lock lock(mutex_);
  if (stopped_) {
    ConditionReport stopping = current_;
    lock.unlock();
    stopping.verdict = ConditionVerdict::kUnreachable;
    stopping.error = "the gateway is stopping";
    boost::asio::post(executor, [then = std::move(then), stopping] { then(stopping); });
    return;
  }
  waiters_.emplace_back(std::move(executor), std::move(then));
  // Before StartOnce, the first probe serves this waiter once it starts.
  if (probing_ || ioc_ == nullptr) return;
  probing_ = true;
  boost::asio::post(*ioc_, [self = shared_from_this()] { self->Probe(); });
}

void ConditionGate::ProbeAgain() {
  {
    const std::lock_guard lock(mutex_);
    if (stopped_ || probing_ || ioc_ == nullptr) return;
    probing_ = true;
  }
  boost::asio::post(*ioc_, [self = shared_from_this()] { self->Probe(); });
}

void ConditionGate::Probe() {
  prober_(*ioc_, [self = shared_from_this()](ConditionReport report) {
    self->OnProbed(std::move(report));
  });
}

void ConditionGate::OnProbed(ConditionReport report) {
  // Under trust the probe only tells which steps the server supports; nothing is refused.
  if (trusted()) report.verdict = ConditionVerdict::kTrusted;
  book_->Record(report);
  std::vector<std::pair<boost::asio::any_io_executor, Waiter>> waiters;
  bool stopped = false;
  {
    const std::lock_guard lock(mutex_);
    current_ = report;
    probing_ = false;
    waiters.swap(waiters_);
    stopped = stopped_;
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  for (auto& [executor, then] : waiters) {
    boost::asio::post(executor, [then = std::move(then), report] { then(report); });
  }
  if (!stopped) ArmTimer();
}

void ConditionGate::ArmTimer() {
  timer_->expires_after(book_->options().interval);
  timer_->async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec) return;
    {
      const std::lock_guard lock(self->mutex_);
      // A write asked for a probe meanwhile: its end re-arms the timer.
      if (self->stopped_ || self->probing_) return;
      self->probing_ = true;
    }
    self->Probe();
  });
}

GateDecision DecideFencedWrite(const ConditionReport& report, std::string_view backend_name,
                               bool waited) {
  GateDecision decision;
  for (const ConditionProbeResult& probe : report.probes) {
    if (probe.name == probe_names::kDeadProperty && !probe.holds) decision.store_tokens = false;
  }
  switch (report.verdict) {
    case ConditionVerdict::kEnforced:
    case ConditionVerdict::kPartial:
      break;
    case ConditionVerdict::kTrusted:
      // The first write waits for the first probe to learn whether the server keeps tokens.
      decision.wait = report.checked_unix_ms == 0 && !waited;
      break;
    case ConditionVerdict::kIgnored:
      decision.refusal =
          Problem{503, "backend-conditions-not-enforced", "Service Unavailable",
                  "webdav backend " + std::string(backend_name) +
                      " does not enforce what fenced writes rely on (failed "
                      "probes: " +
                      report.FailedProbesText() + "); reads are served, fenced writes are refused"};
      break;
    case ConditionVerdict::kPending:
    case ConditionVerdict::kUnreachable:
      if (!waited) {
        decision.wait = true;
        break;
      }
      decision.refusal = Problem{
          503, "backend-conditions-unverified", "Service Unavailable",
          "webdav backend " + std::string(backend_name) +
              " could not be probed for the conditions fenced writes rely on: " + report.error};
      decision.refusal->retry_after = true;
      decision.refusal->retry_after_seconds = kUnverifiedRetryAfterSeconds;
      break;
  }
  return decision;
}

}  // namespace fencegate::adapters::webdav
