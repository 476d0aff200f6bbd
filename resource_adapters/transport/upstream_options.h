#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/tls_client/client_tls_options.h"
#include "resource_adapters/transport/balancing_options.h"

namespace fencegate::adapters {

// How the gateway reaches one backend server over HTTP/1.1: the connection settings every
// networked backend kind shares (http, webdav, s3), read from the same backend keys (url or
// endpoint, tls_*, connect_timeout, response_timeout, max_idle_connections, idle_timeout). Each
// kind's options derive from it, so that the adapters read `options.host` as before and the
// config reader fills these keys in one place. The defaults are the http backend's; a kind may
// set its own in its constructor.
struct UpstreamOptions {
  // Backend address; `tls` for an https:// url.
  std::string host = "127.0.0.1";
  std::uint16_t port = 80;
  bool tls = false;
  tls_client::ClientTlsOptions tls_options;  // when `tls`; server_name empty: `host`
  std::chrono::milliseconds connect_timeout{5000};
  // Time allowed for the backend to send the response header once the request is sent, and
  // for each read/write on the upstream connection (an idle timeout, not a total).
  std::chrono::milliseconds response_timeout{60000};
  // Idle keep-alive connections kept per network thread; more are closed after use.
  std::size_t max_idle_connections = 64;
  // An idle pooled connection older than this is closed instead of reused.
  std::chrono::milliseconds idle_timeout{30000};
  // The backend's servers and how requests are spread over them; `servers` empty: the one
  // server host/port/tls above (the adapter factories fill it in).
  BalancingOptions balancing;
  // The backend's name in the configuration: the `backend` label of its metrics and its name
  // in /admin/backends (UpstreamServers::backend_name). Empty: "host:port".
  std::string backend_name;
};

}  // namespace fencegate::adapters
