#pragma once

#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "lockstore/fence/admission.h"

namespace fencegate::lockstore::testing {

// Collects the decisions delivered through callbacks.
class Decisions {
 public:
  AdmissionController::Callback Callback() {
    return [this](const AdmissionDecision& decision) {
      std::lock_guard lock(mu_);
      received_.push_back(decision);
    };
  }
  std::vector<AdmissionDecision> received() const {
    std::lock_guard lock(mu_);
    return received_;
  }
  std::size_t size() const { return received().size(); }

 private:
  mutable std::mutex mu_;
  std::vector<AdmissionDecision> received_;
};

// The callback of a write that must be decided at once (the decision is returned, not called
// back).
inline AdmissionController::Callback Unexpected() {
  return [](const AdmissionDecision&) { ADD_FAILURE() << "callback for an immediate decision"; };
}

}  // namespace fencegate::lockstore::testing
