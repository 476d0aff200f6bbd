#include "gateway/session/fenced_write.h"

#include <utility>

namespace fencegate::gateway {

void FencedWrite::Reset() {
  fence_key_.clear();
  token_.reset();
  highest_.reset();
  barrier_wait_ = std::chrono::nanoseconds{0};
  admitted_ = false;
  abandoned_ = false;
  write_cut_ = false;
}

std::optional<lockstore::AdmissionDecision> FencedWrite::Admit(
    std::string_view request_id, std::optional<lockstore::Token> max_advance,
    lockstore::AdmissionController::Callback late) {
  return admission_->Admit(fence_key_, *token_, request_id, std::move(late), max_advance);
}

bool FencedWrite::AbandonBarrierWait(std::chrono::nanoseconds waited) {
  if (abandoned_) return false;
  abandoned_ = true;
  barrier_wait_ = waited;
  return true;
}

bool FencedWrite::AcceptLateDecision(const lockstore::AdmissionDecision& decision) {
  if (!abandoned_) return true;
  // The client already got 503 and the connection is closed: release the fence at once.
  if (decision.kind == lockstore::AdmissionDecision::Kind::kAdmitted) {
    admission_->Complete(fence_key_, *token_);
  }
  return false;
}

bool FencedWrite::Complete() {
  if (!admitted_) return false;
  admitted_ = false;
  admission_->Complete(fence_key_, *token_);
  return true;
}

}  // namespace fencegate::gateway
