// Fuzzes lockstore::FenceKeyTemplate. Input lines: template, request path, host, route name.
// Compares Parse and Render with a reference of the documented template language, and checks
// that a refused template leaves the previous one in place (so it can never yield a key) and
// that a rendered key is never empty.

#include <algorithm>
#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "lockstore/fence/fence_key_template.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::lockstore::FenceKeyTemplate;
using fencegate::lockstore::RequestFacts;

struct Refused {};
struct NoKey {};
using Outcome = std::variant<Refused, NoKey, std::string>;

std::string_view Segment(std::string_view path, long n) {
  if (path.starts_with('/')) path.remove_prefix(1);
  for (long i = 1;; ++i) {
    const std::size_t slash = path.find('/');
    if (i == n) return path.substr(0, slash);
    if (slash == std::string_view::npos) return {};
    path.remove_prefix(slash + 1);
  }
}

// The value of placeholder `name`, or nullopt when the name is not a placeholder.
std::optional<std::string_view> Placeholder(std::string_view name, const RequestFacts& facts) {
  if (name == "path") return facts.path;
  if (name == "host") return facts.host;
  if (name == "route") return facts.route;
  if (!name.starts_with("segment:")) return std::nullopt;
  const std::string_view digits = name.substr(8);
  if (digits.empty()) return std::nullopt;
  long n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = std::min(n * 10 + (c - '0'), long{INT_MAX} + 1);  // saturates: leading zeros are fine
  }
  if (n < 1 || n > INT_MAX) return std::nullopt;
  return Segment(facts.path, n);
}

Outcome ReferenceRender(std::string_view text, const RequestFacts& facts) {
  if (text.empty()) return Refused{};
  std::string key;
  bool missing = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::string_view rest = text.substr(i);
    if (rest.starts_with("{{") || rest.starts_with("}}")) {
      key += text[i++];
    } else if (text[i] == '}') {
      return Refused{};
    } else if (text[i] == '{') {
      const std::size_t close = text.find('}', i);
      if (close == std::string_view::npos) return Refused{};
      const auto value = Placeholder(text.substr(i + 1, close - i - 1), facts);
      if (!value) return Refused{};
      missing = missing || value->empty();
      key.append(*value);
      i = close;
    } else {
      key += text[i];
    }
  }
  if (missing) return NoKey{};
  return key;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto fields = fencegate::fuzz::SplitFields(fencegate::fuzz::AsText(data, size), 4);
  const RequestFacts facts{fields[1], fields[2], fields[3]};

  FenceKeyTemplate tmpl;
  FUZZ_CHECK(FenceKeyTemplate::Parse("previous:{path}", &tmpl).ok());
  const auto status = FenceKeyTemplate::Parse(fields[0], &tmpl);
  const Outcome expected = ReferenceRender(fields[0], facts);

  if (!status.ok()) {
    FUZZ_CHECK(std::holds_alternative<Refused>(expected));
    FUZZ_CHECK(!status.message().empty());
    FUZZ_CHECK(tmpl.source() == "previous:{path}");
    return 0;
  }
  FUZZ_CHECK(!std::holds_alternative<Refused>(expected));
  FUZZ_CHECK(tmpl.source() == fields[0]);

  std::string key = "stale content that Render must clear";
  const bool rendered = tmpl.Render(facts, &key);
  if (!rendered) {
    FUZZ_CHECK(std::holds_alternative<NoKey>(expected));
    return 0;
  }
  FUZZ_CHECK(std::holds_alternative<std::string>(expected));
  FUZZ_CHECK(key == std::get<std::string>(expected));
  FUZZ_CHECK(!key.empty());
  // A template parsed from its own source renders the same key.
  FenceKeyTemplate again;
  FUZZ_CHECK(FenceKeyTemplate::Parse(tmpl.source(), &again).ok());
  std::string key_again;
  FUZZ_CHECK(again.Render(facts, &key_again) && key_again == key);
  return 0;
}
