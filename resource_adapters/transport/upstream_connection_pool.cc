#include "resource_adapters/transport/upstream_connection_pool.h"

#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include "base/net/deadline_clock.h"

namespace fencegate::adapters {

namespace {

// A pooled connection must have nothing to read: end-of-stream means the backend closed it,
// and unsolicited bytes mean the stream is out of sync. One recv with MSG_DONTWAIT peeks
// without blocking; toggling the socket's non-blocking mode around a peek costs two more
// system calls per reused connection.
bool LooksReusable(UpstreamConnectionPool::Stream& stream) {
  char byte;
  const ssize_t received =
      ::recv(stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

void Close(UpstreamConnectionPool::Stream& stream) {
  boost::system::error_code ignored;
  stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  stream.close();
}

}  // namespace

UpstreamConnectionPool::UpstreamConnectionPool(std::size_t max_idle,
                                               std::chrono::milliseconds idle_timeout)
    : max_idle_(max_idle), idle_timeout_(idle_timeout) {}

std::unique_ptr<UpstreamConnectionPool::Stream> UpstreamConnectionPool::Take(Probe probe) {
  const auto now = DeadlineClock::Now();
  while (!idle_.empty()) {
    IdleConnection candidate = std::move(idle_.back());
    idle_.pop_back();
    if (now - candidate.idle_since < idle_timeout_ &&
        (probe == Probe::kOnUse || LooksReusable(*candidate.stream))) {
      return std::move(candidate.stream);
    }
    Close(*candidate.stream);
  }
  return nullptr;
}

void UpstreamConnectionPool::Give(std::unique_ptr<Stream> stream) {
  // No timer may fire on a connection nobody uses.
  stream->lowest().expires_never();
  if (max_idle_ == 0) {
    Close(*stream);
    return;
  }
  if (idle_.size() >= max_idle_) {
    Close(*idle_.front().stream);
    idle_.erase(idle_.begin());
  }
  idle_.push_back({std::move(stream), DeadlineClock::Now()});
}

void UpstreamConnectionPool::CloseAll() {
  for (auto& connection : idle_) {
    Close(*connection.stream);
  }
  idle_.clear();
}

}  // namespace fencegate::adapters
