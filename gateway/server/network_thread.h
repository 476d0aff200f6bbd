#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/net/thread_inbox.h"
#include "gateway/http/request_id.h"
#include "gateway/http/trace_context.h"
#include "gateway/observability/error_log_cap.h"
#include "gateway/server/gateway_context.h"
#include "gateway/server/thread_generation.h"
#include "gateway/session/client_stream.h"
#include "gateway/session/decision_mailbox.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

class Session;

// One network thread: its own io_context, its own acceptor (a dup of the process's one
// listening socket, so threads share no locks and accept without a hand-over), its own
// adapter instance per backend, and the sessions it accepted.
//
// Reloads (README "Reloading"): the thread keeps a view (ThreadGeneration) of each
// configuration generation one of its sessions still uses; new sessions take the current one.
class NetworkThread {
 public:
  // `generation`: the configuration at start. `peer_factories`: one per peer replica, whose
  // adapters follow the backends' in every generation. `index`: this thread's place among the
  // network threads, 0 to threads - 1 (its shard of ShardedHistogram metrics).
  NetworkThread(const GatewayContext& context, std::shared_ptr<const ConfigGeneration> generation,
                const std::vector<adapters::AdapterFactory*>& peer_factories, std::size_t index);
  ~NetworkThread();
  NetworkThread(const NetworkThread&) = delete;
  NetworkThread& operator=(const NetworkThread&) = delete;

  // Accepts from `listener` (see ShareListenSocket); on failure a status naming the cause.
  lockstore::Status ShareListener(boost::asio::ip::tcp::acceptor& listener);
  boost::asio::ip::tcp::endpoint local_endpoint() const;

  void Start();       // starts accepting and the thread
  void BeginDrain();  // thread-safe: stop accepting, close idle connections
  void Stop();        // thread-safe: stop the io_context (cuts what is left)
  void Join();
  // After Join(), once nothing outside this thread can call back into its sessions (see
  // Server::Shutdown): destroys the adapters and lets go of every session still holding itself.
  // What else keeps a session (its pending handlers) goes with the io_context.
  void ReleaseSessions();

  // Thread-safe: makes `generation` current for the sessions accepted from now on, with an
  // adapter per backend (the current view's where the backend's factory is the same), then
  // calls `adopted` on this thread.
  void AdoptGeneration(std::shared_ptr<const ConfigGeneration> generation,
                       std::function<void()> adopted);

  // For sessions, on this thread only.
  const GatewayContext& context() const { return context_; }
  // The current view, counted as used by one more session until ReleaseGeneration.
  ThreadGeneration& AcquireGeneration() {
    ++current_->sessions;
    return *current_;
  }
  void ReleaseGeneration(ThreadGeneration& view);
  // False once a reload made another generation current: a session on `view` then ends its
  // connection after the request it serves (Connection: close).
  bool IsCurrent(const ThreadGeneration& view) const { return &view == current_; }
  RequestIdGenerator& request_ids() { return request_ids_; }
  TraceparentGenerator& traceparents() { return traceparents_; }
  ErrorLogCap& error_log_cap() { return error_log_cap_; }
  std::size_t index() const { return index_; }
  void Register(Session* session) { sessions_.insert(session); }
  void Unregister(Session* session) { sessions_.erase(session); }
  // Any thread: late admission decisions for this thread's sessions.
  DecisionMailbox& decisions() { return decisions_; }
  // Any thread: work to run on this thread (see ThreadInbox).
  adapters::ThreadInbox& inbox() { return inbox_; }

 private:
  void Accept();
  void ForgetGeneration(ThreadGeneration& view);
  void OnAccept(boost::system::error_code ec, ClientSocket socket);

  const GatewayContext& context_;
  const std::size_t index_;
  // Sessions unregister in their destructors, which can run while ioc_ is destroyed: declared
  // before ioc_ so it outlives it.
  std::unordered_set<Session*> sessions_;
  // The views sessions still use, the current one last (std::list: sessions point into it).
  // Sessions release theirs in their destructors too: declared before ioc_ for the same reason.
  // Their adapters go in ReleaseSessions, before ioc_.
  std::list<ThreadGeneration> generations_;
  ThreadGeneration* current_ = nullptr;
  bool released_ = false;  // ReleaseSessions ran
  // Its drain is a handler of ioc_: declared before ioc_ so it outlives every pending one.
  DecisionMailbox decisions_{ioc_};
  // Destroyed after every I/O object below, which all belong to it. Only this thread starts
  // and completes operations and posts handlers on it, so Asio's scheduler and reactor locks
  // are switched off (about 7 lock/unlock pairs per proxied request). Other threads hand work
  // over through inbox_.
  boost::asio::io_context ioc_{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE};
  adapters::ThreadInbox& inbox_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::shared_ptr<adapters::ResourceAdapter>> peer_adapters_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_pause_;
  RequestIdGenerator request_ids_;
  TraceparentGenerator traceparents_;
  ErrorLogCap error_log_cap_;
  std::thread thread_;
};

}  // namespace fencegate::gateway
