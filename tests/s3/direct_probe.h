#pragma once

#include <cstdint>
#include <string>

#include "resource_adapters/transport/condition_book.h"

namespace fencegate::integration {

// Runs the s3 adapter's condition probe of `bucket` once against a real server on
// 127.0.0.1:`port` (the bucket configured as probe_buckets, so probed at start) and returns its
// report: what the server was found to do, for the tests' assertions and their output.
adapters::ConditionReport ProbeBucketDirectly(std::uint16_t port, const std::string& access_key,
                                              const std::string& secret_key,
                                              const std::string& bucket);

// "put-if-match-wrong-etag=holds (refused with 412); ..." for the test log.
std::string DescribeReport(const adapters::ConditionReport& report);

}  // namespace fencegate::integration
