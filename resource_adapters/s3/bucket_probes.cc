#include "resource_adapters/s3/bucket_probes.h"

#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "resource_adapters/s3/condition_probe.h"

namespace fencegate::adapters::s3 {

namespace {

namespace asio = boost::asio;

asio::awaitable<void> RunBucketProbe(ProbeContext context, std::string bucket) {
  BucketProbe probe = co_await ProbeBucket(context.ioc, context.backend, context.pools, bucket);
  context.conditions->Finish(bucket, std::move(probe));
}

// Starts a probe of `bucket` unless one runs; `wait` (may be null) gets its report.
void JoinOrStartProbe(const ProbeContext& context, const std::string& bucket,
                      const std::shared_ptr<ProbeWait>& wait) {
  const bool start = context.conditions->Join(
      bucket, wait ? asio::any_io_executor(context.ioc.get_executor()) : asio::any_io_executor(),
      wait);
  if (start) asio::co_spawn(context.ioc, RunBucketProbe(context, bucket), asio::detached);
}

}  // namespace

asio::awaitable<BucketProbe> AwaitBucketProbe(ProbeContext context, std::string bucket) {
  auto wait = std::make_shared<ProbeWait>(context.ioc);
  JoinOrStartProbe(context, bucket, wait);
  // Ends when the prober cancels the timer (with the report set) or the thread shuts down.
  co_await wait->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  if (wait->probe) co_return std::move(*wait->probe);
  BucketProbe unfinished;
  unfinished.report = ScopeReport(bucket, ConditionVerdict::kUnreachable,
                                  "the probe did not finish (shutting down)");
  co_return unfinished;
}

std::shared_ptr<ProbeSchedule> ProbeSchedule::Start(ProbeContext context) {
  std::shared_ptr<ProbeSchedule> schedule(new ProbeSchedule(context.ioc));
  context.conditions->SetProbeAgain(
      [weak = std::weak_ptr<ProbeSchedule>(schedule)] { ProbeAgain(weak); });
  asio::co_spawn(context.ioc, Run(schedule, std::move(context)), asio::detached);
  return schedule;
}

void ProbeSchedule::Stop() {
  stopped_ = true;
  timer_.cancel();
}

asio::awaitable<void> ProbeSchedule::Run(std::shared_ptr<ProbeSchedule> self,
                                         ProbeContext context) {
  const auto interval = context.conditions->options().interval;
  // Every bucket with a verdict (at start: the configured ones, pending), then again each
  // interval or when a reload asks (ProbeAgain cancels the wait). A zero interval: only then.
  while (!self->stopped_) {
    for (const std::string& bucket : context.conditions->Scopes()) {
      JoinOrStartProbe(context, bucket, nullptr);
    }
    if (interval.count() > 0) {
      self->timer_.expires_after(interval);
    } else {
      self->timer_.expires_at(asio::steady_timer::time_point::max());
    }
    co_await self->timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

void ProbeSchedule::ProbeAgain(const std::weak_ptr<ProbeSchedule>& schedule) {
  if (const std::shared_ptr<ProbeSchedule> alive = schedule.lock()) {
    asio::post(alive->timer_.get_executor(), [schedule] {
      if (const std::shared_ptr<ProbeSchedule> still = schedule.lock()) still->timer_.cancel();
    });
  }
}

}  // namespace fencegate::adapters::s3
