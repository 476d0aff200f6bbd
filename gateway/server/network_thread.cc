#include "gateway/server/network_thread.h"
#include "gateway/server/listen_socket.h"

#include <unordered_set>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>

#include "gateway/session/session.h"
#include "gateway/tls/listener_tls.h"

namespace fencegate::gateway {
namespace net = boost::asio;
using tcp = net::ip::tcp;
namespace {

// After a failed accept (out of descriptors) or above max_connections, wait this long before
// accepting again; pending connections wait in the kernel's backlog meanwhile.
constexpr auto kAcceptPause = std::chrono::milliseconds(20);

}  // namespace

NetworkThread::NetworkThread(const GatewayContext& context,
                             std::shared_ptr<const ConfigGeneration> generation,
                             const std::vector<adapters::AdapterFactory*>& peer_factories,
                             std::size_t index)
    : context_(context),
      index_(index),
      inbox_(adapters::ThreadInbox::Install(ioc_)),
      work_(net::make_work_guard(ioc_)),
      acceptor_(ioc_),
      accept_pause_(ioc_),
      error_log_cap_(generation->config.access_log.error_lines_per_second) {
  for (adapters::AdapterFactory* factory : peer_factories) {
    peer_adapters_.push_back(factory->CreateForThread(ioc_));
  }
  ThreadGeneration& first = generations_.emplace_back();
  first.generation = std::move(generation);
  for (adapters::AdapterFactory* factory : first.generation->backend_factories) {
    first.adapters.push_back(factory->CreateForThread(ioc_));
  }
  first.adapters.insert(first.adapters.end(), peer_adapters_.begin(), peer_adapters_.end());
  current_ = &first;
}

void NetworkThread::AdoptGeneration(std::shared_ptr<const ConfigGeneration> generation,
                                    std::function<void()> adopted) {
  inbox_.Post([this, generation = std::move(generation), adopted = std::move(adopted)]() mutable {
    const ConfigGeneration& before = *current_->generation;
    ThreadGeneration next;
    next.generation = std::move(generation);
    for (adapters::AdapterFactory* factory : next.generation->backend_factories) {
      // Adapters belong to this thread's io_context: made here, on the thread.
      std::shared_ptr<adapters::ResourceAdapter> adapter;
      for (std::size_t i = 0; i < before.backend_factories.size(); ++i) {
        if (before.backend_factories[i] == factory) adapter = current_->adapters[i];
      }
      next.adapters.push_back(adapter ? std::move(adapter) : factory->CreateForThread(ioc_));
    }
    next.adapters.insert(next.adapters.end(), peer_adapters_.begin(), peer_adapters_.end());
    ThreadGeneration& previous = *current_;
    current_ = &generations_.emplace_back(std::move(next));
    if (previous.sessions == 0) ForgetGeneration(previous);
    adopted();
  });
}

void NetworkThread::ReleaseGeneration(ThreadGeneration& view) {
  if (--view.sessions != 0 || &view == current_ || released_) return;
  // The last session may end inside a callback of the view's adapter: the adapter goes once
  // that call has returned. No session takes a view that is not current, so it stays unused.
  net::post(ioc_, [this, &view] { ForgetGeneration(view); });
}

void NetworkThread::ForgetGeneration(ThreadGeneration& view) {
  generations_.remove_if([&view](const ThreadGeneration& each) { return &each == &view; });
}

NetworkThread::~NetworkThread() {
  Stop();
  Join();
  ReleaseSessions();
}

lockstore::Status NetworkThread::ShareListener(tcp::acceptor& listener) {
  return ShareListenSocket(listener, acceptor_);
}

tcp::endpoint NetworkThread::local_endpoint() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void NetworkThread::Start() {
  Accept();
  thread_ = std::thread([this] { ioc_.run(); });
}

void NetworkThread::BeginDrain() {
  inbox_.Post([this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    accept_pause_.cancel();
    // CloseIfIdle may end a session, which unregisters itself: iterate over a copy.
    const std::vector<Session*> sessions(sessions_.begin(), sessions_.end());
    for (Session* session : sessions) {
      if (sessions_.count(session) != 0) session->CloseIfIdle();
    }
    // A reload may share an adapter between views: each is shut down once.
    std::unordered_set<adapters::ResourceAdapter*> adapters;
    for (const ThreadGeneration& view : generations_) {
      for (const auto& adapter : view.adapters) {
        if (adapters.insert(adapter.get()).second) adapter->Shutdown();
      }
    }
  });
}

void NetworkThread::Stop() {
  // Before Start() (or after Join()) nothing runs the task: it is destroyed with ioc_.
  inbox_.Post([this] {
    work_.reset();
    ioc_.stop();
  });
}

void NetworkThread::Join() {
  if (thread_.joinable()) thread_.join();
}

void NetworkThread::ReleaseSessions() {
  // After Join, the views go with the thread (its io_context runs no more handlers).
  released_ = true;
  // The adapters first: an exchange they still hold refers to its session as its Downstream.
  for (ThreadGeneration& view : generations_) view.adapters.clear();
  peer_adapters_.clear();
  // A released session may end at once and unregister itself: iterate over a copy.
  const std::vector<Session*> sessions(sessions_.begin(), sessions_.end());
  for (Session* session : sessions) {
    if (sessions_.count(session) != 0) session->ReleaseAtShutdown();
  }
}

void NetworkThread::Accept() {
  if (!acceptor_.is_open()) return;
  // Accepted sockets are bound to ioc_'s concrete executor type (see client_stream.h).
  acceptor_.async_accept(ioc_, [this](boost::system::error_code ec, ClientSocket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void NetworkThread::OnAccept(boost::system::error_code ec, ClientSocket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (!ec) {
    boost::system::error_code ignored;  // Nagle only costs latency
    socket.set_option(tcp::no_delay(true), ignored);
    // A TLS listener's current context: a reload affects only connections accepted after it.
    auto tls = context_.traffic_tls != nullptr ? context_.traffic_tls->Current() : nullptr;
    std::make_shared<Session>(std::move(socket), *this, std::move(tls))->Start();
  }
  const bool over_limit =
      context_.open_connections.load(std::memory_order_relaxed) >=
      static_cast<std::int64_t>(current_->generation->config.limits.max_connections);
  if (ec || over_limit) {
    accept_pause_.expires_after(kAcceptPause);
    accept_pause_.async_wait([this](boost::system::error_code wait_ec) {
      if (!wait_ec) Accept();
    });
    return;
  }
  Accept();
}

}  // namespace fencegate::gateway
