#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "resource_adapters/transport/condition_probe_options.h"
#include "resource_adapters/transport/upstream_options.h"

namespace fencegate::adapters {

// How the ETag of an If-Match condition is written. S3 and MinIO take the quoted form RFC 9110
// prescribes; Ceph radosgw 16 matches only the bare hex ("unquoted"). "auto" starts quoted and
// switches the backend to unquoted once a 412 comes back for an ETag that a fresh HEAD still
// reports unchanged.
enum class EtagQuoting { kQuoted, kUnquoted, kAuto };

// The s3 backend kind. The endpoint is path-style (http[s]://HOST:PORT), in UpstreamOptions
// with the other connection settings.
struct S3AdapterOptions : UpstreamOptions {
  // An s3 backend has no default endpoint, keeps fewer idle connections, and closes an idle
  // one below the backend's own keep-alive timeout (radosgw's beast frontend 65 s), so that it
  // is the gateway that closes.
  S3AdapterOptions() {
    host.clear();
    port = 0;
    max_idle_connections = 16;
    idle_timeout = std::chrono::milliseconds(15000);
  }
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
  EtagQuoting etag_quoting = EtagQuoting::kAuto;
  // Request bodies are held in memory so that a conditional write can be sent again after a
  // 412; larger bodies are streamed in one attempt. Also the largest source a fenced CopyObject
  // copies as GET + conditional PUT (buckets that ignore conditions on a copy's destination);
  // a larger source is refused with 413.
  std::size_t max_spool_bytes = 64u << 20;
  // Conditional writes sent again after a 412 from a concurrent writer, before 503.
  unsigned max_retries = 8;
  // Object versions (ETag and token) remembered per network thread, so that a write can be
  // sent conditionally without a HEAD first. Off by default: ETags are content hashes, so a
  // newer holder that stores the bytes already there leaves the ETag unchanged, and a write on
  // a remembered ETag from before it would pass (README "S3 backends"). Safe only where no two
  // fenced writes of one key carry identical bytes (e.g. bodies that embed their token).
  std::size_t version_cache_entries = 0;
  // Whether the buckets honour the conditions fenced writes rely on (docs/BACKEND_TRUST.md).
  ConditionProbeOptions conditions;
};

}  // namespace fencegate::adapters
