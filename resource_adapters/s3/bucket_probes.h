#pragma once

#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "resource_adapters/s3/bucket_conditions.h"
#include "resource_adapters/s3/s3_exchange.h"

namespace fencegate::adapters::s3 {

// What a network thread's probes use: the backend, the thread's connection pools and the
// backend's shared verdicts.
struct ProbeContext {
  boost::asio::io_context& ioc;
  std::shared_ptr<Backend> backend;
  std::shared_ptr<ServerConnectionPools> pools;
  std::shared_ptr<BucketConditions> conditions;
};

// The next verdict of `bucket`: joins the probe of it that runs (on any thread), or starts one
// on this thread. Every fenced write that finds no final verdict waits here, so concurrent first
// writes to a bucket share one probe.
boost::asio::awaitable<BucketProbe> AwaitBucketProbe(ProbeContext context, std::string bucket);

// The start and interval probes of a backend (policy verify), run on the thread of the first
// adapter: the configured buckets at once, then every bucket with a verdict every interval and
// whenever BucketConditions::ProbeAgain is called (a reload that keeps the backend). Stop() ends
// it (on that thread).
class ProbeSchedule {
 public:
  static std::shared_ptr<ProbeSchedule> Start(ProbeContext context);
  void Stop();

 private:
  // From any thread: the schedule's thread probes every bucket now.
  static void ProbeAgain(const std::weak_ptr<ProbeSchedule>& schedule);
  explicit ProbeSchedule(boost::asio::io_context& ioc) : timer_(ioc) {}
  static boost::asio::awaitable<void> Run(std::shared_ptr<ProbeSchedule> self,
                                          ProbeContext context);

  boost::asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace fencegate::adapters::s3
