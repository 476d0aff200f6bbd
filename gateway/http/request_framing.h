#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <boost/beast/http/message.hpp>

#include "base/net/http_header.h"

namespace fencegate::gateway {

// Request-smuggling defences that Beast's parser does not apply by itself (Beast 1.81 already
// refuses Content-Length together with "Transfer-Encoding: chunked", and differing
// Content-Length values).

// The length of the header block (up to and including the empty line's CRLF) at the start of
// `data`, or nullopt if it is not complete yet. `scanned` is how much of `data` an earlier call
// already searched; the search resumes there, so repeated calls on a growing buffer stay linear.
std::optional<std::size_t> FindHeaderBlockEnd(std::string_view data, std::size_t scanned);

// True when a complete header block folds a field over several lines (obs-fold, RFC 9112 5.2):
// a line starting with SP or HTAB. Beast would unfold it silently, while a backend or another
// proxy may not, which is a smuggling vector; RFC 9112 lets a server reject it with 400.
bool ContainsObsFold(std::string_view header_block);

// A framing problem of a parsed request header, for a 400 refusal.
enum class FramingViolation {
  kNone,
  kContentLengthWithTransferEncoding,
  kRepeatedContentLength,  // two Content-Length fields or a list, even of equal values
  kRepeatedTransferEncoding,
  kUnsupportedTransferEncoding,  // anything but exactly "chunked"
};

FramingViolation CheckRequestFraming(const adapters::RequestHeader& header);

// A human-readable detail for a violation (a static string).
std::string_view FramingViolationDetail(FramingViolation violation);

}  // namespace fencegate::gateway
