// Fuzzes gateway::CanonicaliseTarget against a plain reference written from its contract: split
// the path at '/', decode every segment's escapes, refuse what has no single meaning (broken
// escapes, encoded or raw separators, control bytes, a '#', bytes that are not well-formed UTF-8,
// dot segments, empty inner segments), and encode the decoded bytes again one way. Accepted
// targets must equal the reference's spelling, canonicalising a canonical target must change
// nothing (and copy nothing), and every refusal must agree with the reference's.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/http/path_canonical.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::gateway::CanonicaliseTarget;
using fencegate::gateway::PathViolation;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool Bare(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~!$&'()*+,;=:@").find(static_cast<char>(c)) != std::string_view::npos;
}

// Well-formed UTF-8 by decoding each sequence and checking its code point.
bool WellFormedUtf8(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (lead < 0x80) {
      length = 1;
      code = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return false;
    }
    if (bytes.size() - i < length) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(bytes[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

// The canonical path of `path` (starting with '/'), or nullopt when it is refused.
std::optional<std::string> ReferencePath(std::string_view path) {
  std::vector<std::string> segments;
  std::string decoded_path;
  std::size_t begin = 1;
  while (true) {
    const std::size_t end = path.find('/', begin);
    const std::string_view raw = path.substr(begin, end - begin);
    std::string decoded;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c == '%') {
        if (raw.size() - i < 3 || Hex(raw[i + 1]) < 0 || Hex(raw[i + 2]) < 0) return std::nullopt;
        c = static_cast<char>(Hex(raw[i + 1]) * 16 + Hex(raw[i + 2]));
        if (c == '/') return std::nullopt;
        i += 2;
      } else if (c == '#') {
        return std::nullopt;
      }
      const auto byte = static_cast<unsigned char>(c);
      if (c == '\\' || byte < 0x20 || byte == 0x7F) return std::nullopt;
      decoded += c;
    }
    const bool last = end == std::string_view::npos;
    if (decoded == "." || decoded == ".." || (decoded.empty() && !last)) return std::nullopt;
    decoded_path += '/';
    decoded_path += decoded;
    segments.push_back(std::move(decoded));
    if (last) break;
    begin = end + 1;
  }
  if (!WellFormedUtf8(decoded_path)) return std::nullopt;
  static constexpr char kUpper[] = "0123456789ABCDEF";
  std::string out;
  for (const std::string& segment : segments) {
    out += '/';
    for (char c : segment) {
      const auto byte = static_cast<unsigned char>(c);
      if (Bare(byte)) {
        out += c;
      } else {
        out += '%';
        out += kUpper[byte >> 4];
        out += kUpper[byte & 0xF];
      }
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view target = fencegate::fuzz::AsText(data, size);
  std::string scratch;
  std::string_view canonical;
  const PathViolation violation = CanonicaliseTarget(target, &scratch, &canonical);
  FUZZ_CHECK((violation == PathViolation::kNone) ==
             fencegate::gateway::PathViolationDetail(violation).empty());

  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query = target.substr(path.size());
  std::optional<std::string> expected;
  if (query.find('#') == std::string_view::npos) {
    if (!path.starts_with('/')) {
      // Not origin-form: matches no route, only a fragment is refused.
      if (path.find('#') == std::string_view::npos) expected = std::string(path);
    } else {
      expected = ReferencePath(path);
    }
  }
  FUZZ_CHECK(expected.has_value() == (violation == PathViolation::kNone));
  if (!expected) return 0;
  FUZZ_CHECK(canonical == *expected + std::string(query));
  FUZZ_CHECK((canonical.data() == target.data()) == (canonical == target));

  // The canonical spelling is a fixed point, and it costs no copy.
  const std::string once(canonical);
  std::string scratch_again;
  std::string_view twice;
  FUZZ_CHECK(CanonicaliseTarget(once, &scratch_again, &twice) == PathViolation::kNone);
  FUZZ_CHECK(twice == once && twice.data() == once.data());
  return 0;
}
