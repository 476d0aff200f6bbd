#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fencegate::encoding {

// An XML element with its namespace resolved (Expat, namespace-aware): `ns` is the namespace
// URI ("DAV:", "urn:fencegate"; empty when none is in scope), `name` the local name, whatever
// prefix the document used. `text` is the element's own character data, children's excluded.
struct XmlElement {
  std::string ns;
  std::string name;
  std::string text;
  std::vector<XmlElement> children;

  bool Is(std::string_view element_ns, std::string_view local_name) const {
    return ns == element_ns && name == local_name;
  }
  // The first child with that name, or null.
  const XmlElement* Child(std::string_view element_ns, std::string_view local_name) const;
};

// Elements nested deeper than this make the document unreadable: a WebDAV multistatus needs
// about six levels.
inline constexpr std::size_t kMaxXmlDepth = 32;

// The document's root element; nullopt when `document` is not well-formed, namespace-valid XML
// (an unbound prefix, say) or nests deeper than kMaxXmlDepth. External entities are never
// loaded.
std::optional<XmlElement> ParseXmlTree(std::string_view document);

}  // namespace fencegate::encoding
