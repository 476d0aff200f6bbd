#include "resource_adapters/webdav/dav_connection_pool.h"

#include <sys/socket.h>

#include <cerrno>
#include <utility>

namespace fencegate::adapters::webdav {

namespace {

// An idle connection must have nothing to read: end-of-stream means the server closed it, and
// bytes would put the next response out of step. A non-blocking peek tells without reading.
bool NothingWaiting(DavConnection& connection) {
  char byte;
  const ssize_t received =
      ::recv(connection.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

DavConnectionPool::DavConnectionPool(boost::asio::io_context& ioc,
                                     std::shared_ptr<const WebdavBackend> backend,
                                     std::shared_ptr<ServerConnectionPools> pools)
    : ioc_(ioc), backend_(std::move(backend)), pools_(std::move(pools)) {}

bool DavConnectionPool::Expired(const Idle& idle, std::chrono::steady_clock::time_point now) const {
  return now - idle.since >= backend_->options.idle_timeout;
}

std::shared_ptr<DavConnection> DavConnectionPool::Take(std::size_t server) {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = idle_.size(); i-- > 0;) {
    if (idle_[i].connection->server() != server) continue;
    Idle candidate = std::move(idle_[i]);
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
    if (!Expired(candidate, now) && candidate.connection->Reusable() &&
        NothingWaiting(*candidate.connection)) {
      return std::move(candidate.connection);
    }
    candidate.connection->Close();
  }
  return std::make_shared<DavConnection>(ioc_, backend_, pools_, server);
}

void DavConnectionPool::Give(std::shared_ptr<DavConnection> connection) {
  const auto now = std::chrono::steady_clock::now();
  while (!idle_.empty() && Expired(idle_.front(), now)) {
    idle_.front().connection->Close();
    idle_.erase(idle_.begin());
  }
  if (!connection->Reusable() || backend_->options.max_idle_connections == 0) {
    connection->Close();
    return;
  }
  if (idle_.size() >= backend_->options.max_idle_connections) {
    idle_.front().connection->Close();
    idle_.erase(idle_.begin());
  }
  idle_.push_back({std::move(connection), now});
}

void DavConnectionPool::CloseAll() {
  for (Idle& idle : idle_) idle.connection->Close();
  idle_.clear();
}

}  // namespace fencegate::adapters::webdav
