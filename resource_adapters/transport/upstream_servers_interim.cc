// TEMPORARY (deleted before the final commit): a minimal UpstreamServers and BackendMonitor so
// the adapters build and test before poolcore's upstream_servers.cc / backend_monitor.cc merge.
#include <algorithm>

#include "resource_adapters/transport/backend_monitor.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::adapters {

struct UpstreamServers::ServerState {
  std::atomic<std::uint64_t> in_flight{0};
  std::atomic<std::uint64_t> connections{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<unsigned> failures{0};
  std::atomic<std::int64_t> ejected_until{0};
  std::atomic<std::uint64_t> ejections{0};
  std::shared_ptr<const Endpoints> endpoints;
  mutable std::mutex mutex;
};
struct UpstreamServers::AtomicCounters {};
UpstreamServers::~UpstreamServers() = default;

UpstreamServers::UpstreamServers(std::string backend_name, BalancingOptions options)
    : backend_name_(std::move(backend_name)), options_(std::move(options)) {
  for (std::size_t i = 0; i < options_.servers.size(); ++i) {
    servers_.push_back(std::make_unique<ServerState>());
  }
  counters_ = std::make_unique<AtomicCounters>();
}

bool UpstreamServers::UsableAt(const ServerState& state, Clock::time_point now) const {
  return state.ejected_until.load() <= now.time_since_epoch().count();
}

void UpstreamServers::Eject(ServerState& state, Unusable, Clock::time_point now) {
  state.ejected_until = (now + options_.outlier.base_ejection_time).time_since_epoch().count();
  ++state.ejections;
  state.failures = 0;
}

std::optional<std::size_t> UpstreamServers::Pick(std::string_view, const std::vector<bool>& tried,
                                                 PickCursor& cursor) const {
  const auto now = Clock::now();
  for (std::size_t n = 0; n < servers_.size(); ++n) {
    const std::size_t i = (cursor.random_state++) % servers_.size();
    if (i < tried.size() && tried[i]) continue;
    if (UsableAt(*servers_[i], now)) return i;
  }
  return std::nullopt;
}

bool UpstreamServers::TryBeginRequest(std::size_t server) {
  if (options_.limits.max_pending != 0 && pending_.load() >= options_.limits.max_pending) {
    return false;
  }
  ++pending_;
  ++servers_[server]->in_flight;
  ++servers_[server]->requests;
  return true;
}
void UpstreamServers::EndRequest(std::size_t server) {
  --pending_;
  --servers_[server]->in_flight;
}
bool UpstreamServers::TryOpenConnection(std::size_t server) {
  if (options_.limits.max_connections != 0 &&
      connections_.load() >= options_.limits.max_connections) {
    return false;
  }
  ++connections_;
  ++servers_[server]->connections;
  return true;
}
void UpstreamServers::ConnectionClosed(std::size_t server) {
  --connections_;
  --servers_[server]->connections;
}
void UpstreamServers::OnConnectFailed(std::size_t server, bool) {
  if (servers_.size() > 1) Eject(*servers_[server], Unusable::kConnectFailures, Clock::now());
}
void UpstreamServers::OnResponse(std::size_t server, unsigned status) {
  if (status < 500) {
    servers_[server]->failures = 0;
  } else if (++servers_[server]->failures >= options_.outlier.consecutive_failures) {
    Eject(*servers_[server], Unusable::kServerErrors, Clock::now());
  }
}
void UpstreamServers::OnHealthCheck(std::size_t, bool, std::string) {}
void UpstreamServers::CountRetry(bool) {}
void UpstreamServers::CountNoHealthyServer() {}
std::shared_ptr<const UpstreamServers::Endpoints> UpstreamServers::endpoints(
    std::size_t server) const {
  std::lock_guard lock(servers_[server]->mutex);
  return servers_[server]->endpoints;
}
void UpstreamServers::SetEndpoints(std::size_t server, Endpoints endpoints) {
  std::lock_guard lock(servers_[server]->mutex);
  servers_[server]->endpoints = std::make_shared<const Endpoints>(std::move(endpoints));
}
bool UpstreamServers::AnyUsable() const {
  const auto now = Clock::now();
  return std::any_of(servers_.begin(), servers_.end(),
                     [&](const auto& s) { return UsableAt(*s, now); });
}
std::vector<UpstreamServers::ServerSnapshot> UpstreamServers::Snapshot() const {
  std::vector<ServerSnapshot> out;
  const auto now = Clock::now();
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    ServerSnapshot s;
    s.url = options_.servers[i].url;
    s.usable = UsableAt(*servers_[i], now);
    s.ejected = !s.usable;
    s.ejections = servers_[i]->ejections;
    s.in_flight = servers_[i]->in_flight;
    s.connections = servers_[i]->connections;
    s.requests = servers_[i]->requests;
    out.push_back(s);
  }
  return out;
}
UpstreamServers::Counters UpstreamServers::counters() const { return {}; }
std::chrono::seconds UpstreamServers::RetryAfter() const { return std::chrono::seconds(1); }

namespace {
class NoMonitor : public BackendMonitor {
 public:
  void Stop() override {}
};
}  // namespace

std::shared_ptr<BackendMonitor> BackendMonitor::Start(boost::asio::io_context&,
                                                      std::shared_ptr<UpstreamServers>,
                                                      std::shared_ptr<boost::asio::ssl::context>,
                                                      tls_client::ClientTlsOptions) {
  return std::make_shared<NoMonitor>();
}

}  // namespace fencegate::adapters
