#include "resource_adapters/http/upstream_connection_pool.h"

#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/socket_base.hpp>

namespace fencegate::adapters {

namespace {

// A pooled connection must have nothing to read: end-of-stream means the backend closed it,
// and unsolicited bytes mean the stream is out of sync. Peeks without blocking.
bool LooksReusable(UpstreamConnectionPool::Stream& stream) {
  auto& socket = stream.socket();
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  if (ec) {
    return false;
  }
  char byte;
  socket.receive(boost::asio::buffer(&byte, 1), boost::asio::socket_base::message_peek, ec);
  const bool idle = ec == boost::asio::error::would_block;
  socket.non_blocking(false, ec);
  return idle && !ec;
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

std::unique_ptr<UpstreamConnectionPool::Stream> UpstreamConnectionPool::Take() {
  const auto now = std::chrono::steady_clock::now();
  while (!idle_.empty()) {
    IdleConnection candidate = std::move(idle_.back());
    idle_.pop_back();
    if (now - candidate.idle_since < idle_timeout_ && LooksReusable(*candidate.stream)) {
      return std::move(candidate.stream);
    }
    Close(*candidate.stream);
  }
  return nullptr;
}

void UpstreamConnectionPool::Give(std::unique_ptr<Stream> stream) {
  if (max_idle_ == 0) {
    Close(*stream);
    return;
  }
  if (idle_.size() >= max_idle_) {
    Close(*idle_.front().stream);
    idle_.erase(idle_.begin());
  }
  idle_.push_back({std::move(stream), std::chrono::steady_clock::now()});
}

void UpstreamConnectionPool::CloseAll() {
  for (auto& connection : idle_) {
    Close(*connection.stream);
  }
  idle_.clear();
}

}  // namespace fencegate::adapters
