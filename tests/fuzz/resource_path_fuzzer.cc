// Fuzzes the filesystem adapter's MapTargetToPath. Input lines: route prefix, request target.
// Checks that every accepted path is made of plain names only (nothing that could leave the
// root or touch the adapter's own files), that refusals are the documented 400/403 problems,
// and that re-encoding an accepted path maps back to the same path.

#include <climits>
#include <string>
#include <string_view>
#include <variant>

#include "resource_adapters/filesystem/resource_path.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::adapters::kReservedNamePrefix;
using fencegate::adapters::MapTargetToPath;
using fencegate::adapters::Problem;
using fencegate::adapters::ResourcePath;

void CheckPlainName(const std::string& name) {
  FUZZ_CHECK(!name.empty());
  FUZZ_CHECK(name != "." && name != "..");
  FUZZ_CHECK(name.find_first_of(std::string_view("/\\\0", 3)) == std::string::npos);
  FUZZ_CHECK(name.size() <= NAME_MAX);
  FUZZ_CHECK(!std::string_view(name).starts_with(kReservedNamePrefix));
}

std::string PercentEncodeAll(std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    out += '%';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

// A target that names `path` under `prefix`, with every byte of every name percent-encoded.
std::string EncodedTarget(const ResourcePath& path, std::string_view prefix) {
  std::string relative;
  for (const auto& directory : path.directories) relative += PercentEncodeAll(directory) + "/";
  relative += PercentEncodeAll(path.name);
  std::string target(prefix);
  if (!relative.empty() && !prefix.ends_with('/')) target += '/';
  return target + relative;
}

bool SameProblem(const Problem& a, const Problem& b) {
  return a.status == b.status && a.type == b.type && a.detail == b.detail;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto fields = fencegate::fuzz::SplitFields(fencegate::fuzz::AsText(data, size), 2);
  const std::string_view prefix = fields[0];
  const std::string_view target = fields[1];
  // The config loader only accepts prefixes like these; others never reach the adapter.
  if (!prefix.starts_with('/') || prefix.find_first_of(" ?#") != std::string_view::npos) return 0;

  const auto mapped = MapTargetToPath(target, prefix);
  if (const auto* problem = std::get_if<Problem>(&mapped)) {
    FUZZ_CHECK(!problem->detail.empty());
    FUZZ_CHECK((problem->status == 400 && problem->type == "bad-path") ||
               (problem->status == 414 && problem->type == "path-too-long") ||
               (problem->status == 403 &&
                (problem->type == "path-escapes-root" || problem->type == "reserved-name")));
    // Deterministic: the same target is refused the same way.
    const auto again = MapTargetToPath(target, prefix);
    FUZZ_CHECK(std::holds_alternative<Problem>(again) &&
               SameProblem(std::get<Problem>(again), *problem));
    return 0;
  }

  const ResourcePath& path = std::get<ResourcePath>(mapped);
  for (const auto& directory : path.directories) CheckPlainName(directory);
  if (!path.name.empty()) CheckPlainName(path.name);
  // The query and fragment never become part of the path.
  FUZZ_CHECK(path.RelativePath().find_first_of("?#") == std::string::npos ||
             target.substr(0, target.find_first_of("?#")).find('%') != std::string_view::npos);

  const auto round_trip = MapTargetToPath(EncodedTarget(path, prefix), prefix);
  FUZZ_CHECK(std::holds_alternative<ResourcePath>(round_trip));
  const ResourcePath& again = std::get<ResourcePath>(round_trip);
  FUZZ_CHECK(again.directories == path.directories && again.name == path.name);
  return 0;
}
