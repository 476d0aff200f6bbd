#include "base/encoding/percent.h"

#include <boost/url/pct_string_view.hpp>

namespace fencegate::encoding {

std::optional<std::string> PercentDecode(std::string_view text) {
  const auto escaped = boost::urls::make_pct_string_view(text);
  if (!escaped) return std::nullopt;
  return escaped->decode();
}

}  // namespace fencegate::encoding
