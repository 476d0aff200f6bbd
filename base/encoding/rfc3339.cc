#include "base/encoding/rfc3339.h"

#include <cstdio>
#include <ctime>

namespace fencegate::encoding {

void AppendRfc3339Ms(std::int64_t unix_ms, std::string* out) {
  std::int64_t seconds = unix_ms / 1000;
  std::int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  const int n = std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                              tm.tm_sec, static_cast<int>(millis));
  if (n > 0) out->append(text, static_cast<std::size_t>(n));
}

}  // namespace fencegate::encoding
