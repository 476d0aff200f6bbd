#pragma once

#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "resource_adapters/s3/bucket_conditions.h"
#include "resource_adapters/s3/s3_exchange.h"
#include "resource_adapters/transport/condition_book.h"

namespace fencegate::adapters::s3 {

// Probes in `bucket`, on scratch objects under the backend's probe prefix (unique to this run,
// deleted afterwards), whether the backend enforces the conditions fenced writes rely on
// (docs/BACKEND_TRUST.md "S3"): required put-if-none-match-existing and put-if-match-wrong-etag,
// optional delete-if-match-wrong-etag and copy-destination-if-match-wrong-etag. On the way it
// checks that If-Match with the object's current ETag is accepted, and under etag_quoting auto
// learns from it whether the backend wants the ETag bare (radosgw). An answer that is neither
// "refused" (412) nor "done" (2xx), or no answer, makes the verdict kUnreachable.
boost::asio::awaitable<BucketProbe> ProbeBucket(boost::asio::io_context& ioc,
                                                std::shared_ptr<Backend> backend,
                                                std::shared_ptr<ServerConnectionPools> pools,
                                                std::string bucket);

}  // namespace fencegate::adapters::s3
