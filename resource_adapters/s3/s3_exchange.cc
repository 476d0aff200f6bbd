#include "resource_adapters/s3/s3_exchange.h"

#include <charconv>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>

#include "resource_adapters/client_token_field.h"
#include "resource_adapters/s3/bucket_probes.h"
#include "resource_adapters/s3/s3_copy_request.h"

namespace fencegate::adapters::s3 {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;
using Failure = ForwardOutcome::Failure;

constexpr std::size_t kRelayPiece = 64 * 1024;
constexpr std::size_t kErrorBodyLimit = 64 * 1024;

// Completion values of the Downstream calls, as one struct so that co_await returns them
// instead of throwing.
struct BodyRead {
  error_code ec;
  std::size_t bytes = 0;
  bool done = false;
};

template <typename Token>
auto AsyncReadBody(Downstream& downstream, asio::mutable_buffer buffer, Token&& token) {
  return asio::async_initiate<Token, void(BodyRead)>(
      [&downstream, buffer](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        downstream.AsyncReadBody(buffer, [shared](error_code ec, std::size_t bytes, bool done) {
          (*shared)(BodyRead{ec, bytes, done});
        });
      },
      token);
}

struct Written {
  error_code ec;
};

template <typename Token>
auto AsyncWriteResponse(Downstream& downstream, ResponseHeader header, asio::const_buffer body,
                        bool last, Token&& token) {
  return asio::async_initiate<Token, void(Written)>(
      [&downstream, body, last](auto handler, ResponseHeader header) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        downstream.AsyncWriteResponse(std::move(header), body, last,
                                      [shared](error_code ec) { (*shared)(Written{ec}); });
      },
      token, std::move(header));
}

template <typename Token>
auto AsyncWriteBody(Downstream& downstream, asio::const_buffer body, bool last, Token&& token) {
  return asio::async_initiate<Token, void(Written)>(
      [&downstream, body, last](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        downstream.AsyncWriteBody(body, last, [shared](error_code ec) { (*shared)(Written{ec}); });
      },
      token);
}

// The backend's response header as the client gets it: framing is chosen by the gateway.
ResponseHeader ClientHeader(const ResponseHeader& backend) {
  ResponseHeader header = backend;
  header.erase(http::field::connection);
  header.erase(http::field::keep_alive);
  header.erase(http::field::transfer_encoding);
  header.erase(kTombstoneMeta);
  return header;
}

// The operations whose fencing rests on the backend's conditions: writes of an object's content
// and the steps of a multipart upload that ends in one. Bucket-level requests and aborts are not.
bool ReliesOnConditions(Operation operation) {
  switch (operation) {
    case Operation::kPutObject:
    case Operation::kDeleteObject:
    case Operation::kCreateMultipart:
    case Operation::kUploadPart:
    case Operation::kCompleteMultipart:
    case Operation::kMultiDelete:
      return true;
    case Operation::kRead:
    case Operation::kAbortMultipart:
    case Operation::kOther:
      return false;
  }
  return true;
}

}  // namespace

std::string IfMatchEtag(const Backend& backend, const std::string& etag) {
  const bool quoted =
      backend.options.etag_quoting == EtagQuoting::kQuoted ||
      (backend.options.etag_quoting == EtagQuoting::kAuto && !backend.unquoted_etags);
  return quoted ? "\"" + etag + "\"" : etag;
}

const ObjectVersion* VersionCache::Find(const std::string& key) const {
  const auto it = versions_.find(key);
  return it == versions_.end() ? nullptr : &it->second;
}

void VersionCache::Put(const std::string& key, ObjectVersion version) {
  if (capacity_ == 0) return;
  // Wholesale forgetting is enough for a hint: the next write of each key pays one HEAD.
  if (versions_.size() >= capacity_ && versions_.find(key) == versions_.end()) versions_.clear();
  versions_[key] = std::move(version);
}

