#include "base/encoding/xml_tree.h"

#include <expat.h>

#include <climits>
#include <memory>

namespace fencegate::encoding {
namespace {

// Expat joins a namespace URI and a local name with this; neither can contain it.
constexpr char kNamespaceSeparator = '\n';

struct TreeBuilder {
  XML_Parser parser = nullptr;
  std::optional<XmlElement> root;
  // The open elements, innermost last. A parent's children only grow once the child before is
  // closed, so these pointers stay valid.
  std::vector<XmlElement*> open;
};

void StartElement(void* data, const XML_Char* qualified, const XML_Char** /*attributes*/) {
  auto& builder = *static_cast<TreeBuilder*>(data);
  if (builder.open.size() == kMaxXmlDepth) {
    XML_StopParser(builder.parser, XML_FALSE);
    return;
  }
  XmlElement element;
  const std::string_view name(qualified);
  const std::size_t separator = name.find(kNamespaceSeparator);
  if (separator == std::string_view::npos) {
    element.name = name;
  } else {
    element.ns = name.substr(0, separator);
    element.name = name.substr(separator + 1);
  }
  if (builder.open.empty()) {
    builder.root = std::move(element);
    builder.open.push_back(&*builder.root);
  } else {
    auto& siblings = builder.open.back()->children;
    siblings.push_back(std::move(element));
    builder.open.push_back(&siblings.back());
  }
}

void EndElement(void* data, const XML_Char* /*name*/) {
  static_cast<TreeBuilder*>(data)->open.pop_back();
}

void CharacterData(void* data, const XML_Char* text, int length) {
  auto& builder = *static_cast<TreeBuilder*>(data);
  if (!builder.open.empty())
    builder.open.back()->text.append(text, static_cast<std::size_t>(length));
}

struct ParserFree {
  void operator()(XML_Parser parser) const { XML_ParserFree(parser); }
};

}  // namespace

const XmlElement* XmlElement::Child(std::string_view element_ns,
                                    std::string_view local_name) const {
  for (const XmlElement& child : children) {
    if (child.Is(element_ns, local_name)) return &child;
  }
  return nullptr;
}

std::optional<XmlElement> ParseXmlTree(std::string_view document) {
  if (document.size() > INT_MAX) return std::nullopt;
  const std::unique_ptr<XML_ParserStruct, ParserFree> parser(
      XML_ParserCreateNS(nullptr, kNamespaceSeparator));
  if (!parser) return std::nullopt;
  TreeBuilder builder;
  builder.parser = parser.get();
  XML_SetUserData(parser.get(), &builder);
  XML_SetElementHandler(parser.get(), StartElement, EndElement);
  XML_SetCharacterDataHandler(parser.get(), CharacterData);
  if (XML_Parse(parser.get(), document.data(), static_cast<int>(document.size()), XML_TRUE) !=
      XML_STATUS_OK) {
    return std::nullopt;
  }
  return std::move(builder.root);
}

}  // namespace fencegate::encoding
