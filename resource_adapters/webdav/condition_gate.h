#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "resource_adapters/adapter.h"
#include "resource_adapters/transport/condition_book.h"

namespace fencegate::adapters::webdav {

// The condition verdict of one webdav backend (scope ""), shared by its per-thread adapters.
// Probed on the first network thread that starts it, at once and every interval. Policy
// verify: a fenced write that finds no usable verdict (pending, unreachable) waits for the
// next probe's, and concurrent ones share that probe. Policy trust: the report stays kTrusted
// and nothing is refused; the probes only tell which steps the server supports (a server
// without PROPPATCH gets fenced writes without stored tokens), and only the first write waits
// for the first of them. Every report goes to the ConditionBook. Threads read generation() (one
// atomic load) and copy the report only when it changed, so a fenced write takes no lock once a
// verdict is final.
class ConditionGate : public std::enable_shared_from_this<ConditionGate> {
 public:
  // Runs one probe on `ioc` and calls `done` with its report, on that io_context.
  using Prober =
      std::function<void(boost::asio::io_context& ioc, std::function<void(ConditionReport)> done)>;
  using Waiter = std::function<void(const ConditionReport&)>;

  ConditionGate(std::shared_ptr<ConditionBook> book, Prober prober);

  // Starts the probes on `ioc` for the first caller (true; it calls Stop on that thread later),
  // false for every later one.
  bool StartOnce(boost::asio::io_context& ioc);
  // Stops the periodic probes; waiters get an unreachable report. On the thread of StartOnce.
  void Stop();

  // Changes whenever a probe records a report.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  ConditionReport Current() const;

  // Probes now (a reload that kept the backend), unless a probe is running or none has started.
  void ProbeAgain();

  // Calls `then` on `executor` with the next probe's report (starting one unless one is
  // running), for a write that found the verdict pending or unreachable.
  void WhenProbed(boost::asio::any_io_executor executor, Waiter then);

 private:
  bool trusted() const;
  void Probe();  // on the probing thread
  void OnProbed(ConditionReport report);
  void ArmTimer();

  const std::shared_ptr<ConditionBook> book_;
  const Prober prober_;
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> generation_{0};
  std::unique_ptr<boost::asio::steady_timer> timer_;  // on the probing thread

  mutable std::mutex mutex_;  // guards what follows
  boost::asio::io_context* ioc_ = nullptr;
  ConditionReport current_;
  bool probing_ = false;
  bool stopped_ = false;
  std::vector<std::pair<boost::asio::any_io_executor, Waiter>> waiters_;
};

// What a fenced write does with a verdict: go on (no refusal, !wait), wait for the next probe
// (wait), or be refused with the problem: 503 backend-conditions-not-enforced when ignored,
// 503 backend-conditions-unverified (Retry-After) when unreachable and `waited` already.
// Trusted: go on, after waiting once for the first probe.
struct GateDecision {
  bool wait = false;
  std::optional<Problem> refusal;
  // False when the probe found PROPPATCH not kept (trust only: verify refuses such a server):
  // the write is fenced by its LOCK and the gateway's own check, with no token at the server.
  bool store_tokens = true;
};
GateDecision DecideFencedWrite(const ConditionReport& report, std::string_view backend_name,
                               bool waited);

}  // namespace fencegate::adapters::webdav
