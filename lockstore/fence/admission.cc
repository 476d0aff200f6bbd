#include "lockstore/fence/admission.h"

#include "lockstore/fence/admission_core.h"

namespace fencegate::lockstore {

// Holds the core by shared_ptr: store callbacks outstanding at destruction find it gone (their
// waiters are dropped) instead of touching freed memory.
class AdmissionController::Impl {
 public:
  Impl(FenceStore& store, AdmissionOptions options)
      : core(std::make_shared<AdmissionCore>(store, std::move(options))) {}
  std::shared_ptr<AdmissionCore> core;
};

AdmissionController::AdmissionController(FenceStore& store, AdmissionOptions options)
    : impl_(std::make_unique<Impl>(store, std::move(options))) {}

AdmissionController::~AdmissionController() = default;

std::optional<AdmissionDecision> AdmissionController::Admit(std::string_view key, Token token,
                                                            std::string_view request_id,
                                                            Callback callback,
                                                            std::optional<Token> max_advance) {
  return impl_->core->Admit(key, token, request_id, std::move(callback), max_advance);
}

void AdmissionController::Complete(std::string_view key, Token token) {
  impl_->core->Complete(key, token);
}

void AdmissionController::Repair(FenceRepairRecord record, RepairCallback callback) {
  impl_->core->Repair(std::move(record), std::move(callback));
}

std::size_t AdmissionController::ForgetIdle(
    const std::function<bool(std::string_view key)>& matches) {
  return impl_->core->ForgetIdle(matches);
}

std::optional<FenceView> AdmissionController::Inspect(std::string_view key) {
  return impl_->core->Inspect(key);
}

}  // namespace fencegate::lockstore
