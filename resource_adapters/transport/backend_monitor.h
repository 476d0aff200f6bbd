#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include "base/tls_client/client_tls_options.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::adapters {

// Watches the servers of one backend from a network thread, without blocking it: the active
// health checks (BalancingOptions::health_check; a GET of the path to each server, plain or
// TLS as the server's url says) and the periodic re-resolution of server names
// (resolve_interval; Asio's resolver does the lookup off the thread). What it learns goes to
// UpstreamServers. Started once per backend, on the first network thread that creates an
// adapter for it; stopped by whoever started it, before that thread's io_context goes.
class BackendMonitor {
 public:
  virtual ~BackendMonitor() = default;

  // Starts the checks and the resolves on `ioc`. `tls_context` is the backend's client context
  // (null for plain servers).
  static std::shared_ptr<BackendMonitor> Start(
      boost::asio::io_context& ioc, std::shared_ptr<UpstreamServers> servers,
      std::shared_ptr<boost::asio::ssl::context> tls_context,
      tls_client::ClientTlsOptions tls_options);

  // Cancels what is outstanding; no check or resolve starts afterwards. Call on the thread of
  // the io_context given to Start.
  virtual void Stop() = 0;
};

}  // namespace fencegate::adapters
