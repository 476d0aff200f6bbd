#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "resource_adapters/adapter.h"
#include "resource_adapters/transport/condition_book.h"

namespace fencegate::adapters::s3 {

// Why a probe got no answer at all (no connection, TLS refused, no usable server): a write
// refused for it is answered as a write that met the same failure would be.
struct ProbeConnectFailure {
  std::optional<Problem> problem;  // no usable server, the backend's limits
  bool connect_failed = false;     // counted as a connect error
  bool tls_failed = false;
  boost::system::error_code ec;
  std::string_view server_url;  // the configured url: lives as long as the configuration
};

// What one probe run of a bucket found. `bucket_missing`: the backend answered the scratch PUT
// with 404 (no such bucket): the report says so, but it is not worth a verdict of its own.
struct BucketProbe {
  ConditionReport report;
  bool bucket_missing = false;
  std::optional<ProbeConnectFailure> connect_failure;
};

// One fenced write (or a scheduled re-probe) waiting for a bucket's probe on its own network
// thread: the prober posts the report there and cancels the timer.
struct ProbeWait {
  explicit ProbeWait(boost::asio::io_context& ioc)
      : timer(ioc, boost::asio::steady_timer::time_point::max()) {}
  boost::asio::steady_timer timer;
  std::optional<BucketProbe> probe;
};

// The condition verdicts of one s3 backend's buckets, shared by its network threads: the
// ConditionBook (read by the admin thread), which bucket probes are running and who waits for
// them, and a generation that changes with every recorded verdict so that each thread knows when
// its own copies are out of date. Thread-safe. Touched when a thread meets a bucket it has no
// final verdict for and when a probe ends, never per request.
class BucketConditions {
 public:
  // Policy trust: one report "trusted" for scope "", no probes. Verify: the buckets the options
  // name are "pending" until their first probe ends.
  BucketConditions(std::string backend_name, ConditionProbeOptions options);

  const std::shared_ptr<ConditionBook>& book() const { return book_; }
  const ConditionProbeOptions& options() const { return book_->options(); }
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Registers `wait` (on `executor`'s thread; none for a scheduled re-probe) for the next
  // verdict of `bucket`. True when no probe of it runs: the caller must start one and hand its
  // outcome to Finish. False: it joined the one running.
  bool Join(const std::string& bucket, boost::asio::any_io_executor executor,
            std::weak_ptr<ProbeWait> wait);
  // Records the probe's report (unless the bucket does not exist: no verdict for a name a
  // client made up) and wakes everyone waiting for it.
  void Finish(const std::string& bucket, BucketProbe probe);

  // The scopes that have a verdict: the buckets re-probed on the interval.
  std::vector<std::string> Scopes() const;

  // True for the first caller only: the one whose thread runs the start and interval probes.
  bool ClaimSchedule() { return !schedule_claimed_.exchange(true); }
  // How the schedule is asked to probe every bucket now (set once it runs).
  void SetProbeAgain(std::function<void()> probe_again);
  // A reload kept the backend: probe every bucket again, as a new backend would at start. Any
  // thread; nothing until the schedule runs (it probes at its start anyway).
  void ProbeAgain() const;

 private:
  struct Waiter {
    boost::asio::any_io_executor executor;
    std::weak_ptr<ProbeWait> wait;
  };

  const std::shared_ptr<ConditionBook> book_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> schedule_claimed_{false};
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<Waiter>, std::less<>> running_;  // bucket -> its waiters
  std::function<void()> probe_again_;
};

// A report of `scope` with `verdict` and no probes (pending, trusted, unreachable).
ConditionReport ScopeReport(std::string scope, ConditionVerdict verdict, std::string error = {});

// What a fenced write needs of its bucket's verdict.
struct BucketGate {
  ConditionVerdict verdict = ConditionVerdict::kPending;
  // Whether the backend honours conditions on a copy's destination (S3Exchange's flag of the
  // same name). DELETE conditions are probed and reported, but no write depends on them: a
  // fenced DELETE is a tombstone PUT on every backend.
  bool copy_destination_conditions = false;
  std::string failed_probes;  // kIgnored: for the refusal's detail
};

// One network thread's copies of the final verdicts (enforced, partial, ignored, trusted), so
// a fenced write reads its bucket's verdict without a lock: one atomic load (the shared
// generation) and a map lookup. Used only from its thread.
class BucketGates {
 public:
  explicit BucketGates(std::shared_ptr<BucketConditions> conditions)
      : conditions_(std::move(conditions)) {}

  BucketConditions& conditions() const { return *conditions_; }
  const std::shared_ptr<BucketConditions>& shared_conditions() const { return conditions_; }

  // The final verdict of `bucket` (policy trust: always "trusted"), or null when there is none
  // yet, or the last probe found the backend unreachable: the write must wait for a probe. The
  // pointer is valid until the next call.
  const BucketGate* Find(const std::string& bucket);

 private:
  std::shared_ptr<BucketConditions> conditions_;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::string, BucketGate> gates_;
  std::optional<BucketGate> trusted_;
};

// The gate a final report gives; nullopt for a verdict that is not final (pending, unreachable).
std::optional<BucketGate> GateFromReport(const ConditionReport& report);

}  // namespace fencegate::adapters::s3
