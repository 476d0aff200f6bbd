#include "tests/s3/direct_probe.h"

#include <chrono>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "resource_adapters/s3/s3_adapter.h"

namespace fencegate::integration {

adapters::ConditionReport ProbeBucketDirectly(std::uint16_t port, const std::string& access_key,
                                              const std::string& secret_key,
                                              const std::string& bucket) {
  adapters::S3AdapterOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.access_key = access_key;
  options.secret_key = secret_key;
  options.conditions.buckets = {bucket};
  options.conditions.interval = std::chrono::milliseconds(0);  // once
  std::string error;
  std::unique_ptr<adapters::AdapterFactory> factory =
      adapters::MakeS3AdapterFactory(options, &error);
  if (!factory) {
    adapters::ConditionReport failed;
    failed.scope = bucket;
    failed.error = error;
    return failed;
  }
  boost::asio::io_context ioc;
  std::unique_ptr<adapters::ResourceAdapter> adapter = factory->CreateForThread(ioc);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  adapters::ConditionReport report;
  // Until the probe that started with the adapter reports (a state, not a time).
  while (std::chrono::steady_clock::now() < limit) {
    report = factory->condition_book()->Find(bucket).value_or(report);
    if (report.verdict != adapters::ConditionVerdict::kPending) break;
    ioc.restart();
    ioc.run_one_for(std::chrono::milliseconds(50));
  }
  adapter->Shutdown();
  return report;
}

std::string DescribeReport(const adapters::ConditionReport& report) {
  std::string text = std::string(adapters::ConditionVerdictName(report.verdict));
  if (!report.error.empty()) text += " (" + report.error + ")";
  for (const adapters::ConditionProbeResult& probe : report.probes) {
    text += "; " + probe.name + (probe.required ? " [required]" : " [optional]") + " " +
            (probe.holds ? "holds" : "does not hold") + ": " + probe.detail;
  }
  return text;
}

}  // namespace fencegate::integration
