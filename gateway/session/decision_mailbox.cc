#include "gateway/session/decision_mailbox.h"

#include "base/net/thread_inbox.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {

void DecisionMailbox::Deliver(Session* session, const lockstore::AdmissionDecision& decision) {
  bool post = false;
  {
    std::lock_guard lock(mu_);
    pending_.push_back({session, decision});
    post = !drain_posted_;
    drain_posted_ = true;
  }
  if (post) adapters::PostToThread(ioc_, [this] { Drain(); });
}

void DecisionMailbox::Drain() {
  {
    std::lock_guard lock(mu_);
    draining_.swap(pending_);
    drain_posted_ = false;
  }
  // A session may admit its next request from here; that decision, if late, goes to
  // pending_ and a drain of its own.
  for (Entry& entry : draining_) entry.session->OnLateAdmissionDecision(entry.decision);
  draining_.clear();
}

}  // namespace fencegate::gateway
