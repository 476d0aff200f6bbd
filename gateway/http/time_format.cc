#include "gateway/http/time_format.h"

#include <chrono>

namespace fencegate::gateway {

std::int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace fencegate::gateway
