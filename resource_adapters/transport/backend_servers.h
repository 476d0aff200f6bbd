#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "resource_adapters/transport/backend_monitor.h"
#include "resource_adapters/transport/server_choice.h"
#include "resource_adapters/transport/upstream_options.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::adapters {

// What the factory of a networked backend (http, s3, webdav) keeps of its servers: their
// shared state, how connections to them are opened, and whether their monitor runs yet.
struct BackendServers {
  std::shared_ptr<UpstreamServers> servers;
  ServerConnectSettings connect;
  std::atomic<bool> monitor_started{false};

  // Starts the backend's monitor on `ioc` for the first caller (the first thread that creates
  // an adapter); null for every later one. The caller stops it on that thread.
  std::shared_ptr<BackendMonitor> StartMonitorOnce(boost::asio::io_context& ioc);
};

// The servers of a backend from its options: `balancing.servers`, or the one host/port/tls
// server when that is empty. Names are resolved once here (start-up, as before; the monitor
// resolves them again on its interval); a client TLS context is built when a server is https.
// Null with `error` set when the TLS settings are unusable.
std::shared_ptr<BackendServers> MakeBackendServers(const UpstreamOptions& options,
                                                   std::string* error);

// How connections to `servers` are opened, from the backend's options: a client TLS context
// when a server is https. False with `error` set when the TLS settings are unusable.
bool MakeConnectSettings(const UpstreamOptions& options, const UpstreamServers& servers,
                         ServerConnectSettings* connect, std::string* error);

// Stops a monitor started by StartMonitorOnce (null: nothing), on the thread that started it.
void StopMonitor(std::shared_ptr<BackendMonitor>& monitor);

}  // namespace fencegate::adapters
