#pragma once

#include <string>
#include <string_view>

namespace fencegate::encoding {

// Appends `text` as XML character data or attribute value: '&', '<', '>', '"' and '\'' become
// entity references; every other byte passes as it is.
void AppendXmlEscaped(std::string_view text, std::string* out);

}  // namespace fencegate::encoding
