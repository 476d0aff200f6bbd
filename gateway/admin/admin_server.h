#pragma once

#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gateway/admin/admin_api.h"
#include "gateway/server/gateway_context.h"
#include "gateway/tls/listener_tls.h"

namespace fencegate::gateway {

// The operator listener: one thread with its own io_context, so a slow store read behind
// /admin/... never stalls traffic. TLS when `tls` is enabled (config `tls.admin`).
class AdminServer {
 public:
  AdminServer(const GatewayContext& context, const tls::ListenerTls& tls);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Binds and listens; on failure a status naming the cause.
  lockstore::Status Listen(const boost::asio::ip::tcp::endpoint& endpoint);
  boost::asio::ip::tcp::endpoint local_endpoint() const;
  // POST /admin/reload's way to the reload thread (before Start()).
  void SetReloader(AdminReloader reloader) {
    api_.SetReloader(std::move(reloader), ioc_.get_executor());
  }
  void Start();
  void Stop();  // thread-safe
  void Join();  // after Stop(): waits for the request being handled, if any

 private:
  void Accept();
  // Once a second: the route counters into context.traffic_series (GET /admin/summary), on this
  // thread, which is also the only one that reads the series.
  void SampleTraffic();

  const GatewayContext& context_;
  AdminApi api_;
  const tls::ListenerTls& tls_;
  boost::asio::io_context ioc_{1};
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer sample_timer_{ioc_};
  std::thread thread_;
};

}  // namespace fencegate::gateway
