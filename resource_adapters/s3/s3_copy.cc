// A fenced CopyObject (PUT /bucket/key with x-amz-copy-source). The destination is the fenced
// resource: it gets the presented token (never the source's, which S3 would copy along with the
// rest of the metadata) and is written under a condition on its own version, so a stale writer
// through another gateway is refused by the backend as for a PUT. Where the bucket ignores
// conditions on a copy's destination (radosgw 16.2), the copy is a GET of the source and a
// conditional PUT of its bytes (at most max_spool_bytes).
#include <charconv>
#include <chrono>
#include <utility>

#include <boost/asio/use_awaitable.hpp>

#include "resource_adapters/s3/s3_copy_request.h"
#include "resource_adapters/s3/s3_exchange.h"

namespace fencegate::adapters::s3 {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr std::size_t kCopySourceErrorBodyLimit = 64 * 1024;

std::string CopyPreconditionFailedXml() {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PreconditionFailed</Code>"
         "<Message>At least one of the pre-conditions you specified did not hold</Message>"
         "<Condition>x-amz-copy-source-If-Match</Condition></Error>";
}

std::optional<std::uint64_t> ContentLengthOf(const ResponseHeader& response) {
  const auto field = response.find(http::field::content_length);
  if (field == response.end()) return std::nullopt;
  std::uint64_t length = 0;
  const auto value = field->value();
  if (std::from_chars(value.data(), value.data() + value.size(), length).ec != std::errc()) {
    return std::nullopt;
  }
  return length;
}

}  // namespace

asio::awaitable<void> S3Exchange::AnswerCopyRefusal(UpstreamCall& call, unsigned status,
                                                    std::string xml) {
  std::string ignored;
  co_await call.ReadWholeBody(&ignored, kCopySourceErrorBodyLimit);
  co_await WriteSimpleResponse(status, "application/xml", xml);
}

asio::awaitable<void> S3Exchange::CopyObject() {
  S3Request source;
  if (auto error = ParseCopySource(client_header_[kCopySource], &source)) {
    Finish(Problem{400, "bad-s3-copy-source", "Bad copy source", *error});
    co_return;
  }
  // The source's metadata and state (a tombstone is no object) are needed either way: a HEAD
  // when the backend copies, a GET with the bytes when the gateway writes them.
  const bool backend_copies = copy_destination_conditions_;
  RequestHeader read;
  read.method(backend_copies ? http::verb::head : http::verb::get);
  read.target(source.target);
  // The backend evaluates the date conditions on the source's read; the ETag ones are checked
  // below, against the bare ETag, whatever quoting the backend matches. Neither is sent with a
  // copy the backend makes: its 412 could not be told from a conflict on the destination.
  for (const auto& [copy_field, field] :
       {std::pair{"x-amz-copy-source-if-modified-since", http::field::if_modified_since},
        std::pair{"x-amz-copy-source-if-unmodified-since", http::field::if_unmodified_since}}) {
    const auto value = client_header_.find(copy_field);
    if (value != client_header_.end()) read.set(field, value->value());
  }
  std::optional<UpstreamCall> source_call;
  UpstreamCall& call = source_call.emplace(ioc_, backend_->endpoint, pools_, fence_key_);
  outcome_.backend_reached = true;
  const error_code ec = co_await Timed(call.Send(std::move(read), {}));
  if (ec) {
    FailUpstream(call, ec);
    co_return;
  }
  const unsigned status = call.response().result_int();
  if (status == 304 || status == 412) {
    std::string xml = CopyPreconditionFailedXml();
    co_await AnswerCopyRefusal(call, 412, std::move(xml));
    co_return;
  }
  if (status == 404 || (status == 200 && call.response().count(kTombstoneMeta) != 0)) {
    std::string xml = NoSuchKeyXml(source);
    co_await AnswerCopyRefusal(call, 404, std::move(xml));
    co_return;
  }
  if (status != 200) {
    if (backend_copies) {
      Finish(Problem{
          502, "s3-copy-source-failed", "Bad gateway",
          "the backend answered HEAD of the copy source with status " + std::to_string(status)});
    } else {
      // The backend's own error (AccessDenied, NoSuchBucket, ...) is the client's answer.
      outcome_.upstream_status = status;
      outcome_.upstream_server = call.server_url();
      co_await RelayResponse(call);
    }
    co_return;
  }
  const ResponseHeader source_fields = call.response();
  if (!ClientPreconditionsHold(CopySourceConditions(client_header_),
                               VersionFromFields(source_fields))) {
    std::string xml = CopyPreconditionFailedXml();
    co_await AnswerCopyRefusal(call, 412, std::move(xml));
    co_return;
  }

  if (backend_copies) {
    source_call.reset();
    RequestHeader header = UpstreamHeader(http::verb::put);
    CarryCopiedMetadata(source_fields, &header);
    EraseCopySourceConditions(&header);
    // REPLACE, so that the destination keeps the token set by ConditionalWrite rather than the
    // source's.
    header.set(kMetadataDirective, "REPLACE");
    co_await ConditionalWrite(std::move(header), WriteKind::kCopy);
    co_return;
  }

  const std::size_t limit = backend_->options.max_spool_bytes;
  const std::optional<std::uint64_t> length = ContentLengthOf(source_fields);
  bool too_large = length && *length > limit;
  if (!too_large) {
    const error_code read_ec = co_await call.ReadWholeBody(&body_, limit + 1);
    if (read_ec) {
      FailUpstream(call, read_ec);
      co_return;
    }
    too_large = body_.size() > limit;
  }
  if (too_large) {
    Finish(Problem{413, "s3-copy-source-too-large", "Copy source too large",
                   "the backend ignores conditions on a copy's destination, so the gateway copies "
                   "by reading the source and writing it conditionally, which it does only for "
                   "sources up to max_spool_bytes (" +
                       std::to_string(limit) +
                       " bytes); copy a larger object with a fenced multipart upload "
                       "(UploadPartCopy)"});
    co_return;
  }
  source_call.reset();
  RequestHeader header = UpstreamHeader(http::verb::put);
  CarryCopiedMetadata(source_fields, &header);
  EraseCopyFields(&header);
  co_await ConditionalWrite(std::move(header), WriteKind::kCopyAsPut);
}

}  // namespace fencegate::adapters::s3
