#include "resource_adapters/webdav/dav_xml.h"

#include <charconv>

#include "base/encoding/xml_tree.h"

namespace fencegate::adapters::webdav {

using encoding::ParseXmlTree;
using encoding::XmlElement;

namespace {

std::string_view Trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

constexpr std::string_view kDav = "DAV:";

// The status code of a DAV:status element ("HTTP/1.1 200 OK"), or 0 when it has none.
unsigned StatusCode(const XmlElement* status) {
  if (status == nullptr) return 0;
  const std::string_view line = Trim(status->text);
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos) return 0;
  const std::string_view code = line.substr(space + 1, 3);
  unsigned value = 0;
  const auto [ptr, ec] = std::from_chars(code.data(), code.data() + code.size(), value);
  return ec == std::errc{} && ptr == code.data() + code.size() && code.size() == 3 ? value : 0;
}

bool IsSuccessStatus(unsigned status) { return status >= 200 && status < 300; }

// Calls `visit(element, propstat_status)` for every element below `element`, with the status of
// the DAV:propstat it sits in (0 outside any propstat).
template <typename Visit>
void ForEachElement(const XmlElement& element, unsigned propstat_status, const Visit& visit) {
  if (element.Is(kDav, "propstat")) propstat_status = StatusCode(element.Child(kDav, "status"));
  visit(element, propstat_status);
  for (const XmlElement& child : element.children) ForEachElement(child, propstat_status, visit);
}

}  // namespace

std::string LockRequestBody(std::string_view owner) {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
         "<D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/></D:lockscope>"
         "<D:locktype><D:write/></D:locktype><D:owner>" +
         std::string(owner) + "</D:owner></D:lockinfo>";
}

std::string PropfindLockDiscoveryBody() {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
         "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:lockdiscovery/></D:prop></D:propfind>";
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
  const std::optional<XmlElement> root = ParseXmlTree(multistatus);
  if (!root) return {StoredToken::Kind::kUnreadable, 0};
  std::optional<StoredToken> found;
  ForEachElement(*root, 0, [&](const XmlElement& element, unsigned propstat_status) {
    if (found || !element.Is(kTokenNamespace, property)) return;
    if (propstat_status != 0 && !IsSuccessStatus(propstat_status)) return;
    const std::string_view text = Trim(element.text);
    if (text.empty() && element.children.empty()) return;  // listed, without a value
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() || !element.children.empty()) {
      found = StoredToken{StoredToken::Kind::kMalformed, 0};
    } else {
      found = StoredToken{StoredToken::Kind::kValue, value};
    }
  });
  return found.value_or(StoredToken{});
}

bool ProppatchSucceeded(std::string_view multistatus, std::string_view property) {
  const std::optional<XmlElement> root = ParseXmlTree(multistatus);
  if (!root || !root->Is(kDav, "multistatus")) return false;
  bool set = false;
  bool failed = false;
  ForEachElement(*root, 0, [&](const XmlElement& element, unsigned propstat_status) {
    if (element.Is(kDav, "response")) {
      const unsigned status = StatusCode(element.Child(kDav, "status"));
      if (status != 0 && !IsSuccessStatus(status)) failed = true;
    } else if (element.Is(kDav, "propstat")) {
      if (!IsSuccessStatus(propstat_status)) failed = true;
    } else if (element.Is(kTokenNamespace, property) && IsSuccessStatus(propstat_status)) {
      set = true;
    }
  });
  return set && !failed;
}

bool MultistatusReportsLocked(std::string_view multistatus) {
  const std::optional<XmlElement> root = ParseXmlTree(multistatus);
  if (!root) return false;
  bool locked = false;
  ForEachElement(*root, 0, [&](const XmlElement& element, unsigned) {
    if (element.Is(kDav, "status") && StatusCode(&element) == 423) locked = true;
  });
  return locked;
}

std::vector<ActiveLock> ParseActiveLocks(std::string_view multistatus) {
  const std::optional<XmlElement> root = ParseXmlTree(multistatus);
  std::vector<ActiveLock> locks;
  if (!root) return locks;
  ForEachElement(*root, 0, [&](const XmlElement& element, unsigned propstat_status) {
    if (!element.Is(kDav, "activelock") || !IsSuccessStatus(propstat_status)) return;
    const XmlElement* locktoken = element.Child(kDav, "locktoken");
    const XmlElement* href = locktoken == nullptr ? nullptr : locktoken->Child(kDav, "href");
    if (href == nullptr) return;
    const std::string_view uri = Trim(href->text);
    if (uri.empty() || uri.find_first_of("<> \t") != std::string_view::npos) return;
    const XmlElement* owner = element.Child(kDav, "owner");
    locks.push_back({"<" + std::string(uri) + ">",
                     owner == nullptr ? std::string() : std::string(Trim(owner->text))});
  });
  return locks;
}

std::optional<std::string> ParseLockDiscoveryToken(std::string_view lock_response) {
  const std::optional<XmlElement> root = ParseXmlTree(lock_response);
  if (!root || !root->Is(kDav, "prop")) return std::nullopt;
  const XmlElement* discovery = root->Child(kDav, "lockdiscovery");
  if (discovery == nullptr) return std::nullopt;
  std::optional<std::string> token;
  for (const XmlElement& lock : discovery->children) {
    const XmlElement* locktoken =
        lock.Is(kDav, "activelock") ? lock.Child(kDav, "locktoken") : nullptr;
    const XmlElement* href = locktoken == nullptr ? nullptr : locktoken->Child(kDav, "href");
    if (href == nullptr) continue;
    const std::string_view uri = Trim(href->text);
    if (token || uri.empty() || uri.find_first_of("<> \t") != std::string_view::npos) {
      return std::nullopt;
    }
    token = "<" + std::string(uri) + ">";
  }
  return token;
}

std::optional<std::string> ParseLockTokenHeader(std::string_view value) {
  value = Trim(value);
  if (value.size() < 3 || value.front() != '<' || value.back() != '>') return std::nullopt;
  if (value.find_first_of("<>", 1) != value.size() - 1) return std::nullopt;
  return std::string(value);
}

}  // namespace fencegate::adapters::webdav
