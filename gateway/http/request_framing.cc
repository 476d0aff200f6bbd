#include "gateway/http/request_framing.h"

#include <cstring>

#include <boost/beast/core/string.hpp>

namespace fencegate::gateway {
namespace http = boost::beast::http;

std::optional<std::size_t> FindHeaderBlockEnd(std::string_view data, std::size_t scanned) {
  // Resume three bytes back so a terminator split across reads is still found.
  std::size_t i = scanned > 3 ? scanned - 3 : 0;
  while (i + 4 <= data.size()) {
    const void* lf = std::memchr(data.data() + i + 3, '\n', data.size() - i - 3);
    if (lf == nullptr) return std::nullopt;
    const std::size_t at = static_cast<const char*>(lf) - data.data();  // candidate final LF
    if (data[at - 1] == '\r' && data[at - 2] == '\n' && data[at - 3] == '\r') return at + 1;
    i = at - 2;
  }
  return std::nullopt;
}

bool ContainsObsFold(std::string_view header_block) {
  // Every LF but the last two (end of the last field line, end of the empty line) starts a line.
  const char* p = header_block.data();
  const char* const end = p + header_block.size();
  while (p < end) {
    const void* lf = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (lf == nullptr) return false;
    p = static_cast<const char*>(lf) + 1;
    if (p < end && (*p == ' ' || *p == '\t')) return true;
  }
  return false;
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
