#include "base/net/thread_inbox.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <boost/asio/buffer.hpp>

namespace fencegate::adapters {

boost::asio::execution_context::id ThreadInbox::id;

namespace {

int OpenEventFd() {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  return fd;
}

int Duplicate(int fd) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) throw std::system_error(errno, std::generic_category(), "dup eventfd");
  return copy;
}

}  // namespace

ThreadInbox::ThreadInbox(boost::asio::io_context& ioc)
    : boost::asio::execution_context::service(ioc),
      ioc_(ioc),
      event_fd_(OpenEventFd()),
      wake_(ioc, Duplicate(event_fd_)) {}

ThreadInbox::~ThreadInbox() { ::close(event_fd_); }

ThreadInbox& ThreadInbox::Install(boost::asio::io_context& ioc) {
  auto& inbox = boost::asio::use_service<ThreadInbox>(ioc);
  inbox.Watch();
  return inbox;
}

void ThreadInbox::shutdown() {
  std::vector<std::unique_ptr<Entry>> unrun;
  {
    std::lock_guard lock(mu_);
    unrun.swap(pending_);
  }
  boost::system::error_code ignored;
  wake_.close(ignored);
  // Destroyed now, while the io_context's services are shut down but none is destroyed yet: a
  // task may hold the last reference to a session, whose sockets still need their service
  // (Asio's scheduler destroys the handlers it never ran at the same point).
}

void ThreadInbox::Enqueue(std::unique_ptr<Entry> entry) {
  {
    std::lock_guard lock(mu_);
    pending_.push_back(std::move(entry));
    if (woken_) return;
    woken_ = true;
  }
  // Outside mu_: the write can wake the network thread, which takes mu_ to drain; on a shared
  // CPU it would preempt this thread while it still held the lock. event_fd_ stays open for the
  // inbox's whole life (the io_context watches a duplicate, closed at shutdown), so the write
  // never lands on a reused descriptor number. The counter cannot overflow at one write per
  // batch.
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(event_fd_, &one, sizeof one);
}

void ThreadInbox::Watch() {
  wake_.async_read_some(boost::asio::buffer(&wake_count_, sizeof wake_count_),
                        [this](boost::system::error_code ec, std::size_t) {
                          if (ec) return;  // closed at shutdown
                          Drain();
                          Watch();
                        });
}

void ThreadInbox::Drain() {
  {
    std::lock_guard lock(mu_);
    draining_.swap(pending_);
    woken_ = false;
  }
  // A task may post again (another network thread's completion, a nested hop): it goes to
  // pending_ and wakes the next drain.
  for (auto& entry : draining_) entry->Run();
  draining_.clear();
}

}  // namespace fencegate::adapters
