#include "gateway/admin/admin_api.h"

#include <boost/json.hpp>

#include "base/encoding/percent.h"
#include "gateway/admin/admin_backends.h"
#include "gateway/admin/admin_events.h"
#include "gateway/admin/admin_fence_repair.h"
#include "gateway/admin/admin_fences.h"
#include "gateway/admin/admin_json.h"
#include "gateway/admin/admin_lock_api.h"
#include "gateway/admin/admin_rejections.h"
#include "gateway/admin/admin_request.h"
#include "gateway/admin/admin_summary.h"
#include "gateway/auth/admin_guard.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/observability/backend_metrics.h"
#include "gateway/server/generation_slot.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;

bool AdminApi::Handle(const Request& request, const PeerIdentity& peer, Response* response,
                      std::function<void()> answered) {
  response->version(request.version());
  response->keep_alive(request.keep_alive());
  const std::string_view target = request.target();
  const auto question = target.find('?');
  const std::string_view path = target.substr(0, question);
  const std::string_view query =
      question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);

  // The admin credentials in force: a reload may change them (held for this request).
  const auto generation = context_.generations->Current();
  if (AdminConsole::IsPublicPath(path)) {
    console_.HandlePublic(request, path, *generation->admin_guard, response);
    return true;
  }
  const auth::ConsoleSessions::Session* console_session = console_.SessionOf(request);
  const auth::AdminGuard::Result caller = generation->admin_guard->Check(
      path, request[http::field::authorization], request.count(http::field::authorization), &peer,
      console_session != nullptr ? std::string_view(console_session->principal)
                                 : std::string_view{});
  if (caller.status != 0) {
    if (console_.AnswerLoggedOut(path, caller, response)) return true;
    SetProblem(Refusal::kUnauthenticated,
               caller.reason == "missing_credentials"
                   ? "the admin API needs Authorization: Bearer <admin key> or an admin client "
                     "certificate"
                   : "the credentials sent identify no admin principal",
               path, response);
    response->set(http::field::www_authenticate,
                  caller.reason == "missing_credentials"
                      ? "Bearer realm=\"fencegate-admin\""
                      : "Bearer realm=\"fencegate-admin\", error=\"invalid_token\"");
    return true;
  }
  if (console_.HandleAuthenticated(request, path, caller, console_session, response)) return true;
  if (path == kAdminEventsPath) {
    Events(request, path, response);
    return true;
  }
  const bool known = path == "/metrics" || path == "/healthz" || path == "/readyz" ||
                     path == "/admin/rejections" || path == "/admin/backends" ||
                     path == kAdminFenceListPath || path == kAdminSummaryPath ||
                     path.starts_with(kAdminFencesPrefix) ||
                     (path == "/admin/cluster" && context_.cluster != nullptr);
  if (path == kAdminReloadPath && reloader_) {
    if (request.method() != http::verb::post) {
      SetProblem(Refusal::kMethodNotAllowed, "reload with POST", path, response);
      response->set(http::field::allow, "POST");
      return true;
    }
    StartAdminReload(reloader_, admin_executor_, query, response, std::move(answered));
    return false;
  }
  if (IsFenceRepairRequest(request, path)) {
    HandleFenceRepair(context_, request, path, query, caller.principal, response);
    return true;
  }
  const bool lock_path = context_.lock_table != nullptr && IsAdminLockPath(path);
  if (!known && !lock_path) {
    SetProblem(Refusal::kNotFound, "no such admin resource", path, response);
    return true;
  }
  if (lock_path) {
    const std::string_view allow = AdminLockAllow(path);
    const bool allowed = allow == "POST" ? request.method() == http::verb::post
                                         : request.method() == http::verb::get ||
                                               request.method() == http::verb::head;
    if (!allowed) {
      SetProblem(Refusal::kMethodNotAllowed, "this lock resource allows " + std::string(allow),
                 path, response);
      response->set(http::field::allow, allow);
      return true;
    }
    HandleAdminLock(context_, request, path, query, caller.principal, response);
    return true;
  }
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    SetProblem(Refusal::kMethodNotAllowed, "the admin API is read-only", path, response);
    response->set(http::field::allow, "GET, HEAD");
    return true;
  }
  if (path == "/metrics") {
    Metrics(*generation, response);
  } else if (path == "/healthz") {
    SetJson(http::status::ok, {{"status", "ok"}}, response);
  } else if (path == "/readyz") {
    Ready(*generation, response);
  } else if (path == "/admin/backends") {
    Backends(*generation, query, path, response);
  } else if (path == "/admin/rejections") {
    HandleRejections(context_, query, path, response);
  } else if (path == kAdminFenceListPath) {
    HandleFenceList(context_, query, path, response);
  } else if (path == kAdminSummaryPath) {
    HandleSummary(context_, *generation, query, path, response);
  } else if (path == "/admin/cluster") {
    SetJson(http::status::ok, context_.cluster->AdminView(), response);
  } else {
    Fence(path.substr(kAdminFencesPrefix.size()), path, response);
  }
  return true;
}

void AdminApi::Metrics(const ConfigGeneration& generation, Response* response) {
  if (context_.refresh_store_metrics) context_.refresh_store_metrics();
  if (context_.relay_budget_metrics != nullptr) context_.relay_budget_metrics->Refresh();
  if (context_.process_metrics != nullptr) context_.process_metrics->Refresh();
  // fencegate_ready says what /readyz would answer now (and sets fencegate_store_ready).
  context_.metrics->ready().Set(CurrentReadiness(generation).ready() ? 1 : 0);
  // Copied from the counts the sessions keep anyway, so a request does not also pay for two
  // gauge updates (a compare-and-swap loop each) that only a scrape reads.
  context_.metrics->requests_in_flight().Set(
      static_cast<double>(context_.requests_in_flight.load(std::memory_order_relaxed)));
  context_.metrics->connections_open().Set(
      static_cast<double>(context_.open_connections.load(std::memory_order_relaxed)));
  response->result(http::status::ok);
  response->set(http::field::content_type, "text/plain; version=0.0.4");
  response->body() = context_.metrics->RenderText(BackendFamilies(BackendSamples(generation)));
}

