#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "base/net/http_header.h"

#include "resource_adapters/adapter.h"
#include "resource_adapters/s3/bucket_conditions.h"
#include "resource_adapters/s3/s3_adapter.h"
#include "resource_adapters/s3/s3_multi_delete_request.h"
#include "resource_adapters/s3/s3_request.h"
#include "resource_adapters/s3/s3_upstream.h"

namespace fencegate::adapters::s3 {

// What every exchange of one backend shares.
struct Backend {
  S3AdapterOptions options;
  Endpoint endpoint;
  // Set once "auto" quoting found that the backend matches only bare ETags (radosgw).
  std::atomic<bool> unquoted_etags{false};
};

// 412/409: a concurrent writer changed the object. 500/503: radosgw answers racing writes to one
// object with 500 UnknownError (the write was cancelled). Sending the write again is safe in
// every case, because each attempt is conditional on the version seen just before it.
inline bool IsWriteConflict(unsigned status) {
  return status == 412 || status == 409 || status == 500 || status == 503;
}

// `etag` (bare) as an If-Match value in the form the backend matches (etag_quoting).
std::string IfMatchEtag(const Backend& backend, const std::string& etag);

// The versions one network thread last saw, by "bucket/key". Only a hint: a wrong entry costs
// a 412 and a HEAD, never safety, because every write it feeds is conditional.
class VersionCache {
 public:
  explicit VersionCache(std::size_t capacity) : capacity_(capacity) {}
  const ObjectVersion* Find(const std::string& key) const;
  void Put(const std::string& key, ObjectVersion version);
  void Erase(const std::string& key) { versions_.erase(key); }

 private:
  std::size_t capacity_;
  std::unordered_map<std::string, ObjectVersion> versions_;
};

// One network thread's state that its exchanges of a backend share, touched only from that
// thread: the remembered versions and the thread's copies of the buckets' verdicts. An exchange
// holds it through its `cache` (a shared_ptr aliasing `versions`), which keeps `gates` alive as
// long as the exchange runs without a second reference count per request.
struct ThreadState {
  ThreadState(std::size_t version_cache_entries, std::shared_ptr<BucketConditions> conditions)
      : versions(version_cache_entries), gates(std::move(conditions)) {}
  VersionCache versions;
  BucketGates gates;
};

// One client request: parsed, its body spooled, forwarded (as one or more signed backend
// requests) and answered. A coroutine on the network thread; owns itself while it runs.
class S3Exchange : public std::enable_shared_from_this<S3Exchange> {
 public:
  S3Exchange(boost::asio::io_context& ioc, std::shared_ptr<Backend> backend,
             std::shared_ptr<VersionCache> cache, std::shared_ptr<ServerConnectionPools> pools,
             BucketGates& gates, ForwardRequest request, Downstream& downstream,
             ResourceAdapter::DoneHandler done);
  void Start();

 private:
  // What a conditional write stores, which decides how its success is answered.
  enum class WriteKind {
    kObject,     // the client's PUT or CompleteMultipartUpload: the backend's answer is relayed
    kTombstone,  // a fenced DELETE: 204
    kCopy,       // CopyObject under a destination condition: the backend's answer is relayed
    kCopyAsPut,  // CopyObject as GET + PUT: answered with a CopyObjectResult of the PUT
  };

