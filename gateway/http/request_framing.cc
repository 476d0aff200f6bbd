#include "gateway/http/request_framing.h"

#include <cstring>

#include <boost/beast/core/string.hpp>

namespace fencegate::gateway {
namespace http = boost::beast::http;

namespace {

bool IsOws(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::optional<std::size_t> FindHeaderBlockEnd(std::string_view data, HeaderBlockScan* scan) {
  const char* const begin = data.data();
  const char* const end = begin + data.size();
  const char* p = begin + scan->scanned;
  // The previous read ended with an LF: the byte that starts the next line has come now.
  if (scan->scanned > 0 && p < end && p[-1] == '\n' && IsOws(*p)) scan->obs_fold = true;
  while (p < end) {
    const char* const lf = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (lf == nullptr) break;
    const std::size_t at = lf - begin;
    if (at >= 3 && lf[-1] == '\r' && lf[-2] == '\n' && lf[-3] == '\r') return at + 1;
    p = lf + 1;
    if (p < end && IsOws(*p)) scan->obs_fold = true;
  }
  scan->scanned = data.size();
  return std::nullopt;
}

FramingViolation CheckRequestFraming(const adapters::RequestHeader& header) {
  // One walk over the list: counting each field by name would be two scans of the fields
  // and two more to read the values, for a check that almost always finds one or none.
  std::size_t content_lengths = 0;
  std::size_t transfer_encodings = 0;
  std::string_view content_length;
  std::string_view transfer_encoding;
  for (const auto& field : header) {
    if (field.name() == http::field::content_length) {
      if (content_lengths++ == 0) content_length = field.value();
    } else if (field.name() == http::field::transfer_encoding) {
      if (transfer_encodings++ == 0) transfer_encoding = field.value();
    }
  }
  if (content_lengths > 0 && transfer_encodings > 0) {
    return FramingViolation::kContentLengthWithTransferEncoding;
  }
  if (content_lengths > 1) return FramingViolation::kRepeatedContentLength;
  if (content_lengths == 1 && content_length.find(',') != std::string_view::npos) {
    return FramingViolation::kRepeatedContentLength;
  }
  if (transfer_encodings > 1) return FramingViolation::kRepeatedTransferEncoding;
  if (transfer_encodings == 1) {
    std::string_view value = transfer_encoding;
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (!boost::beast::iequals(value, "chunked")) {
      return FramingViolation::kUnsupportedTransferEncoding;
    }
  }
  return FramingViolation::kNone;
}

std::string_view FramingViolationDetail(FramingViolation violation) {
  switch (violation) {
    case FramingViolation::kNone:
      return "";
    case FramingViolation::kContentLengthWithTransferEncoding:
      return "Content-Length and Transfer-Encoding must not both be present";
    case FramingViolation::kRepeatedContentLength:
      return "Content-Length must appear once with a single value";
    case FramingViolation::kRepeatedTransferEncoding:
      return "Transfer-Encoding must appear once";
    case FramingViolation::kUnsupportedTransferEncoding:
      return "Transfer-Encoding must be exactly \"chunked\"";
  }
  return "";
}

}  // namespace fencegate::gateway