S3Exchange::S3Exchange(asio::io_context& ioc, std::shared_ptr<Backend> backend,
                       std::shared_ptr<VersionCache> cache,
                       std::shared_ptr<ServerConnectionPools> pools, BucketGates& gates,
                       ForwardRequest request, Downstream& downstream,
                       ResourceAdapter::DoneHandler done)
    : ioc_(ioc),
      backend_(std::move(backend)),
      cache_(std::move(cache)),
      pools_(std::move(pools)),
      gates_(gates),
      fence_key_(request.fence_key),
      client_header_(*request.header),
      token_(request.fencing_token),
      downstream_(downstream),
      done_(std::move(done)),
      resource_fence_(request.resource_fence) {}

void S3Exchange::Start() {
  asio::co_spawn(ioc_, Run(), [self = shared_from_this()](std::exception_ptr failure) {
    // Only allocation failures can throw in Run: answer rather than leave the client waiting.
    if (failure && !self->finished_) {
      self->Finish(Problem{500, "internal-error", "Internal error", "the s3 adapter failed"});
    }
  });
}

void S3Exchange::Finish(std::optional<Problem> problem) {
  if (finished_) return;
  finished_ = true;
  if (!outcome_.response_started) outcome_.problem = std::move(problem);
  auto done = std::move(done_);
  done(std::move(outcome_));
}

asio::awaitable<error_code> S3Exchange::Timed(asio::awaitable<error_code> send) {
  if (!upstream_start_) upstream_start_ = std::chrono::steady_clock::now();
  const error_code ec = co_await std::move(send);
  outcome_.upstream_time = std::chrono::steady_clock::now() - *upstream_start_;
  co_return ec;
}

void S3Exchange::FailUpstream(const UpstreamCall& call, error_code ec) {
  if (call.problem() || call.tls_failed()) {
    FailConnect(ProbeConnectFailure{call.problem(), call.connect_failed(), call.tls_failed(), ec,
                                    call.server_url()});
    return;
  }
  outcome_.upstream_server = call.server_url();
  if (call.connect_failed()) {
    outcome_.failure = Failure::kUpstreamConnect;
  } else if (ec == beast::error::timeout) {
    outcome_.failure = Failure::kUpstreamTimeout;
  } else {
    outcome_.failure = Failure::kUpstreamProtocol;
  }
  outcome_.error = ec;
  Finish(std::nullopt);
}

void S3Exchange::FailConnect(const ProbeConnectFailure& failure) {
  outcome_.upstream_server = failure.server_url;
  outcome_.error = failure.ec;
  outcome_.failure = failure.connect_failed ? Failure::kUpstreamConnect : Failure::kNone;
  if (failure.problem) {
    // No connection: no usable server, the backend's limits, or none of its servers reachable.
    Finish(*failure.problem);
  } else if (failure.tls_failed) {
    // Counted as a connect failure, as for http backends; the problem says it was TLS.
    Finish(Problem{502, "upstream-tls-failed", "Bad Gateway",
                   "TLS handshake with backend server " + std::string(failure.server_url) +
                       " failed: " + failure.ec.message()});
  } else {
    Finish(std::nullopt);
  }
}

