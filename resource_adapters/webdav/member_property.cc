#include "resource_adapters/webdav/member_property.h"

#include "base/encoding/hex.h"
#include "base/encoding/percent.h"

namespace fencegate::adapters::webdav {

std::optional<MemberProperty> MemberPropertyOf(std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  // A collection's path may end in '/': its name is the segment before.
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  const std::string_view name = path.substr(slash + 1);
  if (name.empty()) return std::nullopt;
  // A name with a malformed escape is taken as it is: the server refuses such paths anyway.
  const std::optional<std::string> decoded = encoding::PercentDecode(name);
  std::string property = "member-";
  encoding::AppendHex(decoded ? std::string_view(*decoded) : name, &property);
  return MemberProperty{std::string(path.substr(0, slash + 1)), std::move(property)};
}

}  // namespace fencegate::adapters::webdav
