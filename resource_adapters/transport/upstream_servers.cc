#include "resource_adapters/transport/upstream_servers.h"

#include <algorithm>
#include <random>
#include <sstream>
#include <utility>

#include "resource_adapters/transport/rendezvous_hash.h"

// Memory order: the request path reads and counts with relaxed atomics. Health flags and
// ejection deadlines are hints that publish nothing else (a request that still picks a server
// ejected a moment ago is one request, which the ejection could not have stopped either), and
// counters only need each update to be atomic. What must be consistent across servers (the
// ejection cap, health streaks) is decided under ejection_mutex_.

namespace fencegate::adapters {

struct alignas(64) UpstreamServers::ServerState {
  explicit ServerState(const ServerAddress& address)
      : weight(std::max(address.weight, 1u)), seed(ServerSeed(address.url)) {}

  const unsigned weight;
  const std::uint64_t seed;  // its part of the fence_key hash

  // Read on the request path.
  std::atomic<bool> healthy{true};
  std::atomic<Clock::rep> ejected_until{0};  // Clock ticks; 0: never ejected
  std::atomic<std::uint64_t> in_flight{0};
  std::atomic<std::uint64_t> connections{0};
  std::atomic<std::uint64_t> requests{0};
  std::atomic<unsigned> consecutive_errors{0};

  // Under ejection_mutex_.
  Unusable ejection_reason = Unusable::kNo;
  unsigned ejections_in_a_row = 0;
  std::uint64_t ejections = 0;
  unsigned passes_in_a_row = 0;
  unsigned failures_in_a_row = 0;
  std::uint64_t checks_passed = 0;
  std::uint64_t checks_failed = 0;
  std::int64_t last_check_unix_ms = 0;
  std::string last_check_result;

  // Under endpoints_mutex_ (the version is read without it).
  std::shared_ptr<const Endpoints> endpoints = std::make_shared<const Endpoints>();
  std::atomic<std::uint64_t> addresses_version{0};
};

struct UpstreamServers::AtomicCounters {
  std::atomic<std::uint64_t> overload_max_connections{0};
  std::atomic<std::uint64_t> overload_max_pending{0};
  std::atomic<std::uint64_t> retries_connect_failed{0};
  std::atomic<std::uint64_t> retries_tls_failed{0};
  std::atomic<std::uint64_t> no_healthy_server{0};
  std::atomic<std::uint64_t> orphaned_locks_released{0};
};

// The clock read at most once per call, and only when a server has been ejected: a backend
// whose servers were never ejected picks without reading the clock.
class UpstreamServers::LazyNow {
 public:
  explicit LazyNow(const std::function<Clock::time_point()>& now) : now_(now) {}
  Clock::time_point get() {
    if (!value_) value_ = now_();
    return *value_;
  }

 private:
  const std::function<Clock::time_point()>& now_;
  std::optional<Clock::time_point> value_;
};

namespace {

UpstreamServers::Clock::rep Ticks(UpstreamServers::Clock::time_point time) {
  return time.time_since_epoch().count();
}

UpstreamServers::Clock::time_point FromTicks(UpstreamServers::Clock::rep ticks) {
  return UpstreamServers::Clock::time_point(UpstreamServers::Clock::duration(ticks));
}

// splitmix64 as a generator: one add and the finalizer per number; seeded on first use.
std::uint64_t NextRandom(std::uint64_t& state) {
  if (state == 0) {
    std::random_device device;
    state = (std::uint64_t{device()} << 32) | device() | 1;
  }
  state += 0x9e3779b97f4a7c15ull;
  return Mix64(state);
}

}  // namespace

UpstreamServers::UpstreamServers(std::string backend_name, BalancingOptions options)
    : UpstreamServers(std::move(backend_name), std::move(options), [] { return Clock::now(); }) {}

UpstreamServers::UpstreamServers(std::string backend_name, BalancingOptions options,
                                 std::function<Clock::time_point()> now)
    : backend_name_(std::move(backend_name)),
      options_(std::move(options)),
      now_(std::move(now)),
      counters_(std::make_unique<AtomicCounters>()) {
  servers_.reserve(options_.servers.size());
  for (const ServerAddress& address : options_.servers) {
    servers_.push_back(std::make_unique<ServerState>(address));
  }
}

UpstreamServers::~UpstreamServers() = default;

// ---- choosing a server

bool UpstreamServers::UsableAt(const ServerState& state, LazyNow& now) const {
  if (!state.healthy.load(std::memory_order_relaxed)) return false;
  const Clock::rep until = state.ejected_until.load(std::memory_order_relaxed);
  return until == 0 || Ticks(now.get()) >= until;
}

void UpstreamServers::CollectCandidates(const std::vector<bool>& tried, PickCursor& cursor) const {
  cursor.candidates.clear();
  cursor.candidates.reserve(servers_.size());
  LazyNow now(now_);
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (i < tried.size() && tried[i]) continue;
    if (UsableAt(*servers_[i], now)) cursor.candidates.push_back(static_cast<std::uint32_t>(i));
  }
}

