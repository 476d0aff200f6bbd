#pragma once

#include <string_view>

namespace fencegate::gateway {

// Checked on every request path (the target without its query) before routing. A path must have
// one spelling per resource: fence keys are derived from the path as sent, so two spellings a
// backend resolves to the same resource ("/kv/a/x", "/kv/b/../a/x", "/kv/%61/x") would be two
// fences, and a zombie could slip past the one that holds its lock. So fencegate refuses, on
// every route and for every adapter, what RFC 3986 normalisation (6.2.2) would rewrite:
enum class PathViolation {
  kNone,
  kBadPercentEscape,   // '%' not followed by two hex digits
  kNul,                // "%00"
  kDotSegment,         // a "." or ".." segment, raw or with percent-encoded dots
  kEncodedUnreserved,  // a percent-encoded ALPHA, DIGIT, '-', '.', '_' or '~'
  kLowercaseEscape,    // "%2f": escapes use upper-case hex digits ("%2F")
};

// Paths that do not start with '/' (asterisk- or absolute-form targets) match no route and are
// left to routing.
PathViolation CheckCanonicalPath(std::string_view path);

// A human-readable detail for a violation (a static string).
std::string_view PathViolationDetail(PathViolation violation);

}  // namespace fencegate::gateway
