#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "gateway/server/config_generation.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// A network thread's view of one ConfigGeneration: its adapters on that thread's io_context
// (the backends', then the peers'), and how many of the thread's sessions use it. Touched only
// on its thread, so sessions count without atomics; freed when it is not the thread's current
// view and its last session ends.
struct ThreadGeneration {
  std::shared_ptr<const ConfigGeneration> generation;
  // Shared with the thread's other views when the backend's factory is the same: a reload that
  // leaves a backend alone keeps its adapter and upstream connection pool.
  std::vector<std::shared_ptr<adapters::ResourceAdapter>> adapters;
  std::size_t sessions = 0;

  adapters::ResourceAdapter& adapter(std::size_t index) const { return *adapters[index]; }
};

}  // namespace fencegate::gateway