asio::awaitable<void> S3Exchange::Run() {
  if (auto error = ParseS3Request(client_header_.method(), client_header_.target(), &request_)) {
    Finish(Problem{400, "bad-s3-request", "Bad S3 request", *error});
    co_return;
  }
  cache_key_ = request_.bucket + "/" + request_.key;
  const auto content_sha = client_header_.find("x-amz-content-sha256");
  if (content_sha != client_header_.end() && content_sha->value().starts_with("STREAMING-")) {
    Finish(Problem{400, "s3-streaming-payload", "Unsupported payload signing",
                   "aws-chunked (STREAMING-*) payloads cannot be re-signed by the gateway; send "
                   "UNSIGNED-PAYLOAD or a plain body"});
    co_return;
  }
  if (token_ && ReliesOnConditions(request_.operation)) {
    // Not inside the condition: GCC 12 mishandles a co_await in a && expression's operand.
    const bool enforced = co_await AwaitConditionsEnforced();
    if (!enforced) co_return;
  }
  if (!co_await SpoolBody()) co_return;

  if (!token_) {
    co_await Relay(UpstreamHeader(client_header_.method()));
    co_return;
  }
  switch (request_.operation) {
    case Operation::kPutObject:
      if (IsCopyObject(client_header_)) {
        co_await CopyObject();
      } else {
        co_await ConditionalWrite(UpstreamHeader(http::verb::put), WriteKind::kObject);
      }
      co_return;
    case Operation::kCompleteMultipart:
      co_await ConditionalWrite(UpstreamHeader(http::verb::post), WriteKind::kObject);
      co_return;
    case Operation::kDeleteObject: {
      // radosgw ignores conditions on DELETE: a fenced delete is a conditional write of a
      // tombstone that keeps the token, so a stale writer can neither recreate nor overwrite.
      streamed_length_.reset();  // a DELETE's own body, if any, is not forwarded
      RequestHeader header = UpstreamHeader(http::verb::put);
      header.erase(http::field::content_type);
      header.set(kTombstoneMeta, "1");
      body_ = "fencegate tombstone, fencing token " + std::to_string(*token_) + "\n";
      header.set(http::field::content_length, std::to_string(body_.size()));
      co_await ConditionalWrite(std::move(header), WriteKind::kTombstone);
      co_return;
    }
    case Operation::kMultiDelete:
      co_await MultiDelete();
      co_return;
    case Operation::kCreateMultipart:
    case Operation::kUploadPart: {
      // An upload begun under token N gets no more parts, and cannot start, once the object
      // carries a higher token.
      const std::optional<ObjectVersion> seen = co_await Head();
      if (!seen || co_await RefuseIfStale(*seen)) co_return;
      RequestHeader header = UpstreamHeader(client_header_.method());
      if (request_.operation == Operation::kCreateMultipart) {
        header.set(kTokenMeta, std::to_string(*token_));
      }
      co_await Relay(std::move(header));
      co_return;
    }
    default:
      co_await Relay(UpstreamHeader(client_header_.method()));
      co_return;
  }
}

namespace {

// The body's length as the client announced it: Content-Length, or for a chunked body S3's
// x-amz-decoded-content-length.
std::optional<std::uint64_t> AnnouncedLength(const RequestHeader& header) {
  for (std::string_view name : {"Content-Length", "x-amz-decoded-content-length"}) {
    const auto field = header.find(name);
    if (field == header.end()) continue;
    std::uint64_t length = 0;
    const auto value = field->value();
    if (std::from_chars(value.data(), value.data() + value.size(), length).ec == std::errc()) {
      return length;
    }
  }
  return std::nullopt;
}

}  // namespace

asio::awaitable<bool> S3Exchange::SpoolBody() {
  const std::size_t limit = backend_->options.max_spool_bytes;
  const std::optional<std::uint64_t> announced = AnnouncedLength(client_header_);
  if (announced && *announced > limit && !downstream_.body_done()) {
    // Too large to hold for replay: streamed in one attempt (SendBody).
    streamed_length_ = announced;
    co_return true;
  }
  bool done = downstream_.body_done();
  while (!done) {
    const std::size_t old_size = body_.size();
    if (old_size >= limit + 1) {
      // S3 needs the length up front, and holding the whole body to learn it is what the limit
      // forbids.
      Finish(Problem{411, "s3-length-required", "Length required",
                     "a chunked request body larger than the s3 backend's max_spool_bytes (" +
                         std::to_string(limit) +
                         " bytes) needs Content-Length or x-amz-decoded-content-length"});
      co_return false;
    }
    body_.resize(std::min(old_size + kRelayPiece, limit + 1));
    const BodyRead read = co_await AsyncReadBody(
        downstream_, asio::buffer(body_.data() + old_size, body_.size() - old_size),
        asio::use_awaitable);
    body_.resize(old_size + read.bytes);
    if (read.ec) {
      outcome_.failure = Failure::kClient;
      outcome_.error = read.ec;
      Finish(std::nullopt);
      co_return false;
    }
    done = read.done;
  }
  outcome_.request_body_bytes = body_.size();
  co_return true;
}

