#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "gateway/server/config_generation.h"

namespace fencegate::gateway {

// The configuration generation in force, for readers off the network threads (the admin
// listener's authentication). Network threads keep their own view (NetworkThread), never this.
class GenerationSlot {
 public:
  std::shared_ptr<const ConfigGeneration> Current() const {
    std::lock_guard lock(mutex_);
    return current_;
  }
  void Set(std::shared_ptr<const ConfigGeneration> generation) {
    std::lock_guard lock(mutex_);
    current_ = std::move(generation);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const ConfigGeneration> current_;
};

}  // namespace fencegate::gateway
