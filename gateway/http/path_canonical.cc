#include "gateway/http/path_canonical.h"

#include <array>

#include <boost/url/grammar/hexdig_chars.hpp>

#include "base/encoding/hex.h"

namespace fencegate::gateway {
namespace {

using boost::urls::grammar::hexdig_value;
using encoding::kUpperHexDigits;

bool IsUpperHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

// RFC 3986 pchar without pct-encoded (unreserved, sub-delims, ':' and '@'): the bytes a
// canonical segment carries unencoded. A table: this runs on every byte of every request path.
constexpr std::array<bool, 256> kBare = [] {
  std::array<bool, 256> bare{};
  for (int c = 'A'; c <= 'Z'; ++c) bare[c] = bare[c - 'A' + 'a'] = true;
  for (int c = '0'; c <= '9'; ++c) bare[c] = true;
  for (char c : std::string_view("-._~!$&'()*+,;=:@")) bare[static_cast<unsigned char>(c)] = true;
  return bare;
}();

bool IsBare(unsigned char c) { return kBare[c]; }

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// Well-formed UTF-8 (Unicode table 3-7), one byte at a time: refuses overlong forms (C0 AF for
// '/'), surrogates and code points above U+10FFFF, so no decoder behind us reads another
// character out of the bytes the key was made from.
class Utf8Check {
 public:
  bool Next(unsigned char byte) {
    if (pending_ > 0) {
      if (byte < low_ || byte > high_) return false;
      --pending_;
      low_ = 0x80;
      high_ = 0xBF;
      return true;
    }
    if (byte < 0x80) return true;
    low_ = 0x80;
    high_ = 0xBF;
    if (byte >= 0xC2 && byte <= 0xDF) {
      pending_ = 1;
    } else if (byte == 0xE0) {
      pending_ = 2;
      low_ = 0xA0;
    } else if (byte == 0xED) {
      pending_ = 2;
      high_ = 0x9F;
    } else if (byte >= 0xE1 && byte <= 0xEF) {
      pending_ = 2;
    } else if (byte == 0xF0) {
      pending_ = 3;
      low_ = 0x90;
    } else if (byte >= 0xF1 && byte <= 0xF3) {
      pending_ = 3;
    } else if (byte == 0xF4) {
      pending_ = 3;
      high_ = 0x8F;
    } else {
      return false;
    }
    return true;
  }
  bool complete() const { return pending_ == 0; }

 private:
  int pending_ = 0;
  unsigned char low_ = 0x80;
  unsigned char high_ = 0xBF;
};

// A segment of `dots` dots and `others` other bytes, ended by a '/' (`last` false) or the end.
PathViolation CheckSegment(std::size_t dots, std::size_t others, bool last) {
  if (others == 0 && (dots == 1 || dots == 2)) return PathViolation::kDotSegment;
  if (!last && dots == 0 && others == 0) return PathViolation::kEmptySegment;
  return PathViolation::kNone;
}

}  // namespace

PathViolation CanonicaliseTarget(std::string_view target, std::string* scratch,
                                 std::string_view* canonical) {
  *canonical = target;
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  if (question != std::string_view::npos && target.find('#', question) != std::string_view::npos) {
    return PathViolation::kFragment;
  }
  if (!path.starts_with('/')) {
    return path.find('#') == std::string_view::npos ? PathViolation::kNone
                                                    : PathViolation::kFragment;
  }

  Utf8Check utf8;
  // Already-canonical paths (nearly all) are only read; the first byte spelled otherwise starts
  // the canonical copy in `scratch`.
  bool copying = false;
  std::size_t dots = 0;
  std::size_t others = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '/') {
      if (i > 0) {
        const PathViolation violation = CheckSegment(dots, others, false);
        if (violation != PathViolation::kNone) return violation;
      }
      if (!utf8.Next('/')) return PathViolation::kInvalidUtf8;
      dots = others = 0;
      if (copying) scratch->push_back('/');
      continue;
    }
    const bool escaped = c == '%';
    unsigned char byte = static_cast<unsigned char>(c);
    if (escaped) {
      if (path.size() - i < 3) return PathViolation::kBadPercentEscape;
      const int high = hexdig_value(path[i + 1]);
      const int low = hexdig_value(path[i + 2]);
      if (high < 0 || low < 0) return PathViolation::kBadPercentEscape;
      byte = static_cast<unsigned char>(high * 16 + low);
    } else if (byte == '#') {
      return PathViolation::kFragment;
    }
    if (byte == '/' || byte == '\\') return PathViolation::kEncodedSeparator;
    if (IsControl(byte)) return PathViolation::kControlByte;
    if (!utf8.Next(byte)) return PathViolation::kInvalidUtf8;
    ++(byte == '.' ? dots : others);

    const bool bare = IsBare(byte);
    const bool as_sent =
        escaped ? !bare && IsUpperHexDigit(path[i + 1]) && IsUpperHexDigit(path[i + 2]) : bare;
    if (!as_sent && !copying) {
      scratch->assign(path.data(), i);
      copying = true;
    }
    if (copying) {
      if (bare) {
        scratch->push_back(static_cast<char>(byte));
      } else {
        const char escape[3] = {'%', kUpperHexDigits[byte >> 4], kUpperHexDigits[byte & 0xF]};
        scratch->append(escape, sizeof escape);
      }
    }
    if (escaped) i += 2;
  }
  const PathViolation violation = CheckSegment(dots, others, true);
  if (violation != PathViolation::kNone) return violation;
  if (!utf8.complete()) return PathViolation::kInvalidUtf8;
  if (copying) {
    scratch->append(target.substr(path.size()));
    *canonical = *scratch;
  }
  return PathViolation::kNone;
}

std::string_view PathViolationDetail(PathViolation violation) {
  switch (violation) {
    case PathViolation::kNone:
      return "";
    case PathViolation::kBadPercentEscape:
      return "invalid percent escape in the path ('%' must be followed by two hex digits)";
    case PathViolation::kEncodedSeparator:
      return "an encoded '/' (%2F) or a backslash (raw or %5C) in the path is not accepted";
    case PathViolation::kControlByte:
      return "NUL and control bytes (raw or percent-encoded) are not accepted in the path";
    case PathViolation::kInvalidUtf8:
      return "the decoded path is not well-formed UTF-8 (overlong forms included)";
    case PathViolation::kDotSegment:
      return "'.' and '..' path segments (raw or percent-encoded) are not accepted";
    case PathViolation::kEmptySegment:
      return "empty path segments ('//') are not accepted";
    case PathViolation::kFragment:
      return "a request target cannot carry a fragment ('#')";
  }
  return "";
}

}  // namespace fencegate::gateway