asio::awaitable<error_code> S3Exchange::SendBody(UpstreamCall& call, RequestHeader header) {
  if (!streamed_length_) co_return co_await call.Send(std::move(header), body_);
  const BodySource source = [this](asio::mutable_buffer buffer, std::size_t* bytes,
                                   bool* done) -> asio::awaitable<error_code> {
    const BodyRead read = co_await AsyncReadBody(downstream_, buffer, asio::use_awaitable);
    *bytes = read.bytes;
    *done = read.done;
    streamed_bytes_ += read.bytes;
    outcome_.request_body_bytes = streamed_bytes_;
    if (read.ec) {
      client_read_error_ = read.ec;
    } else if (streamed_bytes_ > *streamed_length_ ||
               (read.done && streamed_bytes_ != *streamed_length_)) {
      // A chunked body that does not match its x-amz-decoded-content-length.
      client_read_error_ = http::error::partial_message;
    }
    co_return client_read_error_;
  };
  co_return co_await call.SendStreamed(std::move(header), source, kRelayPiece);
}

void S3Exchange::FailSend(const UpstreamCall& call, error_code ec) {
  if (!client_read_error_) {
    FailUpstream(call, ec);
  } else if (client_read_error_ == http::error::partial_message) {
    Finish(Problem{400, "s3-body-length-mismatch", "Bad request",
                   "the request body's length differs from its x-amz-decoded-content-length"});
  } else {
    outcome_.failure = Failure::kClient;
    outcome_.error = client_read_error_;
    Finish(std::nullopt);
  }
}

RequestHeader S3Exchange::UpstreamHeader(http::verb method) const {
  RequestHeader header = client_header_;
  header.method(method);
  header.target(request_.target);
  // The client's own signature (if any) is not the backend's: the gateway signs anew.
  for (std::string_view name :
       {"Authorization", "X-Amz-Date", "X-Amz-Content-Sha256", "X-Amz-Security-Token", "Expect",
        "Connection", "Transfer-Encoding", "Fencing-Token"}) {
    header.erase(name);
  }
  header.erase(kClientTokenField);
  // Only the gateway writes the token metadata: a client cannot claim a token of its choosing.
  header.erase(kTokenMeta);
  header.erase(kTombstoneMeta);
  if (streamed_length_) {
    header.set(http::field::content_length, std::to_string(*streamed_length_));
  } else if (!body_.empty() || method == http::verb::put || method == http::verb::post) {
    header.set(http::field::content_length, std::to_string(body_.size()));
  } else {
    header.erase(http::field::content_length);
  }
  return header;
}

std::string S3Exchange::IfMatchValue(const std::string& etag) const {
  return IfMatchEtag(*backend_, etag);
}

