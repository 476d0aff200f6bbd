#pragma once

#include <string_view>

namespace fencegate::adapters {

// The request field a client presents its fencing token in. The gateway has read it; the http
// and s3 adapters do not pass the client's own copy on.
inline constexpr std::string_view kClientTokenField = "Fencing-Token";

}  // namespace fencegate::adapters
