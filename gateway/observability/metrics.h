#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <boost/beast/http/verb.hpp>

#include "gateway/observability/sharded_histogram.h"

namespace fencegate::gateway {

// Why a fenced write was refused; the `reason` label of fencegate_writes_rejected_total.
enum class RejectionReason {
  kStaleToken,
  kMissingToken,
  kInvalidToken,
  kStoreError,
  kBarrierTimeout,
  kBackendFence,  // the backend refused: it holds a higher token (conditional write failed)
  // README "Tokens": refused before the fence was touched.
  kUnsignedToken,    // no Fencing-Token-Signature on a route with require_signed_tokens
  kForgedToken,      // the signature does not verify (unknown key id, wrong MAC)
  kExpiredToken,     // the signature's lease has ended
  kTokenScope,       // signed for a lock not bound to this fence key
  kTokenAdvance,     // more than max_token_advance above the highest, unsigned
  kFenceRepair,      // an operator repair of the fence was being made durable
  kTokenUnverified,  // beyond max_token_advance, and the live check got no answer (503)
};
inline constexpr std::size_t kRejectionReasonCount = 13;
std::string_view RejectionReasonName(RejectionReason reason);

// What went wrong upstream; the `kind` label of fencegate_upstream_errors_total.
enum class UpstreamErrorKind { kConnect, kTimeout, kProtocol, kBackendIO };
inline constexpr std::size_t kUpstreamErrorKindCount = 4;

// The metric children of one route, resolved once at start-up so the request path only
// increments through pointers (no label maps, no string building).
struct RouteMetrics {
  // fencegate_requests_total by [method slot][status class 1xx..5xx].
  static constexpr std::size_t kMethodSlots = 8;  // GET HEAD PUT POST PATCH DELETE OPTIONS other
  std::array<std::array<prometheus::Counter*, 5>, kMethodSlots> requests{};
  prometheus::Counter* writes_admitted = nullptr;
  std::array<prometheus::Counter*, kRejectionReasonCount> writes_rejected{};
  prometheus::Counter* fence_advances = nullptr;
  // fencegate_token_verifications_total by TokenCheck::Verdict (held, not_held, unavailable):
  // live checks of tokens beyond max_token_advance (README "Tokens", verify_tokens).
  std::array<prometheus::Counter*, 3> token_verifications{};
  ShardedHistogram* request_duration = nullptr;
  ShardedHistogram* barrier_wait = nullptr;
  std::array<prometheus::Counter*, kUpstreamErrorKindCount> upstream_errors{};

  void CountRequest(boost::beast::http::verb method, unsigned status) const;
  void CountRejection(RejectionReason reason) const {
    writes_rejected[static_cast<std::size_t>(reason)]->Increment();
  }
  void CountUpstreamError(UpstreamErrorKind kind) const {
    upstream_errors[static_cast<std::size_t>(kind)]->Increment();
  }
};

// The gateway's Prometheus registry and every metric it exports. No metric is labelled by
// fence key: cardinality stays bounded by the number of routes.
class GatewayMetrics {
 public:
  // One RouteMetrics per name, in order, plus one for requests that matched no route (which
  // has only the request counters and duration histogram set). `threads`: the number of network
  // threads, each with its shard of the histograms.
  GatewayMetrics(const std::vector<std::string>& route_names, std::size_t threads);

  std::size_t thread_count() const { return threads_; }

  // The metrics of the index-th route named at construction.
  const RouteMetrics& route(std::size_t index) const { return *by_name_.at(route_names_[index]); }
  const RouteMetrics& unrouted() const { return *unrouted_; }
  // The route's metrics, created the first time a route of that name appears (a reload that
  // adds one). Thread-safe; the reference stays valid for the object's life, so a removed
  // route's series keep their counts.
  const RouteMetrics& RouteNamed(const std::string& name);
  // Calls `visit` with every named route's metrics (not the unrouted ones), in name order, while
  // holding the routes' lock: `visit` must not add routes.
  void ForEachRoute(
      const std::function<void(const std::string& name, const RouteMetrics& metrics)>& visit) const;

