#include "resource_adapters/filesystem/resource_path.h"

#include <climits>
#include <optional>

#include "base/encoding/percent.h"

namespace fencegate::adapters {

namespace {

Problem BadPath(std::string detail) {
  return Problem{400, "bad-path", "Bad Request", std::move(detail)};
}

Problem Escapes(std::string detail) {
  return Problem{403, "path-escapes-root", "Forbidden", std::move(detail)};
}

bool IsDotSegment(std::string_view segment) { return segment == "." || segment == ".."; }

// Checks one raw segment and returns its decoded name.
std::variant<std::string, Problem> DecodeSegment(std::string_view raw) {
  if (IsDotSegment(raw)) {
    return Escapes("dot segments are not allowed");
  }
  auto decoded = encoding::PercentDecode(raw);
  if (!decoded) {
    return BadPath("invalid percent escape in path");
  }
  if (decoded->find('\0') != std::string::npos) {
    return BadPath("NUL in path");
  }
  if (decoded->find('/') != std::string::npos || decoded->find('\\') != std::string::npos) {
    return Escapes("encoded path separators are not allowed");
  }
  if (IsDotSegment(*decoded)) {
    return Escapes("dot segments are not allowed");
  }
  if (decoded->size() > NAME_MAX) {
    return PathTooLong("a path component is longer than " + std::to_string(NAME_MAX) + " bytes");
  }
  if (std::string_view(*decoded).starts_with(kReservedNamePrefix)) {
    return Problem{403, "reserved-name", "Forbidden",
                   "names starting with " + std::string(kReservedNamePrefix) + " are reserved"};
  }
  return std::move(*decoded);
}

}  // namespace

Problem PathTooLong(std::string detail) {
  return Problem{414, "path-too-long", "URI Too Long", std::move(detail)};
}

std::string ResourcePath::RelativePath() const {
  std::string path;
  for (const auto& directory : directories) {
    path += directory;
    path += '/';
  }
  path += name;
  return path;
}

std::variant<ResourcePath, Problem> MapTargetToPath(std::string_view target,
                                                    std::string_view route_prefix) {
  std::string_view path = target.substr(0, target.find_first_of("?#"));
  std::string_view rest;
  if (path.starts_with(route_prefix)) {
    rest = path.substr(route_prefix.size());
    if (!route_prefix.ends_with('/') && !rest.empty()) {
      if (!rest.starts_with('/')) {
        return BadPath("target is outside the route prefix");
      }
      rest.remove_prefix(1);
    }
  } else if (route_prefix.ends_with('/') &&
             path == route_prefix.substr(0, route_prefix.size() - 1)) {
    rest = {};
  } else {
    return BadPath("target is outside the route prefix");
  }

  ResourcePath resource;
  if (rest.empty()) {
    return resource;
  }
  if (rest.starts_with('/')) {
    return Escapes("absolute paths are not allowed");
  }
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view raw = rest.substr(0, slash);
    const bool last = slash == std::string_view::npos;
    if (raw.empty()) {
      if (last) {
        break;  // a trailing '/' names a directory: name stays empty
      }
      return BadPath("empty path segment");
    }
    auto decoded = DecodeSegment(raw);
    if (auto* problem = std::get_if<Problem>(&decoded)) {
      return std::move(*problem);
    }
    if (last) {
      resource.name = std::move(std::get<std::string>(decoded));
      break;
    }
    resource.directories.push_back(std::move(std::get<std::string>(decoded)));
    rest.remove_prefix(slash + 1);
  }
  return resource;
}

}  // namespace fencegate::adapters
