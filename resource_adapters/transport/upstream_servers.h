#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "resource_adapters/transport/balancing_options.h"

namespace fencegate::adapters {

// The servers of one backend and what the process knows of them: health, ejections, requests
// in flight, open connections, resolved addresses. One instance per backend, shared by every
// network thread's adapter, the health checker and the admin API; everything here is atomic
// or behind a short mutex, so any thread may call any member.
//
// A server is usable when it is not ejected and, if health checks run, its last checks passed
// (it starts usable). Requests pick among usable servers only.
//
// Ejection (passive health): a connect failure ejects the server at once, whatever
// max_ejected_percent says; `consecutive_failures` 5xx responses in a row eject it unless the
// servers ejected would then exceed max_ejected_percent of all servers. The k-th ejection in a
// row lasts base_ejection_time * 2^(k-1), at most max_ejection_time; the row starts again once
// a server has stayed out of ejection for max_ejection_time. When health checks run, an
// ejection also marks the server unhealthy, so it returns once its ejection is over and
// healthy_threshold checks passed (checks during the ejection count). As nginx does with a
// one-server upstream, a backend of one server never ejects it: there is nowhere else to go.
class UpstreamServers {
 public:
  using Clock = std::chrono::steady_clock;
  using Endpoints = std::vector<boost::asio::ip::tcp::endpoint>;

  // Why a server was last made unusable.
  enum class Unusable { kNo, kConnectFailures, kServerErrors, kHealthCheck };

  // A copy of one server's state (admin API, metrics).
  struct ServerSnapshot {
    std::string url;
    unsigned weight = 1;
    bool usable = true;
    bool healthy = true;  // the health checks' verdict (true without checks)
    bool ejected = false;
    Unusable reason = Unusable::kNo;
    std::chrono::milliseconds ejected_for{0};  // remaining ejection time
    std::uint64_t ejections = 0;               // since start
    std::uint64_t in_flight = 0;
    std::uint64_t connections = 0;  // open, idle ones included
    std::uint64_t requests = 0;     // since start
    std::uint64_t health_checks_passed = 0;
    std::uint64_t health_checks_failed = 0;
    // System-clock milliseconds of the last health check; 0: none yet.
    std::int64_t last_check_unix_ms = 0;
    std::string last_check_result;  // "passed", "failed: <why>", "" none yet
    std::vector<std::string> addresses;
  };

  struct Counters {
    std::uint64_t overload_max_connections = 0;  // refusals, per limit
    std::uint64_t overload_max_pending = 0;
    std::uint64_t retries_connect_failed = 0;  // a write retried on another server, per reason
    std::uint64_t retries_tls_failed = 0;
    std::uint64_t no_healthy_server = 0;  // requests refused with no-healthy-backend
    // webdav: locks of this gateway's own writes found orphaned and released (own_locks.h)
    std::uint64_t orphaned_locks_released = 0;
  };

  UpstreamServers(std::string backend_name, BalancingOptions options);
  // The same, with the clock ejections are timed by (tests); `now` may be called from any
  // thread.
  UpstreamServers(std::string backend_name, BalancingOptions options,
                  std::function<Clock::time_point()> now);
  ~UpstreamServers();
  UpstreamServers(const UpstreamServers&) = delete;
  UpstreamServers& operator=(const UpstreamServers&) = delete;

  const std::string& backend_name() const { return backend_name_; }
  const BalancingOptions& options() const { return options_; }
  std::size_t size() const { return servers_.size(); }
  const ServerAddress& address(std::size_t server) const { return options_.servers[server]; }

  // ---- choosing a server (the network threads)

  // Per-thread state of the choice (no sharing on the request path): the smooth round robin's
  // current weights, the random state of least_request (seeded on first use) and a scratch
  // list of candidates, sized once.
  struct PickCursor {
    std::vector<std::int64_t> current_weights;
    std::uint64_t random_state = 0;
    std::vector<std::uint32_t> candidates;
  };

  // A usable server for one request, never one of `tried` (the servers this request already
  // failed to connect to); nullopt when none is usable. `fence_key` is the request's affinity
  // under the fence_key policy (ignored otherwise; empty falls back to round robin).
  std::optional<std::size_t> Pick(std::string_view fence_key, const std::vector<bool>& tried,
                                  PickCursor& cursor) const;

  // ---- limits: a refusal is counted here; the caller answers 503 backend-overloaded

  // A request starts being forwarded (max_pending); false: over the limit, nothing taken.
  bool TryBeginRequest(std::size_t server);
  void EndRequest(std::size_t server);
  // A new upstream connection is about to be opened (max_connections); false: over the limit.
  bool TryOpenConnection(std::size_t server);
  // An upstream connection (counted by TryOpenConnection) was closed.
  void ConnectionClosed(std::size_t server);

  // ---- what requests learn (passive health)

  // No byte of the request reached the server: refused, unreachable, timed out, TLS failed.
  // The server is made unusable at once (not subject to max_ejected_percent).
  void OnConnectFailed(std::size_t server, bool tls_handshake);
  // A response header arrived: a 5xx counts towards consecutive_failures, anything else
  // resets it.
  void OnResponse(std::size_t server, unsigned status);

  // ---- what the health checker learns

  void OnHealthCheck(std::size_t server, bool passed, std::string result);

  // ---- what the adapters count (Counters)

  // A write retried on another server because no byte of it reached the first.
  void CountRetry(bool tls_handshake);
  // A request refused with no-healthy-backend.
  void CountNoHealthyServer();
  void CountOrphanedLockReleased();

  // ---- addresses (the resolver writes, connections read)

  // Never null; empty until the first resolve succeeded (connections then resolve the host
  // themselves).
  std::shared_ptr<const Endpoints> endpoints(std::size_t server) const;
  void SetEndpoints(std::size_t server, Endpoints endpoints);
  // Grows each time the server's addresses change: a kept-alive connection made under an older
  // version may go to an address the name has left, and is not reused.
  std::uint64_t addresses_version(std::size_t server) const;

  // ---- what operators see

  bool AnyUsable() const;
  std::vector<ServerSnapshot> Snapshot() const;
  Counters counters() const;
  // When no server is usable: the seconds until the first server is expected back (the end of
  // its ejection, plus the checks it still has to pass), at least 1, for Retry-After.
  std::chrono::seconds RetryAfter() const;

 private:
  struct ServerState;
  class LazyNow;
  bool UsableAt(const ServerState& state, LazyNow& now) const;
  // The usable servers not in `tried`, into cursor.candidates.
  void CollectCandidates(const std::vector<bool>& tried, PickCursor& cursor) const;
  std::size_t PickRoundRobin(PickCursor& cursor) const;
  std::size_t PickLeastRequest(PickCursor& cursor) const;
  std::size_t PickByKey(std::string_view fence_key, const PickCursor& cursor) const;
  // Under ejection_mutex_.
  bool EjectedAt(const ServerState& state, Clock::time_point now) const;
  bool EjectionWithinCap(Clock::time_point now) const;
  void Eject(ServerState& state, Unusable reason, Clock::time_point now);

  const std::string backend_name_;
  const BalancingOptions options_;
  const std::function<Clock::time_point()> now_;
  std::vector<std::unique_ptr<ServerState>> servers_;
  mutable std::mutex ejection_mutex_;  // ejections and health verdicts (the cap needs all servers)
  mutable std::mutex endpoints_mutex_;
  std::atomic<std::uint64_t> pending_{0};
  std::atomic<std::uint64_t> connections_{0};
  struct AtomicCounters;
  std::unique_ptr<AtomicCounters> counters_;
};

}  // namespace fencegate::adapters