  // Set from GatewayContext's counts when /metrics is scraped.
  prometheus::Gauge& requests_in_flight() const { return *requests_in_flight_; }
  prometheus::Gauge& connections_open() const { return *connections_open_; }
  prometheus::Gauge& store_ready() const { return *store_ready_; }
  // fencegate_ready: 1 while /readyz would answer 200 (store, lease, required routes, not
  // draining).
  prometheus::Gauge& ready() const { return *ready_; }
  prometheus::Counter& fence_repairs() const { return *fence_repairs_; }  // README "Tokens"
  // Access-log lines of failed requests held back by the per-key cap (ErrorLogCap).
  prometheus::Counter& access_log_suppressed() const { return *access_log_suppressed_; }
  // fencegate_underscore_header_fields_total (README "Header names with underscores"): fields
  // dropped, and requests refused (counted once each).
  prometheus::Counter& underscore_fields_dropped() const { return *underscore_fields_dropped_; }
  prometheus::Counter& underscore_requests_refused() const { return *underscore_requests_refused_; }
  // For metrics defined elsewhere (gateway/observability/lock_metrics.h) to join the same
  // exposition.
  prometheus::Registry& registry() const { return *registry_; }

  // fencegate_backend_upstream_duration_seconds{route,backend}: the time the backend took for a
  // request of the route (adapters::ForwardOutcome::upstream_time), created the first time the pair
  // appears (a reload that adds one). Thread-safe; the pointer stays valid for the object's life.
  ShardedHistogram* BackendUpstreamDuration(const std::string& route, const std::string& backend);

  // The Prometheus text exposition (format 0.0.4) of every metric, and of `computed`: families
  // computed at the scrape (gateway/observability/backend_metrics.h).
  std::string RenderText(std::vector<prometheus::MetricFamily> computed = {}) const;

  static constexpr std::string_view kUnroutedLabel = "-";

 private:
  // The families of sharded histograms, outside the registry: rendered with it.
  struct HistogramFamily {
    struct Series {
      std::vector<std::string> values;  // of `labels`, in order
      std::unique_ptr<ShardedHistogram> histogram;
    };
    std::string name;
    std::string help;
    std::vector<std::string> labels;
    std::vector<Series> series;
  };

  RouteMetrics& AddRoute(const std::string& route);  // under routes_mutex_

  std::size_t threads_;
  std::shared_ptr<prometheus::Registry> registry_;
  // Guards the histogram families' route lists and by_name_ (RouteNamed against RenderText).
  mutable std::mutex routes_mutex_;
  HistogramFamily request_duration_;
  HistogramFamily barrier_wait_;
  HistogramFamily upstream_duration_;     // by route and backend
  std::vector<std::string> route_names_;  // as constructed
  std::deque<RouteMetrics> routes_;       // a deque: references stay valid as routes are added
  std::map<std::string, RouteMetrics*, std::less<>> by_name_;
  RouteMetrics* unrouted_ = nullptr;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Family<prometheus::Counter>* admitted_ = nullptr;
  prometheus::Family<prometheus::Counter>* rejected_ = nullptr;
  prometheus::Family<prometheus::Counter>* advances_ = nullptr;
  prometheus::Family<prometheus::Counter>* verifications_ = nullptr;
  prometheus::Family<prometheus::Counter>* upstream_ = nullptr;
  prometheus::Gauge* requests_in_flight_ = nullptr;
  prometheus::Gauge* connections_open_ = nullptr;
  prometheus::Gauge* store_ready_ = nullptr;
  prometheus::Gauge* ready_ = nullptr;
  prometheus::Counter* fence_repairs_ = nullptr;
  prometheus::Counter* access_log_suppressed_ = nullptr;
  prometheus::Counter* underscore_fields_dropped_ = nullptr;
  prometheus::Counter* underscore_requests_refused_ = nullptr;
};

}  // namespace fencegate::gateway
