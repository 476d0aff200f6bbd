#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "base/tls_client/client_tls.h"

namespace fencegate::adapters {

// How the ETag of an If-Match condition is written. S3 and MinIO take the quoted form RFC 9110
// prescribes; Ceph radosgw 16 matches only the bare hex ("unquoted"). "auto" starts quoted and
// switches the backend to unquoted once a 412 comes back for an ETag that a fresh HEAD still
// reports unchanged.
enum class EtagQuoting { kQuoted, kUnquoted, kAuto };

struct S3AdapterOptions {
  std::string host;  // the S3 endpoint, path-style (http[s]://HOST:PORT)
  std::uint16_t port = 0;
  bool tls = false;  // an https endpoint (README "Transport (TLS)")
  tls_client::ClientTlsOptions tls_options;
  std::string region = "us-east-1";
  std::string access_key;
  std::string secret_key;
  EtagQuoting etag_quoting = EtagQuoting::kAuto;
  // Request bodies are held in memory so that a conditional write can be sent again after a
  // 412; larger bodies are refused with 413 (multipart parts stay below it).
  std::size_t max_spool_bytes = 64u << 20;
  // Conditional writes sent again after a 412 from a concurrent writer, before 503.
  unsigned max_retries = 8;
  // Object versions (ETag and token) remembered per network thread, so that a write can be
  // sent conditionally without a HEAD first. Off by default: ETags are content hashes, so a
  // newer holder that stores the bytes already there leaves the ETag unchanged, and a write on
  // a remembered ETag from before it would pass (README "S3 backends"). Safe only where no two
  // fenced writes of one key carry identical bytes (e.g. bodies that embed their token).
  std::size_t version_cache_entries = 0;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds response_timeout{60000};
  // Keep-alive connections kept idle per network thread for the next backend request.
  std::size_t max_idle_connections = 16;
  // An idle connection older than this is closed instead of reused: below the backend's own
  // keep-alive timeout (radosgw's beast frontend 65 s), so that it is the gateway that closes.
  std::chrono::milliseconds idle_timeout{15000};
};

// The `s3` adapter: re-signs every request with AWS SigV4 and makes fenced writes conditional
// at the backend (README "S3 backends"). Null with `error` set when the TLS files do not load.
std::unique_ptr<AdapterFactory> MakeS3AdapterFactory(S3AdapterOptions options, std::string* error);

}  // namespace fencegate::adapters