  boost::asio::awaitable<void> Run();
  // A fenced write goes on only once its bucket's verdict (docs/BACKEND_TRUST.md) says the
  // backend enforces what the write relies on: it waits for the bucket's probe when there is no
  // final verdict yet, and is refused (503, false returned) when the backend ignores conditions
  // or cannot be verified. Sets the optional behaviours' flags below.
  boost::asio::awaitable<bool> AwaitConditionsEnforced();
  // Reads a body of up to max_spool_bytes into body_ (replayable); a larger one, whose length
  // must be known, is left unread for one streamed attempt (streamed_length_).
  boost::asio::awaitable<bool> SpoolBody();
  // Sends `header` with the spooled body, or streams the client's body when it was too large.
  // Runs `send` (a call's request, up to its response header) and sets the outcome's upstream
  // time: from the first call's start to this call's response header (a HEAD and its PUT
  // count as one wait on the backend).
  boost::asio::awaitable<boost::system::error_code> Timed(
      boost::asio::awaitable<boost::system::error_code> send);
  boost::asio::awaitable<boost::system::error_code> SendBody(UpstreamCall& call,
                                                             RequestHeader header);
  // Fails the exchange after SendBody failed: the client's side (read error, wrong length) or
  // the backend's.
  void FailSend(const UpstreamCall& call, boost::system::error_code ec);
  // Sends one request and streams its response to the client (the pass-through path).
  boost::asio::awaitable<void> Relay(RequestHeader header);
  // Streams the response of `call` to the client; a tombstone read becomes 404 NoSuchKey.
  boost::asio::awaitable<void> RelayResponse(UpstreamCall& call);
  // The fenced write: conditional on the version seen, retried after 412 (README).
  // A streamed body gets a single attempt: a conflict is refused, not retried.
  boost::asio::awaitable<void> ConditionalWrite(RequestHeader header, WriteKind kind);
  // A fenced CopyObject (s3_copy.cc): the destination gets the presented token and is written
  // under a condition on its own version, as a PUT is.
  boost::asio::awaitable<void> CopyObject();
  // A fenced DeleteObjects (s3_multi_delete.cc): every key admitted at the gateway's fence,
  // the whole request refused when the backend holds a higher token for any key, else a
  // tombstone per key under a condition on its version, answered with S3's DeleteResult.
  boost::asio::awaitable<void> MultiDelete();
  // The gateway's admission of `paths` (ForwardRequest::resource_fence).
  boost::asio::awaitable<ResourceFence::Verdict> AdmitResources(std::vector<std::string> paths);
  // One key's tombstone, written under a condition on `seen` and retried after a conflict as a
  // fenced DELETE is; its failures are the key's, reported in the DeleteResult.
  boost::asio::awaitable<KeyDeleteOutcome> DeleteKey(const std::string& key, ObjectVersion seen);
  // Reads the rest of a copy source's (small) error body and answers `status` with `xml`.
  boost::asio::awaitable<void> AnswerCopyRefusal(UpstreamCall& call, unsigned status,
                                                 std::string xml);
  // HEAD of the object; nullopt (and the exchange finished) when the backend failed.
  boost::asio::awaitable<std::optional<ObjectVersion>> Head();
  // HEAD of the object at `target` (without query), remembered in the cache under `cache_key`.
  // A failure is answered as Head()'s when `finish_on_failure`, else left to the caller.
  boost::asio::awaitable<std::optional<ObjectVersion>> HeadAt(const std::string& target,
                                                              const std::string& cache_key,
                                                              bool finish_on_failure);
  // Refuses the write when the backend holds a higher token; true if it did. An unread streamed
  // body is read and dropped first, so the client gets the answer rather than a reset.
  boost::asio::awaitable<bool> RefuseIfStale(const ObjectVersion& seen);
  // `body` lives in the caller's frame, which stays suspended until this returns.
  boost::asio::awaitable<void> WriteSimpleResponse(unsigned status, std::string_view content_type,
                                                   const std::string& body);

  RequestHeader UpstreamHeader(http::verb method) const;
  std::string IfMatchValue(const std::string& etag) const;
  void FailUpstream(const UpstreamCall& call, boost::system::error_code ec);
  // Fails the exchange when no connection could be had (a call's, or a probe's: a write refused
  // for it is answered as one that met the same failure).
  void FailConnect(const ProbeConnectFailure& failure);
  void Finish(std::optional<Problem> problem);

  boost::asio::io_context& ioc_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<VersionCache> cache_;
  std::shared_ptr<ServerConnectionPools> pools_;
  // In the ThreadState that *cache_ keeps alive.
  BucketGates& gates_;
  const std::string_view fence_key_;
  RequestHeader client_header_;
  std::optional<std::uint64_t> token_;
  Downstream& downstream_;
  ResourceAdapter::DoneHandler done_;
  ResourceFence* resource_fence_;
  S3Request request_;
  std::string cache_key_;
  std::string body_;
  // Set when the body is larger than max_spool_bytes and is streamed instead of spooled.
  std::optional<std::uint64_t> streamed_length_;
  std::uint64_t streamed_bytes_ = 0;
  boost::system::error_code client_read_error_;
  ForwardOutcome outcome_;
  std::optional<std::chrono::steady_clock::time_point> upstream_start_;
  bool finished_ = false;

  // Whether the bucket honours If-Match / If-None-Match on a CopyObject's destination (its
  // condition probe's verdict); set from the bucket's verdict before a fenced operation runs.
  // Without it a fenced copy is written as GET of the source + conditional PUT of the destination.
  // (A DELETE is a tombstone PUT whatever the verdict says of DELETE conditions: a real delete
  // would forget the token.)
  bool copy_destination_conditions_ = false;
};

}  // namespace fencegate::adapters::s3