AdminApi::Readiness AdminApi::CurrentReadiness(const ConfigGeneration& generation) const {
  Readiness readiness;
  readiness.store_ready = context_.store->Ready();
  context_.metrics->store_ready().Set(readiness.store_ready ? 1 : 0);
  readiness.accepting = context_.accepting.load();
  readiness.draining = context_.draining.load();
  // Several replicas: a replica without a lease it can count on admits nothing and cannot
  // tell where to forward; the load balancer should send traffic elsewhere.
  readiness.lease_valid = context_.cluster == nullptr || context_.cluster->LeaseValid();
  // Routes marked `required` need a usable server of their backend; without any, /readyz keeps
  // its meaning and does not look at backends.
  readiness.routes_required = AnyRouteRequired(generation);
  if (readiness.routes_required) {
    readiness.routes_without_server = RequiredRoutesWithoutServer(generation);
  }
  // A `verify` backend found to ignore conditions takes no fenced writes: say so to the load
  // balancer rather than answer every write with 503.
  readiness.conditions_not_enforced = BackendsIgnoringConditions(generation);
  return readiness;
}

void AdminApi::Ready(const ConfigGeneration& generation, Response* response) {
  const Readiness readiness = CurrentReadiness(generation);
  const bool ready = readiness.ready();
  context_.metrics->ready().Set(ready ? 1 : 0);
  json::object body{{"status", ready ? "ready" : (readiness.draining ? "draining" : "not_ready")},
                    {"store_ready", readiness.store_ready},
                    {"accepting", readiness.accepting && !readiness.draining}};
  if (context_.cluster != nullptr) body["cluster_lease_valid"] = readiness.lease_valid;
  if (readiness.routes_required) {
    json::array names;
    for (const std::string& name : readiness.routes_without_server) names.emplace_back(name);
    body["routes_without_server"] = std::move(names);
  }
  if (!readiness.conditions_not_enforced.empty()) {
    json::array backends;
    for (const UnenforcedConditions& entry : readiness.conditions_not_enforced) {
      backends.push_back(json::object{
          {"backend", entry.backend}, {"scope", entry.scope}, {"failed", entry.failed}});
    }
    body["backends_conditions_not_enforced"] = std::move(backends);
  }
  SetJson(ready ? http::status::ok : http::status::service_unavailable, std::move(body), response);
}

void AdminApi::Backends(const ConfigGeneration& generation, std::string_view query,
                        std::string_view path, Response* response) {
  // The one parameter: backend=NAME (percent-encoded) narrows the list to that backend.
  std::string error;
  const std::optional<AdminQuery> params = AdminQuery::Parse(query, {"backend"}, &error);
  if (params && params->Find("backend") != nullptr && params->Find("backend")->empty()) {
    error = "backend=NAME needs a name";
  }
  if (!params || !error.empty()) {
    SetProblem(Refusal::kBadRequest, error, path, response);
    return;
  }
  const std::string only = params->Value("backend");
  json::object body = BackendsJson(generation, only);
  if (!only.empty() && body["backends"].as_array().empty()) {
    SetProblem(Refusal::kNotFound, "no backend named '" + only + "'", path, response);
    return;
  }
  SetJson(http::status::ok, body, response);
}

void AdminApi::Fence(std::string_view encoded_key, std::string_view path, Response* response) {
  // '+' stays '+': a fence key is a path, not a form.
  std::optional<std::string> key = encoding::PercentDecode(encoded_key);
  if (!key || key->empty()) {
    SetProblem(Refusal::kBadRequest, "the fence key is empty or badly encoded", path, response);
    return;
  }
  const auto view = context_.admission->Inspect(*key);
  if (!view) {
    SetProblem(Refusal::kFenceNotFound, {}, path, response);
    return;
  }
  json::value last_admitted = nullptr;
  if (view->last_admitted_at_ms != 0 || !view->last_admitted_request_id.empty()) {
    last_admitted = {{"token", view->last_admitted_token},
                     {"at", Rfc3339OrNull(view->last_admitted_at_ms)},
                     {"request_id", view->last_admitted_request_id}};
  }
  SetJson(http::status::ok,
          {{"fence_key", *key},
           {"highest_token", view->durable.highest},
           {"advanced_at", Rfc3339OrNull(view->durable.advanced_at_ms)},
           {"pending_advance", view->pending_advance},
           {"writes_in_flight", view->writes_in_flight},
           {"writes_waiting", view->writes_waiting},
           {"last_admitted", last_admitted},
           {"history", FenceHistoryJson(context_, *key)}},
          response);
}

void AdminApi::Events(const Request& request, std::string_view path, Response* response) {
  if (request.method() != http::verb::get) {
    SetProblem(Refusal::kMethodNotAllowed, "the event stream is read with GET", path, response);
    response->set(http::field::allow, "GET");
    return;
  }
  if (context_.events == nullptr) {
    SetProblem(Refusal::kNotFound, "this gateway keeps no event feed", path, response);
    return;
  }
  SetEventStreamHeader(response);
}

}  // namespace fencegate::gateway
