#include "resource_adapters/webdav/dav_xml.h"

#include <charconv>

namespace fencegate::adapters::webdav {

namespace {

std::string_view Trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// True when the element's prefix is bound to kTokenNamespace: by an xmlns attribute of the tag
// itself, or by a declaration anywhere in the document (the responses are small, and their
// declarations sit on the multistatus or response elements).
bool InTokenNamespace(std::string_view document, std::string_view tag, std::string_view prefix) {
  const std::string declaration =
      (prefix.empty() ? std::string("xmlns=\"") : "xmlns:" + std::string(prefix) + "=\"") +
      std::string(kTokenNamespace) + "\"";
  if (tag.find(declaration) != std::string_view::npos) return true;
  return !prefix.empty() && document.find(declaration) != std::string_view::npos;
}

}  // namespace

std::string LockRequestBody() {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
         "<D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/></D:lockscope>"
         "<D:locktype><D:write/></D:locktype><D:owner>fencegate</D:owner></D:lockinfo>";
}

std::string PropfindTokenBody(std::string_view property) {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
         "<D:propfind xmlns:D=\"DAV:\"><D:prop><F:" +
         std::string(property) + " xmlns:F=\"" + std::string(kTokenNamespace) +
         "\"/></D:prop></D:propfind>";
}

std::string ProppatchTokenBody(std::uint64_t token, std::string_view property) {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
         "<D:propertyupdate xmlns:D=\"DAV:\" xmlns:F=\"" +
         std::string(kTokenNamespace) + "\"><D:set><D:prop><F:" + std::string(property) + ">" +
         std::to_string(token) + "</F:" + std::string(property) +
         "></D:prop></D:set></D:propertyupdate>";
}

StoredToken ParseStoredToken(std::string_view multistatus, std::string_view property) {
  std::size_t at = 0;
  while ((at = multistatus.find('<', at)) != std::string_view::npos) {
    const std::size_t close = multistatus.find('>', at);
    if (close == std::string_view::npos) break;
    const std::string_view tag = multistatus.substr(at + 1, close - at - 1);
    at = close + 1;
    if (tag.empty() || tag.front() == '/' || tag.front() == '?' || tag.front() == '!') continue;
    const std::string_view name = tag.substr(0, tag.find_first_of(" \t\r\n/"));
    const std::size_t colon = name.find(':');
    const std::string_view local = colon == std::string_view::npos ? name : name.substr(colon + 1);
    const std::string_view prefix =
        colon == std::string_view::npos ? std::string_view{} : name.substr(0, colon);
    if (local != property || !InTokenNamespace(multistatus, tag, prefix)) continue;
    if (tag.back() == '/') continue;  // <F:fencing-token/>: listed, without a value
    const std::size_t end = multistatus.find('<', at);
    if (end == std::string_view::npos) return {StoredToken::Kind::kMalformed, 0};
    const std::string_view text = Trim(multistatus.substr(at, end - at));
    if (text.empty()) continue;
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size()) {
      return {StoredToken::Kind::kMalformed, 0};
    }
    return {StoredToken::Kind::kValue, value};
  }
  return {};
}

bool ProppatchSucceeded(std::string_view multistatus) {
  // One property per PROPPATCH: its propstat carries the only status line.
  return multistatus.find("HTTP/1.1 200 ") != std::string_view::npos;
}

std::optional<std::string> ParseLockTokenHeader(std::string_view value) {
  value = Trim(value);
  if (value.size() < 3 || value.front() != '<' || value.back() != '>') return std::nullopt;
  if (value.find_first_of("<>", 1) != value.size() - 1) return std::nullopt;
  return std::string(value);
}

}  // namespace fencegate::adapters::webdav
