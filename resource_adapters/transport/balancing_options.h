#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// What a backend with several servers is configured with (README "Backends with several
// servers"): the servers, how a request picks one, how their health is learned, and the limits
// on what the whole process sends to the backend. Plain types only: the configuration headers
// hold them.

namespace fencegate::adapters {

// One configured server: `url` as written (the `server` label of its metrics and its name in
// /admin/backends), and the address parsed from it.
struct ServerAddress {
  std::string url;
  std::string host;
  std::uint16_t port = 80;
  bool tls = false;
  unsigned weight = 1;  // 1..1000
};

enum class BalancingPolicy {
  kRoundRobin,    // weighted (smooth weighted round robin, as nginx's)
  kLeastRequest,  // power of two choices on the requests in flight
  kFenceKey,      // consistent hashing on the fence key (rendezvous, weighted)
};

// Active checks: a GET of `path` to each server every `interval`, from a network thread.
struct HealthCheckOptions {
  std::string path = "/";
  std::chrono::milliseconds interval{5000};
  std::chrono::milliseconds timeout{1000};
  unsigned healthy_threshold = 2;    // passes in a row that make an unhealthy server healthy
  unsigned unhealthy_threshold = 3;  // failures in a row that make a healthy server unhealthy
  // Statuses that pass: [expected_status_min, expected_status_max] (`expected_status: 200` or
  // `expected_status: 200-399`).
  unsigned expected_status_min = 200;
  unsigned expected_status_max = 399;
};

// Passive outlier ejection (Envoy's outlier detection, consecutive failures only).
struct OutlierOptions {
  // Responses with status >= 500 in a row that eject a server (0: 5xx never eject). A failed
  // connect or TLS handshake ejects at once: no request got through.
  unsigned consecutive_failures = 5;
  // The first ejection lasts this long, each further one twice as long as the last, up to
  // max_ejection_time.
  std::chrono::milliseconds base_ejection_time{30000};
  std::chrono::milliseconds max_ejection_time{300000};
  // At most this share of the servers is ejected for 5xx at once. A server that refuses
  // connections is unusable whatever this says.
  unsigned max_ejected_percent = 50;
};

// Per backend, counted across the whole process (all network threads); 0: no limit.
struct BackendLimits {
  std::size_t max_connections = 0;  // upstream connections open, idle ones included
  std::size_t max_pending = 0;      // requests being forwarded to the backend at once
};

struct BalancingOptions {
  // Empty: the backend's one `url` (the adapters fill it in from UpstreamOptions).
  std::vector<ServerAddress> servers;
  BalancingPolicy policy = BalancingPolicy::kRoundRobin;
  std::optional<HealthCheckOptions> health_check;  // none: no active checks
  OutlierOptions outlier;
  BackendLimits limits;
  // Names are looked up again this often (getaddrinfo gives no TTL); new addresses are used for
  // new connections. Zero: resolved once.
  std::chrono::milliseconds resolve_interval{30000};
};

}  // namespace fencegate::adapters