std::optional<std::size_t> UpstreamServers::Pick(std::string_view fence_key,
                                                 const std::vector<bool>& tried,
                                                 PickCursor& cursor) const {
  CollectCandidates(tried, cursor);
  if (cursor.candidates.empty()) return std::nullopt;
  switch (options_.policy) {
    case BalancingPolicy::kLeastRequest:
      return PickLeastRequest(cursor);
    case BalancingPolicy::kFenceKey:
      if (!fence_key.empty()) return PickByKey(fence_key, cursor);
      break;
    case BalancingPolicy::kRoundRobin:
      break;
  }
  return PickRoundRobin(cursor);
}

// nginx's smooth weighted round robin: each candidate gains its weight, the highest wins and
// loses the sum. Over a cycle of sum(weights) picks each server is chosen exactly `weight`
// times, interleaved (5,1,1 gives a a b a c a a, not a a a a a b c).
std::size_t UpstreamServers::PickRoundRobin(PickCursor& cursor) const {
  if (cursor.current_weights.size() != servers_.size()) {
    cursor.current_weights.assign(servers_.size(), 0);
  }
  std::int64_t total = 0;
  std::uint32_t best = cursor.candidates.front();
  for (const std::uint32_t i : cursor.candidates) {
    const std::int64_t weight = servers_[i]->weight;
    cursor.current_weights[i] += weight;
    total += weight;
    if (cursor.current_weights[i] > cursor.current_weights[best]) best = i;
  }
  cursor.current_weights[best] -= total;
  return best;
}

// Power of two choices: two distinct random candidates, the one with fewer requests in flight
// per unit of weight wins.
std::size_t UpstreamServers::PickLeastRequest(PickCursor& cursor) const {
  const std::size_t count = cursor.candidates.size();
  if (count == 1) return cursor.candidates.front();
  const std::size_t first = NextRandom(cursor.random_state) % count;
  const std::size_t second = (first + 1 + NextRandom(cursor.random_state) % (count - 1)) % count;
  const ServerState& a = *servers_[cursor.candidates[first]];
  const ServerState& b = *servers_[cursor.candidates[second]];
  // (in_flight_a + 1) / weight_a <= (in_flight_b + 1) / weight_b, without a division.
  const std::uint64_t load_a = (a.in_flight.load(std::memory_order_relaxed) + 1) * b.weight;
  const std::uint64_t load_b = (b.in_flight.load(std::memory_order_relaxed) + 1) * a.weight;
  return cursor.candidates[load_a <= load_b ? first : second];
}

