#pragma once

#include <cstdint>
#include <string>

namespace fencegate::encoding {

// Appends Unix milliseconds as RFC 3339 UTC with milliseconds: "2026-12-02T10:17:00.123Z".
void AppendRfc3339Ms(std::int64_t unix_ms, std::string* out);

}  // namespace fencegate::encoding
