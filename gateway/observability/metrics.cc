#include "gateway/observability/metrics.h"

#include <sstream>

#include <prometheus/text_serializer.h>

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace {

constexpr std::array<std::string_view, RouteMetrics::kMethodSlots> kMethodLabels = {
    "GET", "HEAD", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "other"};
constexpr std::array<std::string_view, 5> kStatusClassLabels = {"1xx", "2xx", "3xx", "4xx", "5xx"};
constexpr std::array<std::string_view, kUpstreamErrorKindCount> kUpstreamErrorKindLabels = {
    "connect", "timeout", "protocol", "backend_io"};
// By lockstore::TokenCheck::Verdict.
constexpr std::array<std::string_view, 3> kVerificationLabels = {"held", "not_held", "unavailable"};

std::size_t MethodSlot(http::verb method) {
  switch (method) {
    case http::verb::get:
      return 0;
    case http::verb::head:
      return 1;
    case http::verb::put:
      return 2;
    case http::verb::post:
      return 3;
    case http::verb::patch:
      return 4;
    case http::verb::delete_:
      return 5;
    case http::verb::options:
      return 6;
    default:
      return 7;
  }
}

// Seconds; from sub-millisecond proxying to a slow upload.
const std::vector<double> kDurationBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                              0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
const std::vector<double> kBarrierBuckets = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1,
                                             0.5,    1,      5,     10,    30,   60};

}  // namespace

std::string_view RejectionReasonName(RejectionReason reason) {
  switch (reason) {
    case RejectionReason::kStaleToken:
      return "stale_token";
    case RejectionReason::kMissingToken:
      return "missing_token";
    case RejectionReason::kInvalidToken:
      return "invalid_token";
    case RejectionReason::kStoreError:
      return "store_error";
    case RejectionReason::kBarrierTimeout:
      return "barrier_timeout";
    case RejectionReason::kBackendFence:
      return "backend_fence";
    case RejectionReason::kUnsignedToken:
      return "unsigned_token";
    case RejectionReason::kForgedToken:
      return "forged_token";
    case RejectionReason::kExpiredToken:
      return "expired_token";
    case RejectionReason::kTokenScope:
      return "token_scope";
    case RejectionReason::kTokenAdvance:
      return "token_advance";
    case RejectionReason::kFenceRepair:
      return "fence_repair";
    case RejectionReason::kTokenUnverified:
      return "token_unverified";
  }
  return "unknown";
}

void RouteMetrics::CountRequest(http::verb method, unsigned status) const {
  std::size_t status_class = status / 100;
  if (status_class < 1 || status_class > 5) status_class = 5;
  requests[MethodSlot(method)][status_class - 1]->Increment();
}

GatewayMetrics::GatewayMetrics(const std::vector<std::string>& route_names, std::size_t threads)
    : threads_(threads),
      registry_(std::make_shared<prometheus::Registry>()),
      request_duration_{"fencegate_request_duration_seconds",
                        "Time from request header to the end of the response.",
                        {"route"},
                        {}},
      barrier_wait_{"fencegate_barrier_wait_seconds",
                    "Time fenced writes waited for older writes on their fence.",
                    {"route"},
                    {}},
      upstream_duration_{"fencegate_backend_upstream_duration_seconds",
                         "Time the backend took: from connecting (or sending, on a kept-alive "
                         "connection) until its response header arrived, by route and backend.",
                         {"route", "backend"},
                         {}} {
  requests_ = &prometheus::BuildCounter()
                   .Name("fencegate_requests_total")
                   .Help("Requests answered, by route, method and status class.")
                   .Register(*registry_);
  admitted_ = &prometheus::BuildCounter()
                   .Name("fencegate_writes_admitted_total")
                   .Help("Fenced writes admitted and forwarded.")
                   .Register(*registry_);
  rejected_ = &prometheus::BuildCounter()
                   .Name("fencegate_writes_rejected_total")
                   .Help("Fenced writes refused, by reason.")
                   .Register(*registry_);
  advances_ = &prometheus::BuildCounter()
                   .Name("fencegate_fence_advances_total")
                   .Help("Admitted writes that raised their fence's highest token.")
                   .Register(*registry_);
  verifications_ = &prometheus::BuildCounter()
                        .Name("fencegate_token_verifications_total")
                        .Help(
                            "Live checks with the lock service of tokens beyond "
                            "max_token_advance, by result (held: admitted).")
                        .Register(*registry_);
  upstream_ = &prometheus::BuildCounter()
                   .Name("fencegate_upstream_errors_total")
                   .Help("Forwards that failed at the backend, by kind.")
                   .Register(*registry_);
  requests_in_flight_ = &prometheus::BuildGauge()
                             .Name("fencegate_requests_in_flight")
                             .Help("Requests being processed.")
                             .Register(*registry_)
                             .Add({});
  connections_open_ = &prometheus::BuildGauge()
                           .Name("fencegate_connections_open")
                           .Help("Open client connections.")
                           .Register(*registry_)
                           .Add({});
  store_ready_ = &prometheus::BuildGauge()
                      .Name("fencegate_store_ready")
                      .Help("1 while the fence store accepts operations.")
                      .Register(*registry_)
                      .Add({});
  ready_ = &prometheus::BuildGauge()
                .Name("fencegate_ready")
                .Help(
                    "1 while GET /readyz answers 200: the store accepts operations, the gateway "
                    "is not draining, a replica holds its lease, required routes have a server.")
                .Register(*registry_)
                .Add({});

  fence_repairs_ = &prometheus::BuildCounter()
                        .Name("fencegate_fence_repairs_total")
                        .Help("Fences lowered by an operator (POST /admin/fences/{key}/repair).")
                        .Register(*registry_)
                        .Add({});
  access_log_suppressed_ =
      &prometheus::BuildCounter()
           .Name("fencegate_access_log_suppressed_total")
           .Help(
               "Access-log lines of failed requests not written: more than "
               "access_log.error_lines_per_second of one client and fence key in a second.")
           .Register(*registry_)
           .Add({});

  // README "Header names with underscores": one family, by what was done.
  auto& underscore = prometheus::BuildCounter()
                         .Name("fencegate_underscore_header_fields_total")
                         .Help(
                             "Request fields whose name contains '_': dropped before routing "
                             "(limits.headers_with_underscores: drop), or whose request was "
                             "refused with 400.")
                         .Register(*registry_);
  underscore_fields_dropped_ = &underscore.Add({{"action", "dropped"}});
  underscore_requests_refused_ = &underscore.Add({{"action", "refused"}});

  route_names_ = route_names;
  std::lock_guard lock(routes_mutex_);
  for (const std::string& route : route_names) AddRoute(route);
  unrouted_ = &AddRoute(std::string(kUnroutedLabel));
}