asio::awaitable<bool> S3Exchange::AwaitConditionsEnforced() {
  const BucketGate* gate = gates_.Find(request_.bucket);
  if (gate == nullptr) {
    // No final verdict yet, or the last probe could not reach the backend: probe (again).
    // Built before the co_await: GCC 12 destroys a braced temporary of a co_await'ed call's
    // arguments twice.
    ProbeContext context{ioc_, backend_, pools_, gates_.shared_conditions()};
    std::string bucket = request_.bucket;
    const BucketProbe probe = co_await AwaitBucketProbe(std::move(context), std::move(bucket));
    gate = gates_.Find(request_.bucket);
    if (gate == nullptr && probe.connect_failure) {
      // The backend could not be reached at all: the write is answered as one that met the
      // same failure (502, counted as a connect error), not as a verdict.
      FailConnect(*probe.connect_failure);
      co_return false;
    }
    if (gate == nullptr) {
      Finish(Problem{.status = 503,
                     .type = "backend-conditions-unverified",
                     .title = "Backend conditions unverified",
                     .detail = "fenced writes to bucket '" + request_.bucket +
                               "' wait for proof that the backend enforces conditional writes, "
                               "and the probe failed: " +
                               probe.report.error,
                     .retry_after = true,
                     .retry_after_seconds = 5});
      co_return false;
    }
  }
  if (gate->verdict == ConditionVerdict::kIgnored) {
    Finish(Problem{503, "backend-conditions-not-enforced", "Backend ignores conditional writes",
                   "the backend ignores conditions in bucket '" + request_.bucket +
                       "' that fenced writes rely on (" + gate->failed_probes +
                       "); fenced writes are refused there, reads are served "
                       "(conditions: verify; docs/BACKEND_TRUST.md)"});
    co_return false;
  }
  copy_destination_conditions_ = gate->copy_destination_conditions;
  co_return true;
}

asio::awaitable<bool> S3Exchange::RefuseIfStale(const ObjectVersion& seen) {
  if (seen.token <= *token_) co_return false;
  // Unless the client waits for "100 Continue", its large body is on the way: reading it keeps
  // the connection and lets the client read the refusal instead of a reset.
  const bool expects_continue = client_header_.count(http::field::expect) != 0;
  if (streamed_length_ && streamed_bytes_ == 0 && !expects_continue) {
    std::string piece(kRelayPiece, '\0');
    bool done = downstream_.body_done();
    while (!done) {
      const BodyRead read =
          co_await AsyncReadBody(downstream_, asio::buffer(piece), asio::use_awaitable);
      if (read.ec) break;
      done = read.done;
    }
  }
  outcome_.backend_stale_token = seen.token;
  Finish(Problem{409, "stale-token-at-backend", "Stale fencing token",
                 "the object already carries fencing token " + std::to_string(seen.token) +
                     ", higher than the presented " + std::to_string(*token_)});
  co_return true;
}

asio::awaitable<std::optional<ObjectVersion>> S3Exchange::Head() {
  const std::size_t question = request_.target.find('?');
  co_return co_await HeadAt(request_.target.substr(0, question), cache_key_, true);
}

asio::awaitable<std::optional<ObjectVersion>> S3Exchange::HeadAt(const std::string& target,
                                                                 const std::string& cache_key,
                                                                 bool finish_on_failure) {
  RequestHeader header;
  header.method(http::verb::head);
  header.target(target);
  UpstreamCall call(ioc_, backend_->endpoint, pools_, fence_key_);
  outcome_.backend_reached = true;
  error_code ec = co_await Timed(call.Send(std::move(header), {}));
  if (ec) {
    if (finish_on_failure) FailUpstream(call, ec);
    co_return std::nullopt;
  }
  const unsigned status = call.response().result_int();
  if (status == 404) {
    cache_->Erase(cache_key);
    co_return ObjectVersion{};
  }
  if (status != 200) {
    if (finish_on_failure) {
      Finish(
          Problem{502, "s3-head-failed", "Bad gateway",
                  "the backend answered HEAD of the object with status " + std::to_string(status)});
    }
    co_return std::nullopt;
  }
  ObjectVersion version = VersionFromFields(call.response());
  cache_->Put(cache_key, version);
  co_return version;
}

