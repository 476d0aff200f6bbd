// Fuzzes gateway::CheckCanonicalPath against RFC 3986 normalisation (6.2.2): a path is accepted
// exactly when its escapes are valid, it has no NUL, and normalising it (upper-case escapes,
// decoded unreserved characters, dot segments removed) leaves it unchanged. So an accepted path
// is the one spelling of its resource, and every refused one has another spelling or is broken.

#include <optional>
#include <string>
#include <string_view>

#include "gateway/path_canonical.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::gateway::CheckCanonicalPath;
using fencegate::gateway::PathViolation;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool Unreserved(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// RFC 3986 6.2.2.1 and 6.2.2.2; nullopt for a broken escape or an encoded NUL.
std::optional<std::string> NormaliseEscapes(std::string_view path) {
  static constexpr char kUpper[] = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    if (path.size() - i < 3) return std::nullopt;
    const int high = Hex(path[i + 1]);
    const int low = Hex(path[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    const char decoded = static_cast<char>(high * 16 + low);
    if (decoded == '\0') return std::nullopt;
    if (Unreserved(decoded)) {
      out += decoded;
    } else {
      out += '%';
      out += kUpper[high];
      out += kUpper[low];
    }
    i += 2;
  }
  return out;
}

// RFC 3986 5.2.4, remove_dot_segments.
std::string RemoveDotSegments(std::string input) {
  std::string output;
  auto drop_last_segment = [&output] {
    const std::size_t slash = output.rfind('/');
    output.erase(slash == std::string::npos ? 0 : slash);
  };
  while (!input.empty()) {
    if (input.starts_with("../")) {
      input.erase(0, 3);
    } else if (input.starts_with("./")) {
      input.erase(0, 2);
    } else if (input.starts_with("/./")) {
      input.erase(0, 2);
    } else if (input == "/.") {
      input = "/";
    } else if (input.starts_with("/../")) {
      input.erase(0, 3);
      drop_last_segment();
    } else if (input == "/..") {
      input = "/";
      drop_last_segment();
    } else if (input == "." || input == "..") {
      input.clear();
    } else {
      const std::size_t end = input.find('/', 1);
      output += input.substr(0, end);
      input.erase(0, end);
    }
  }
  return output;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view path = fencegate::fuzz::AsText(data, size);
  const PathViolation violation = CheckCanonicalPath(path);
  // Targets that are not origin-form are left to routing (they match no route).
  if (!path.starts_with('/')) {
    FUZZ_CHECK(violation == PathViolation::kNone);
    return 0;
  }
  const std::optional<std::string> escapes = NormaliseEscapes(path);
  const bool canonical = escapes && RemoveDotSegments(*escapes) == path;
  FUZZ_CHECK(canonical == (violation == PathViolation::kNone));
  if (!canonical) FUZZ_CHECK(!fencegate::gateway::PathViolationDetail(violation).empty());
  return 0;
}
