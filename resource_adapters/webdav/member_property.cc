#include "resource_adapters/webdav/member_property.h"

namespace fencegate::adapters::webdav {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A '%' not followed by two hex digits is kept as it is (the server refuses such paths).
std::string PercentDecode(std::string_view text) {
  std::string decoded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      decoded += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      decoded += text[i];
    }
  }
  return decoded;
}

}  // namespace

std::optional<MemberProperty> MemberPropertyOf(std::string_view path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  // A collection's path may end in '/': its name is the segment before.
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  const std::string_view name = path.substr(slash + 1);
  if (name.empty()) return std::nullopt;
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string property = "member-";
  for (const unsigned char c : PercentDecode(name)) {
    property += kDigits[c >> 4];
    property += kDigits[c & 0xf];
  }
  return MemberProperty{std::string(path.substr(0, slash + 1)), std::move(property)};
}

}  // namespace fencegate::adapters::webdav
