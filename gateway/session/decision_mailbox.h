#pragma once

#include <mutex>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "lockstore/fence/admission.h"

namespace fencegate::gateway {

class Session;

// Admission decisions made off a network thread (the fence store's writer after a group
// commit, another network thread releasing a barrier), handed to that network thread in
// batches. A group commit decides a whole round of writes at once; handing each decision
// over on its own would cost the writer an allocated task and, when that thread was waiting
// in epoll, a wake-up to run one task before it slept again. Here the first decision of a
// batch posts one drain (through the thread's ThreadInbox), and the decisions that arrive
// before the drain runs only append to it.
class DecisionMailbox {
 public:
  explicit DecisionMailbox(boost::asio::io_context& ioc) : ioc_(ioc) {}
  DecisionMailbox(const DecisionMailbox&) = delete;
  DecisionMailbox& operator=(const DecisionMailbox&) = delete;

  // Any thread. The session must stay alive until the decision is handed to it (its
  // self_hold_ keeps it while an admission is pending).
  void Deliver(Session* session, const lockstore::AdmissionDecision& decision);

 private:
  struct Entry {
    Session* session;
    lockstore::AdmissionDecision decision;
  };

  void Drain();  // on the network thread

  boost::asio::io_context& ioc_;
  std::mutex mu_;
  std::vector<Entry> pending_;   // under mu_
  bool drain_posted_ = false;    // under mu_
  std::vector<Entry> draining_;  // network thread only; keeps its capacity between drains
};

}  // namespace fencegate::gateway
