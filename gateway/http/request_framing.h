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

// The search for the end of a request's header block, resumed as its bytes arrive.
struct HeaderBlockScan {
  std::size_t scanned = 0;  // how much of the data earlier calls searched
  // A line of the block so far starts with SP or HTAB: obs-fold (RFC 9112 5.2), a field folded
  // over several lines. Beast would unfold it silently, while a backend or another proxy may
  // not, which is a smuggling vector; RFC 9112 lets a server reject it with 400. Found by the
  // same walk from line end to line end that finds the block's end, not by a second one.
  bool obs_fold = false;
};

// The length of the header block (up to and including the empty line's CRLF) at the start of
// `data`, or nullopt if it is not complete yet. `scan` carries what earlier calls on the same,
// growing data searched: the search resumes there, so repeated calls stay linear.
std::optional<std::size_t> FindHeaderBlockEnd(std::string_view data, HeaderBlockScan* scan);

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
