#pragma once

#include <cstdint>
#include <string>

#include "base/encoding/rfc3339.h"

namespace fencegate::gateway {

// RFC 3339 UTC with milliseconds, as the event log writes it too.
using encoding::AppendRfc3339Ms;

// Wall-clock Unix milliseconds.
std::int64_t NowUnixMs();

}  // namespace fencegate::gateway
