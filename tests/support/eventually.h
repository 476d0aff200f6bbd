#pragma once

#include <chrono>
#include <functional>

namespace fencegate::integration {

// Polls `condition` every 10 ms until it holds or `limit` passes; returns whether it held. For
// waiting on a state a component reports (a metric, an admin endpoint, a log line, a file, a
// socket), never for asserting on durations.
bool Eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds limit = std::chrono::seconds(20));

}  // namespace fencegate::integration
