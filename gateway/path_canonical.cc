#include "gateway/path_canonical.h"

namespace fencegate::gateway {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

bool IsLowerHexLetter(char c) { return c >= 'a' && c <= 'f'; }

PathViolation CheckSegment(std::string_view segment) {
  std::size_t dots = 0;
  std::size_t others = 0;
  bool encoded_dot = false;
  for (std::size_t i = 0; i < segment.size(); ++i) {
    char c = segment[i];
    if (c == '%') {
      if (segment.size() - i < 3) return PathViolation::kBadPercentEscape;
      const int high = HexValue(segment[i + 1]);
      const int low = HexValue(segment[i + 2]);
      if (high < 0 || low < 0) return PathViolation::kBadPercentEscape;
      c = static_cast<char>(high * 16 + low);
      if (c == '\0') return PathViolation::kNul;
      // An encoded dot is checked after the segment: "%2e%2e" is best reported as a dot segment.
      if (c == '.') {
        encoded_dot = true;
      } else if (IsUnreserved(static_cast<unsigned char>(c))) {
        return PathViolation::kEncodedUnreserved;
      } else if (IsLowerHexLetter(segment[i + 1]) || IsLowerHexLetter(segment[i + 2])) {
        return PathViolation::kLowercaseEscape;
      }
      i += 2;
    }
    ++(c == '.' ? dots : others);
  }
  if (others == 0 && (dots == 1 || dots == 2)) return PathViolation::kDotSegment;
  if (encoded_dot) return PathViolation::kEncodedUnreserved;
  return PathViolation::kNone;
}

}  // namespace

PathViolation CheckCanonicalPath(std::string_view path) {
  if (!path.starts_with('/')) return PathViolation::kNone;
  std::size_t begin = 1;
  while (true) {
    const std::size_t end = path.find('/', begin);
    const PathViolation violation = CheckSegment(path.substr(begin, end - begin));
    if (violation != PathViolation::kNone) return violation;
    if (end == std::string_view::npos) return PathViolation::kNone;
    begin = end + 1;
  }
}

std::string_view PathViolationDetail(PathViolation violation) {
  switch (violation) {
    case PathViolation::kNone:
      return "";
    case PathViolation::kBadPercentEscape:
      return "invalid percent escape in the path";
    case PathViolation::kNul:
      return "NUL (%00) in the path";
    case PathViolation::kDotSegment:
      return "'.' and '..' path segments (raw or percent-encoded) are not accepted";
    case PathViolation::kEncodedUnreserved:
      return "the path percent-encodes a character that must be sent as is (RFC 3986 2.3)";
    case PathViolation::kLowercaseEscape:
      return "percent escapes must use upper-case hex digits (RFC 3986 2.1)";
  }
  return "";
}

}  // namespace fencegate::gateway
