#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/fence_key_template.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// The gateway's side of adapters::ResourceFence for one session: the fenced request whose body
// names the resources it writes (an S3 DeleteObjects). Each path is put in the canonical
// spelling and rendered through the route's fence_key template, as a request to that path
// alone would be; the keys are admitted one after another in sorted order, all or none, under
// the same rules as the session's own admission (the route's advance bound, the policy's
// advance grants, signed tokens per key). Lives in the session and is reset per request.
class ResourceFenceAdmission : public adapters::ResourceFence {
 public:
  // Whether one key may be admitted, and how far its fence may be raised.
  struct KeyPolicy {
    std::optional<adapters::Problem> refused{};     // the key is not admitted: this problem
    std::optional<lockstore::Token> max_advance{};  // AdmissionController::Admit's bound
    bool advance_forbidden = false;                 // the bound is the policy's (no advance)
  };
  struct Context {
    lockstore::AdmissionController* admission = nullptr;
    const lockstore::FenceKeyTemplate* fence_key = nullptr;
    std::string host{};
    std::string route{};
    lockstore::Token token = 0;
    std::string request_id{};
    bool disclose_highest_token = true;
    std::function<KeyPolicy(std::string_view key)> policy{};
    // Runs a function on the session's network thread, later (never inside the call).
    std::function<void(std::function<void()>)> post{};
  };

  // A new request whose resources this admits.
  void Begin(Context context);
  bool engaged() const { return context_.admission != nullptr; }

  void AdmitAll(std::vector<std::string> paths, Handler done) override;

  // Completes every admitted key: the forward is over. The refusal's facts stay until Reset().
  void CompleteAll();
  // Forgets the request (completing what is still admitted): the next one begins.
  void Reset();

  // After a stale refusal: the first stale key (sorted order) and its fence's highest token.
  const std::string& stale_key() const { return stale_key_; }
  std::optional<lockstore::Token> stale_highest() const { return stale_highest_; }

 private:
  void AdmitNext();
  void OnDecision(const lockstore::AdmissionDecision& decision);
  void Refuse(adapters::Problem problem);
  void Deliver(Verdict verdict);

  Context context_;
  Handler done_;
  std::vector<std::string> keys_;   // sorted, each once
  std::vector<std::string> paths_;  // the path each key came from, same order
  std::size_t next_ = 0;            // keys_[0, next_) are admitted
  bool advance_forbidden_ = false;  // the policy of keys_[next_]
  std::string stale_key_;
  std::optional<lockstore::Token> stale_highest_;
};

}  // namespace fencegate::gateway
