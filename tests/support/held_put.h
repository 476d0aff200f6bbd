#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <string>

#include "tests/support/http_client.h"

namespace fencegate::integration {

// A PUT with Fencing-Token `token` that the RecordingBackend holds for `delay_ms` before it
// answers (X-Test-Delay-Ms), sent on its own thread: the write still in flight that the drain,
// barrier and limit tests need. The future holds the answer (nullopt: none came).
inline std::future<std::optional<Response>> PutHeldAtBackend(std::uint16_t port, std::string target,
                                                             std::string token, int delay_ms,
                                                             std::string body) {
  return std::async(std::launch::async, [=] {
    return Fetch(
        port, MakeRequest(http::verb::put, target,
                          {{"Fencing-Token", token}, {"X-Test-Delay-Ms", std::to_string(delay_ms)}},
                          body));
  });
}

}  // namespace fencegate::integration