std::size_t UpstreamServers::PickByKey(std::string_view fence_key, const PickCursor& cursor) const {
  const std::uint64_t key_hash = Fnv1a64(fence_key);
  std::uint32_t best = cursor.candidates.front();
  double best_score = -1;
  for (const std::uint32_t i : cursor.candidates) {
    const double score = RendezvousScore(key_hash, servers_[i]->seed, servers_[i]->weight);
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return best;
}

// ---- limits

bool UpstreamServers::TryBeginRequest(std::size_t server) {
  const std::size_t limit = options_.limits.max_pending;
  if (limit != 0 && pending_.fetch_add(1, std::memory_order_relaxed) >= limit) {
    pending_.fetch_sub(1, std::memory_order_relaxed);
    counters_->overload_max_pending.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ServerState& state = *servers_[server];
  state.in_flight.fetch_add(1, std::memory_order_relaxed);
  state.requests.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void UpstreamServers::EndRequest(std::size_t server) {
  if (options_.limits.max_pending != 0) pending_.fetch_sub(1, std::memory_order_relaxed);
  servers_[server]->in_flight.fetch_sub(1, std::memory_order_relaxed);
}

bool UpstreamServers::TryOpenConnection(std::size_t server) {
  const std::size_t limit = options_.limits.max_connections;
  if (limit != 0 && connections_.fetch_add(1, std::memory_order_relaxed) >= limit) {
    connections_.fetch_sub(1, std::memory_order_relaxed);
    counters_->overload_max_connections.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  servers_[server]->connections.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void UpstreamServers::ConnectionClosed(std::size_t server) {
  if (options_.limits.max_connections != 0) connections_.fetch_sub(1, std::memory_order_relaxed);
  servers_[server]->connections.fetch_sub(1, std::memory_order_relaxed);
}

// ---- counters the adapters keep

void UpstreamServers::CountRetry(bool tls_handshake) {
  (tls_handshake ? counters_->retries_tls_failed : counters_->retries_connect_failed)
      .fetch_add(1, std::memory_order_relaxed);
}

void UpstreamServers::CountNoHealthyServer() {
  counters_->no_healthy_server.fetch_add(1, std::memory_order_relaxed);
}

void UpstreamServers::CountOrphanedLockReleased() {
  counters_->orphaned_locks_released.fetch_add(1, std::memory_order_relaxed);
}

UpstreamServers::Counters UpstreamServers::counters() const {
  return Counters{
      .overload_max_connections =
          counters_->overload_max_connections.load(std::memory_order_relaxed),
      .overload_max_pending = counters_->overload_max_pending.load(std::memory_order_relaxed),
      .retries_connect_failed = counters_->retries_connect_failed.load(std::memory_order_relaxed),
      .retries_tls_failed = counters_->retries_tls_failed.load(std::memory_order_relaxed),
      .no_healthy_server = counters_->no_healthy_server.load(std::memory_order_relaxed),
      .orphaned_locks_released = counters_->orphaned_locks_released.load(std::memory_order_relaxed),
  };
}

// ---- passive health

bool UpstreamServers::EjectedAt(const ServerState& state, Clock::time_point now) const {
  const Clock::rep until = state.ejected_until.load(std::memory_order_relaxed);
  return until != 0 && Ticks(now) < until;
}

// The servers ejected after this ejection stay within max_ejected_percent of all servers
// ("never ejecting more than a configured share"): with 3 servers and 50 %, one at a time.
// Envoy checks the share before the ejection instead, which lets 2 of 3 go. Every ejected
// server counts, whatever its reason, so that 5xx ejections cannot take the servers that
// connect failures left.
bool UpstreamServers::EjectionWithinCap(Clock::time_point now) const {
  std::size_t ejected = 0;
  for (const auto& state : servers_) ejected += EjectedAt(*state, now) ? 1 : 0;
  return (ejected + 1) * 100 <= std::size_t{options_.outlier.max_ejected_percent} * servers_.size();
}

void UpstreamServers::Eject(ServerState& state, Unusable reason, Clock::time_point now) {
  const OutlierOptions& outlier = options_.outlier;
  const Clock::rep previous_end = state.ejected_until.load(std::memory_order_relaxed);
  // The row of ejections (and their doubling) starts again once the server has stayed out of
  // ejection for max_ejection_time: it served that long without being ejected again.
  if (previous_end == 0 || now - FromTicks(previous_end) >= outlier.max_ejection_time) {
    state.ejections_in_a_row = 0;
  }
  ++state.ejections_in_a_row;
  std::chrono::milliseconds duration = outlier.base_ejection_time;
  for (unsigned i = 1; i < state.ejections_in_a_row && duration < outlier.max_ejection_time; ++i) {
    duration *= 2;
  }
  duration = std::min(duration, outlier.max_ejection_time);
  state.ejected_until.store(Ticks(now + duration), std::memory_order_relaxed);
  state.ejection_reason = reason;
  ++state.ejections;
  state.consecutive_errors.store(0, std::memory_order_relaxed);
  if (options_.health_check) {
    // Back only once the checks pass again (those during the ejection count).
    state.healthy.store(false, std::memory_order_relaxed);
    state.passes_in_a_row = 0;
    state.failures_in_a_row = 0;
  }
}

// Either way no byte of the request reached the server: a refused connection and a refused
// handshake eject alike (the caller counts the retry by reason).
void UpstreamServers::OnConnectFailed(std::size_t server, bool /*tls_handshake*/) {
  if (servers_.size() < 2) return;
  const Clock::time_point now = now_();
  ServerState& state = *servers_[server];
  std::lock_guard lock(ejection_mutex_);
  // Requests that were connecting when it was ejected report too: one ejection, not several.
  if (EjectedAt(state, now)) return;
  Eject(state, Unusable::kConnectFailures, now);
}

// consecutive_failures 0 turns ejection on 5xx off.
void UpstreamServers::OnResponse(std::size_t server, unsigned status) {
  ServerState& state = *servers_[server];
  if (status < 500) {
    // Read first: the common case writes nothing to the shared line.
    if (state.consecutive_errors.load(std::memory_order_relaxed) != 0) {
      state.consecutive_errors.store(0, std::memory_order_relaxed);
    }
    return;
  }
  const unsigned threshold = options_.outlier.consecutive_failures;
  if (threshold == 0 || servers_.size() < 2) return;
  if (state.consecutive_errors.fetch_add(1, std::memory_order_relaxed) + 1 < threshold) return;
  const Clock::time_point now = now_();
  std::lock_guard lock(ejection_mutex_);
  if (EjectedAt(state, now)) {
    // Answers to requests sent before the ejection: the next row starts after it.
    state.consecutive_errors.store(0, std::memory_order_relaxed);
    return;
  }
  // Over the cap the count stays at the threshold, so the next 5xx tries again.
  if (EjectionWithinCap(now)) Eject(state, Unusable::kServerErrors, now);
}

// ---- active health

void UpstreamServers::OnHealthCheck(std::size_t server, bool passed, std::string result) {
  const HealthCheckOptions checks = options_.health_check.value_or(HealthCheckOptions{});
  const std::int64_t unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  ServerState& state = *servers_[server];
  std::lock_guard lock(ejection_mutex_);
  state.last_check_unix_ms = unix_ms;
  state.last_check_result = std::move(result);
  const bool healthy = state.healthy.load(std::memory_order_relaxed);
  if (passed) {
    ++state.checks_passed;
    state.failures_in_a_row = 0;
    ++state.passes_in_a_row;
    if (!healthy && state.passes_in_a_row >= checks.healthy_threshold) {
      state.healthy.store(true, std::memory_order_relaxed);
    }
  } else {
    ++state.checks_failed;
    state.passes_in_a_row = 0;
    ++state.failures_in_a_row;
    if (healthy && state.failures_in_a_row >= checks.unhealthy_threshold) {
      state.healthy.store(false, std::memory_order_relaxed);
    }
  }
}

// ---- addresses

std::shared_ptr<const UpstreamServers::Endpoints> UpstreamServers::endpoints(
    std::size_t server) const {
  std::lock_guard lock(endpoints_mutex_);
  return servers_[server]->endpoints;
}

void UpstreamServers::SetEndpoints(std::size_t server, Endpoints endpoints) {
  auto shared = std::make_shared<const Endpoints>(std::move(endpoints));
  ServerState& state = *servers_[server];
  std::lock_guard lock(endpoints_mutex_);
  if (*state.endpoints == *shared) return;
  state.endpoints.swap(shared);
  state.addresses_version.fetch_add(1, std::memory_order_relaxed);
  // The old list is released after the unlock (shared's destructor), not under the mutex.
}

std::uint64_t UpstreamServers::addresses_version(std::size_t server) const {
  // Relaxed: a connection checked a moment before a change is one more request to an address
  // the name just left, which any lookup interval allows anyway.
  return servers_[server]->addresses_version.load(std::memory_order_relaxed);
}

// ---- what operators see

bool UpstreamServers::AnyUsable() const {
  LazyNow now(now_);
  return std::any_of(servers_.begin(), servers_.end(),
                     [&](const auto& state) { return UsableAt(*state, now); });
}

std::vector<UpstreamServers::ServerSnapshot> UpstreamServers::Snapshot() const {
  const Clock::time_point now = now_();
  std::vector<ServerSnapshot> snapshots(servers_.size());
  {
    std::lock_guard lock(ejection_mutex_);
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      const ServerState& state = *servers_[i];
      ServerSnapshot& snapshot = snapshots[i];
      snapshot.url = options_.servers[i].url;
      snapshot.weight = state.weight;
      snapshot.healthy = state.healthy.load(std::memory_order_relaxed);
      snapshot.ejected = EjectedAt(state, now);
      snapshot.usable = snapshot.healthy && !snapshot.ejected;
      snapshot.reason = snapshot.ejected    ? state.ejection_reason
                        : !snapshot.healthy ? Unusable::kHealthCheck
                                            : Unusable::kNo;
      if (snapshot.ejected) {
        snapshot.ejected_for = std::chrono::ceil<std::chrono::milliseconds>(
            FromTicks(state.ejected_until.load(std::memory_order_relaxed)) - now);
      }
      snapshot.ejections = state.ejections;
      snapshot.in_flight = state.in_flight.load(std::memory_order_relaxed);
      snapshot.connections = state.connections.load(std::memory_order_relaxed);
      snapshot.requests = state.requests.load(std::memory_order_relaxed);
      snapshot.health_checks_passed = state.checks_passed;
      snapshot.health_checks_failed = state.checks_failed;
      snapshot.last_check_unix_ms = state.last_check_unix_ms;
      snapshot.last_check_result = state.last_check_result;
    }
  }
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    // Held for the loop: a range-for over *endpoints(i) would outlive the temporary pointer,
    // and a lookup may swap the list meanwhile.
    const std::shared_ptr<const Endpoints> addresses = endpoints(i);
    for (const auto& endpoint : *addresses) {
      std::ostringstream text;
      text << endpoint;  // 10.0.0.1:80, [::1]:80
      snapshots[i].addresses.push_back(text.str());
    }
  }
  return snapshots;
}

std::chrono::seconds UpstreamServers::RetryAfter() const {
  const Clock::time_point now = now_();
  std::optional<Clock::duration> soonest;
  {
    std::lock_guard lock(ejection_mutex_);
    for (const auto& state : servers_) {
      Clock::duration wait{0};
      if (EjectedAt(*state, now)) {
        wait = FromTicks(state->ejected_until.load(std::memory_order_relaxed)) - now;
      }
      if (options_.health_check && !state->healthy.load(std::memory_order_relaxed)) {
        const unsigned needed = options_.health_check->healthy_threshold;
        const unsigned missing =
            needed > state->passes_in_a_row ? needed - state->passes_in_a_row : 0;
        // Passes during the ejection count, so the checks run alongside the ejection.
        wait = std::max<Clock::duration>(wait, missing * options_.health_check->interval);
      }
      if (!soonest || wait < *soonest) soonest = wait;
    }
  }
  const auto seconds =
      std::chrono::ceil<std::chrono::seconds>(soonest.value_or(Clock::duration{0}));
  return std::max(seconds, std::chrono::seconds(1));
}

}  // namespace fencegate::adapters
