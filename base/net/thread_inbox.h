#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

namespace fencegate::adapters {

// Work handed to a network thread by other threads: store writers, token verifiers, the lock
// service's clock, file I/O threads. A network thread's io_context runs with
// BOOST_ASIO_CONCURRENCY_HINT_UNSAFE, without the scheduler and reactor locks that Asio takes
// around every completion (about 7 lock/unlock pairs per proxied request), so no other thread
// may post to it or start an operation on it. Other threads append here instead; the first
// append of a batch writes an eventfd that the io_context reads, and the thread runs the batch
// in posting order from that read's completion.
//
// An io_context service, created on the network thread's io_context before its thread starts
// (Install); PostToThread finds it from any thread.
class ThreadInbox final : public boost::asio::execution_context::service {
 public:
  static boost::asio::execution_context::id id;

  explicit ThreadInbox(boost::asio::io_context& ioc);
  ~ThreadInbox() override;

  // Creates the inbox of `ioc` and starts watching its eventfd. Call before ioc runs on its
  // thread. Returns the new inbox.
  static ThreadInbox& Install(boost::asio::io_context& ioc);

  // Any thread. `task` (a move-only callable taking no argument) runs later on the
  // io_context's thread; from that thread itself it is simply posted. A task posted after the
  // io_context stopped is destroyed with the io_context, unrun, as Asio does with handlers it
  // never ran.
  template <typename Task>
  void Post(Task&& task) {
    if (ioc_.get_executor().running_in_this_thread()) {
      boost::asio::post(ioc_, std::forward<Task>(task));
    } else {
      Enqueue(std::make_unique<Held<std::decay_t<Task>>>(std::forward<Task>(task)));
    }
  }

 private:
  struct Entry {
    virtual ~Entry() = default;
    virtual void Run() = 0;
  };
  template <typename Task>
  struct Held final : Entry {
    explicit Held(Task&& t) : task(std::move(t)) {}
    explicit Held(const Task& t) : task(t) {}
    void Run() override { task(); }
    Task task;
  };

  void shutdown() override;
  void Enqueue(std::unique_ptr<Entry> entry);
  void Watch();  // arms the eventfd read; on the io_context's thread (or before it runs)
  void Drain();

  boost::asio::io_context& ioc_;
  int event_fd_;  // written by Enqueue; open until the inbox is destroyed
  boost::asio::posix::stream_descriptor wake_;  // a duplicate of event_fd_, read by the thread
  std::uint64_t wake_count_ = 0;                // the eventfd read's buffer
  std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> pending_;  // under mu_
  bool woken_ = false;  // under mu_: the eventfd was written and the drain has not begun
  std::vector<std::unique_ptr<Entry>> draining_;  // the io_context's thread only
};

// Runs `task` on the thread that runs `ioc`, from any thread: through the ThreadInbox of an
// io_context that has one (a network thread's), otherwise with boost::asio::post (an
// io_context with Asio's own locking, as in unit tests).
template <typename Task>
void PostToThread(boost::asio::io_context& ioc, Task&& task) {
  if (boost::asio::has_service<ThreadInbox>(ioc)) {
    boost::asio::use_service<ThreadInbox>(ioc).Post(std::forward<Task>(task));
  } else {
    boost::asio::post(ioc, std::forward<Task>(task));
  }
}

}  // namespace fencegate::adapters
