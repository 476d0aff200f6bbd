#include "gateway/admin/admin_reload.h"

#include <string>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include "base/encoding/percent.h"
#include "gateway/http/problem.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;
namespace {

constexpr std::string_view kAcceptFenceKeyChange = "accept_fence_key_change=";

json::array Names(const std::vector<std::string>& names) {
  json::array out;
  for (const std::string& name : names) out.emplace_back(name);
  return out;
}

json::object Changes(const NamedChanges& changes) {
  return {{"added", Names(changes.added)},
          {"removed", Names(changes.removed)},
          {"changed", Names(changes.changed)}};
}

// The routes named by accept_fence_key_change parameters; other parameters are ignored.
std::vector<std::string> AcceptedFenceKeyChanges(std::string_view query) {
  std::vector<std::string> routes;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    if (item.starts_with(kAcceptFenceKeyChange)) {
      if (auto route = encoding::PercentDecode(item.substr(kAcceptFenceKeyChange.size()))) {
        if (!route->empty()) routes.push_back(std::move(*route));
      }
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return routes;
}

}  // namespace

void StartAdminReload(const AdminReloader& reloader, boost::asio::any_io_executor admin_executor,
                      std::string_view query, AdminResponse* response,
                      std::function<void()> answered) {
  ReloadRequest request;
  request.trigger = "POST /admin/reload";
  request.accepted_fence_key_changes = AcceptedFenceKeyChanges(query);
  reloader(std::move(request),
           [admin_executor, response, answered = std::move(answered)](const ReloadReport& report) {
             // `answered` holds the admin session (and so `response`) until it runs or is dropped
             // with a stopped admin listener.
             boost::asio::post(admin_executor, [report, response, answered] {
               SetReloadAnswer(report, response);
               answered();
             });
           });
}

void SetReloadAnswer(const ReloadReport& report, AdminResponse* response) {
  if (!report.applied) {
    ProblemDetails problem = RefusalProblem(Refusal::kConfigInvalid);
    problem.instance = kAdminReloadPath;
    std::string rendered;
    RenderProblemJson(problem, &rendered);
    json::object body = json::parse(rendered).as_object();
    body["errors"] = Names(report.errors);
    body["config_hash"] = report.config_hash;  // the configuration still in force
    response->result(problem.status);
    response->set(http::field::content_type, kProblemContentType);
    response->body() = json::serialize(body);
    return;
  }
  SetJson(http::status::ok,
          {{"result", "applied"},
           {"generation", report.generation},
           {"config_hash", report.config_hash},
           {"routes", Changes(report.diff.routes)},
           {"backends", Changes(report.diff.backends)},
           {"restart_required", Names(report.diff.restart_required)}},
          response);
}

}  // namespace fencegate::gateway