asio::awaitable<void> S3Exchange::ConditionalWrite(RequestHeader header, WriteKind kind) {
  const bool client_conditions = client_header_.count(http::field::if_match) != 0 ||
                                 client_header_.count(http::field::if_none_match) != 0;
  // CompleteMultipartUpload is only conditional on backends that honour it (not radosgw 16),
  // and client conditions need the current version: both start from a fresh HEAD.
  std::optional<ObjectVersion> seen;
  const ObjectVersion* cached = cache_->Find(cache_key_);
  // A streamed body cannot be sent again after a stale cache entry: it starts from a HEAD.
  if (cached && !client_conditions && !streamed_length_ &&
      request_.operation == Operation::kPutObject) {
    seen = *cached;
  } else {
    seen = co_await Head();
    if (!seen) co_return;
  }
  header.erase(http::field::if_match);
  header.erase(http::field::if_none_match);
  header.set(kTokenMeta, std::to_string(*token_));

  for (unsigned attempt = 0; attempt <= backend_->options.max_retries; ++attempt) {
    if (co_await RefuseIfStale(*seen)) co_return;
    if (!ClientPreconditionsHold(client_header_, *seen)) {
      Finish(Problem{412, "precondition-failed", "Precondition failed",
                     "the client's If-Match/If-None-Match does not hold for the stored object"});
      co_return;
    }
    RequestHeader attempt_header = header;
    const bool quoted_sent = seen->exists && IfMatchValue(seen->etag).front() == '"';
    if (seen->exists) {
      attempt_header.set(http::field::if_match, IfMatchValue(seen->etag));
    } else {
      attempt_header.set(http::field::if_none_match, "*");
    }
    // Optional so that a conflicting attempt hands its connection back before the HEAD.
    std::optional<UpstreamCall> attempt_call;
    UpstreamCall& call = attempt_call.emplace(ioc_, backend_->endpoint, pools_, fence_key_);
    outcome_.backend_reached = true;
    error_code ec = co_await Timed(SendBody(call, std::move(attempt_header)));
    if (ec) {
      cache_->Erase(cache_key_);
      FailSend(call, ec);
      co_return;
    }
    const unsigned status = call.response().result_int();
    if (!IsWriteConflict(status)) {
      const bool written = status / 100 == 2;
      if (written && request_.operation == Operation::kPutObject && kind != WriteKind::kCopy) {
        // (A native copy's ETag is in its body, not its header: nothing to remember.)
        ObjectVersion stored = VersionFromFields(call.response());
        stored.token = *token_;
        cache_->Put(cache_key_, std::move(stored));
      } else if (written && kind == WriteKind::kTombstone) {
        ObjectVersion stored = VersionFromFields(call.response());
        stored.token = *token_;
        stored.tombstone = true;
        cache_->Put(cache_key_, std::move(stored));
      } else {
        cache_->Erase(cache_key_);
      }
      outcome_.upstream_status = status;
      outcome_.upstream_server = call.server_url();
      if (written && kind == WriteKind::kTombstone) {
        std::string ignored;
        co_await call.ReadWholeBody(&ignored, kErrorBodyLimit);
        const std::string no_body;
        co_await WriteSimpleResponse(204, {}, no_body);
      } else if (written && kind == WriteKind::kCopyAsPut) {
        std::string ignored;
        co_await call.ReadWholeBody(&ignored, kErrorBodyLimit);
        outcome_.etag = std::string(call.response()[http::field::etag]);
        const auto now = std::chrono::system_clock::now().time_since_epoch();
        const std::string xml = CopyObjectResultXml(
            outcome_.etag, std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
        co_await WriteSimpleResponse(200, "application/xml", xml);
      } else {
        co_await RelayResponse(call);
      }
      co_return;
    }
    // Someone wrote in between (or the backend did not understand the ETag's form): look again.
    std::string ignored;
    ec = co_await call.ReadWholeBody(&ignored, kErrorBodyLimit);
    attempt_call.reset();
    const ObjectVersion previous = *seen;
    seen = co_await Head();
    if (!seen) co_return;
    if (quoted_sent && backend_->options.etag_quoting == EtagQuoting::kAuto && seen->exists &&
        seen->etag == previous.etag && seen->token == previous.token) {
      backend_->unquoted_etags = true;
    }
    if (streamed_length_) {
      // The client's body is gone: only a stale token is a definite answer. (Under "auto" quoting
      // the conflict may have taught unquoted ETags above, so the client's retry goes through.)
      if (co_await RefuseIfStale(*seen)) co_return;
      Finish(Problem{.status = 503,
                     .type = "s3-write-conflict-unreplayable",
                     .title = "Write conflict",
                     .detail = "the object changed during the write, and the body (" +
                               std::to_string(*streamed_length_) +
                               " bytes) is larger than max_spool_bytes, so it cannot be "
                               "replayed; send it again",
                     .retry_after = true});
      co_return;
    }
  }
  Finish(Problem{503, "s3-write-conflict", "Write conflict",
                 "the object kept changing under concurrent writers; " +
                     std::to_string(backend_->options.max_retries) +
                     " conditional retries were not enough"});
}

asio::awaitable<void> S3Exchange::Relay(RequestHeader header) {
  UpstreamCall call(ioc_, backend_->endpoint, pools_, fence_key_);
  outcome_.backend_reached = true;
  const error_code ec = co_await Timed(SendBody(call, std::move(header)));
  if (ec) {
    FailSend(call, ec);
    co_return;
  }
  outcome_.upstream_status = call.response().result_int();
  outcome_.upstream_server = call.server_url();
  co_await RelayResponse(call);
}

asio::awaitable<void> S3Exchange::RelayResponse(UpstreamCall& call) {
  const ResponseHeader& response = call.response();
  outcome_.etag = std::string(response[http::field::etag]);
  if (request_.operation == Operation::kRead && !request_.key.empty() &&
      response.result_int() / 100 == 2 && response.find(kTombstoneMeta) != response.end()) {
    // A tombstone is a deleted object to clients.
    std::string ignored;
    co_await call.ReadWholeBody(&ignored, kErrorBodyLimit);
    // Built before the co_await: GCC 12 destroys a conditional's temporary twice when it is an
    // argument of a co_await'ed call.
    std::string xml;
    if (client_header_.method() != http::verb::head) xml = NoSuchKeyXml(request_);
    co_await WriteSimpleResponse(404, "application/xml", xml);
    co_return;
  }
  ResponseHeader header = ClientHeader(response);
  outcome_.status = header.result_int();
  std::string piece(kRelayPiece, '\0');
  bool first = true;
  bool done = false;
  while (!done) {
    std::size_t bytes = 0;
    const error_code ec = co_await call.ReadBody(asio::buffer(piece), &bytes, &done);
    if (ec) {
      FailUpstream(call, ec);
      co_return;
    }
    if (bytes == 0 && !done) continue;
    const asio::const_buffer chunk(piece.data(), bytes);
    Written written;
    if (first) {
      outcome_.response_started = true;
      written = co_await AsyncWriteResponse(downstream_, std::move(header), chunk, done,
                                            asio::use_awaitable);
      first = false;
    } else {
      written = co_await AsyncWriteBody(downstream_, chunk, done, asio::use_awaitable);
    }
    if (written.ec) {
      outcome_.failure = Failure::kClient;
      outcome_.error = written.ec;
      Finish(std::nullopt);
      co_return;
    }
    outcome_.response_body_bytes += bytes;
  }
  outcome_.response_complete = true;
  Finish(std::nullopt);
}

asio::awaitable<void> S3Exchange::WriteSimpleResponse(unsigned status,
                                                      std::string_view content_type,
                                                      const std::string& body) {
  ResponseHeader header;
  header.result(status);
  if (!content_type.empty()) header.set(http::field::content_type, content_type);
  header.set(http::field::content_length, std::to_string(body.size()));
  outcome_.status = status;
  outcome_.response_started = true;
  const Written written = co_await AsyncWriteResponse(
      downstream_, std::move(header), asio::buffer(body), true, asio::use_awaitable);
  if (written.ec) {
    outcome_.failure = Failure::kClient;
    outcome_.error = written.ec;
  } else {
    outcome_.response_complete = true;
    outcome_.response_body_bytes = body.size();
  }
  Finish(std::nullopt);
}

}  // namespace fencegate::adapters::s3
