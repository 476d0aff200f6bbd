#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/status.h"

namespace fencegate::lockstore {

// The parts of a request a fence key can be made of. Plain strings: no HTTP types here.
struct RequestFacts {
  // The request path without the query, in the gateway's one canonical spelling (escapes
  // decoded once and encoded again one way, gateway/http/path_canonical.h): keys render from it so
  // that every spelling of a resource is one key.
  std::string_view path;
  std::string_view host;   // the Host without port or trailing dot, lower-case (canonical)
  std::string_view route;  // the route's name
};

// A fence-key template such as "files:{path}" or "inventory:{segment:2}".
// Placeholders:
//   {path}       the whole path (without query)
//   {segment:N}  the N-th path segment, 1-based ("/a/b/c": 1=a, 2=b, 3=c); empty if absent
//   {host}       the request host
//   {route}      the route's name
// "{{" and "}}" stand for literal braces. Anything else in braces is a parse error.
class FenceKeyTemplate {
 public:
  // Parses `text`; on error returns a status whose message says what and where.
  static Status Parse(std::string_view text, FenceKeyTemplate* out);

  // Appends the key for `facts` to `out` (cleared first). Returns false when a placeholder
  // resolves to nothing (e.g. {segment:3} of "/a"): such a request has no fence key.
  [[nodiscard]] bool Render(const RequestFacts& facts, std::string* out) const;

  const std::string& source() const { return source_; }

  // The text every key of `route` starts with: the literals (and {route}) up to the first
  // placeholder that varies per request. "" when the template starts with one.
  std::string KeyPrefix(std::string_view route) const;

 private:
  struct Part {
    enum class Kind { kLiteral, kPath, kSegment, kHost, kRoute };
    Kind kind = Kind::kLiteral;
    std::string literal;
    int segment = 0;
  };
  std::string source_;
  std::vector<Part> parts_;
};

}  // namespace fencegate::lockstore
