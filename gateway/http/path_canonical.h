#pragma once

#include <string>
#include <string_view>

namespace fencegate::gateway {

// Every request target is put in one canonical spelling before routing, fence keys and
// adapters see it: two spellings that reach the same backend object must be one fence key, or
// a zombie writes through the spelling that has no history. The canonical path is the path's
// bytes with every percent escape decoded once, encoded again one way:
//   - ALPHA, DIGIT, "-._~", the sub-delims "!$&'()*+,;=", ':' and '@' are written as is
//     ("/a%3Ab" and "/a:b" are one path, "%61" is "a", "+" is a plus, never a space);
//   - every other byte is "%XX" with upper-case hex digits (space, '%', '?', '#', non-ASCII:
//     raw "é" and "%c3%a9" are both "%C3%A9");
//   - '/' separates segments and is never encoded.
// NFC and NFD spellings of a character are different bytes, hence different paths and keys.
// Spellings that have no single meaning are refused instead:
enum class PathViolation {
  kNone,
  kBadPercentEscape,  // '%' not followed by two hex digits
  kEncodedSeparator,  // "%2F" or "%5C", or a raw '\': backends disagree on whether it splits
  kControlByte,       // NUL or another control byte (0x00-0x1F, 0x7F), raw or encoded
  kInvalidUtf8,       // decoded bytes that are not well-formed UTF-8 (overlong forms too)
  kDotSegment,        // a "." or ".." segment, raw or percent-encoded
  kEmptySegment,      // "//": an empty segment before the last ("/a/" names a directory)
  kFragment,          // '#' anywhere in the target: a fragment is never sent in HTTP
};

// The canonical spelling of a request target (path, then "?query" as sent). `canonical` views
// `target` itself when it is already canonical (no copy, no allocation), else `scratch`, which
// is overwritten. The query is not rewritten, only checked for '#'. Targets that do not start
// with '/' (asterisk- or absolute-form) are left as they are: they match no route.
PathViolation CanonicaliseTarget(std::string_view target, std::string* scratch,
                                 std::string_view* canonical);

// A human-readable detail for a violation (a static string).
std::string_view PathViolationDetail(PathViolation violation);

}  // namespace fencegate::gateway
