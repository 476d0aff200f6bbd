#include "base/encoding/xml_escape.h"

namespace fencegate::encoding {

void AppendXmlEscaped(std::string_view text, std::string* out) {
  out->reserve(out->size() + text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out->append("&amp;");
        break;
      case '<':
        out->append("&lt;");
        break;
      case '>':
        out->append("&gt;");
        break;
      case '"':
        out->append("&quot;");
        break;
      case '\'':
        out->append("&apos;");
        break;
      default:
        out->push_back(c);
    }
  }
}

}  // namespace fencegate::encoding