const RouteMetrics& GatewayMetrics::RouteNamed(const std::string& name) {
  std::lock_guard lock(routes_mutex_);
  if (const auto found = by_name_.find(name); found != by_name_.end()) return *found->second;
  return AddRoute(name);
}

void GatewayMetrics::ForEachRoute(
    const std::function<void(const std::string& name, const RouteMetrics& metrics)>& visit) const {
  std::lock_guard lock(routes_mutex_);
  for (const auto& [name, metrics] : by_name_) visit(name, *metrics);
}

RouteMetrics& GatewayMetrics::AddRoute(const std::string& route) {
  RouteMetrics& m = routes_.emplace_back();
  if (route != kUnroutedLabel) by_name_.emplace(route, &m);
  for (std::size_t method = 0; method < kMethodLabels.size(); ++method) {
    for (std::size_t status = 0; status < kStatusClassLabels.size(); ++status) {
      m.requests[method][status] =
          &requests_->Add({{"route", route},
                           {"method", std::string(kMethodLabels[method])},
                           {"status_class", std::string(kStatusClassLabels[status])}});
    }
  }
  m.request_duration =
      request_duration_.series
          .emplace_back(HistogramFamily::Series{
              {route}, std::make_unique<ShardedHistogram>(kDurationBuckets, threads_)})
          .histogram.get();
  // A request that matched no route is never admitted nor forwarded: exporting write and
  // upstream series for it would only add series that stay at zero forever.
  if (route == kUnroutedLabel) return m;
  m.writes_admitted = &admitted_->Add({{"route", route}});
  for (std::size_t reason = 0; reason < kRejectionReasonCount; ++reason) {
    m.writes_rejected[reason] = &rejected_->Add(
        {{"route", route},
         {"reason", std::string(RejectionReasonName(static_cast<RejectionReason>(reason)))}});
  }
  m.fence_advances = &advances_->Add({{"route", route}});
  for (std::size_t result = 0; result < m.token_verifications.size(); ++result) {
    m.token_verifications[result] = &verifications_->Add(
        {{"route", route}, {"result", std::string(kVerificationLabels[result])}});
  }
  m.barrier_wait = barrier_wait_.series
                       .emplace_back(HistogramFamily::Series{
                           {route}, std::make_unique<ShardedHistogram>(kBarrierBuckets, threads_)})
                       .histogram.get();
  for (std::size_t kind = 0; kind < kUpstreamErrorKindCount; ++kind) {
    m.upstream_errors[kind] =
        &upstream_->Add({{"route", route}, {"kind", std::string(kUpstreamErrorKindLabels[kind])}});
  }
  return m;
}

ShardedHistogram* GatewayMetrics::BackendUpstreamDuration(const std::string& route,
                                                          const std::string& backend) {
  std::lock_guard lock(routes_mutex_);
  for (const HistogramFamily::Series& series : upstream_duration_.series) {
    if (series.values[0] == route && series.values[1] == backend) return series.histogram.get();
  }
  return upstream_duration_.series
      .emplace_back(HistogramFamily::Series{
          {route, backend}, std::make_unique<ShardedHistogram>(kDurationBuckets, threads_)})
      .histogram.get();
}

std::string GatewayMetrics::RenderText(std::vector<prometheus::MetricFamily> computed) const {
  std::ostringstream out;
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (prometheus::MetricFamily& family : computed) families.push_back(std::move(family));
  std::lock_guard lock(routes_mutex_);
  for (const HistogramFamily* source : {&request_duration_, &barrier_wait_, &upstream_duration_}) {
    prometheus::MetricFamily& family = families.emplace_back();
    family.name = source->name;
    family.help = source->help;
    family.type = prometheus::MetricType::Histogram;
    for (const HistogramFamily::Series& series : source->series) {
      prometheus::ClientMetric& metric = family.metric.emplace_back();
      for (std::size_t i = 0; i < source->labels.size(); ++i) {
        metric.label.push_back({source->labels[i], series.values[i]});
      }
      metric.histogram = series.histogram->Snapshot();
    }
  }
  prometheus::TextSerializer().Serialize(out, families);
  return std::move(out).str();
}

}  // namespace fencegate::gateway
