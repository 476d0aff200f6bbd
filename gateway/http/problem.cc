#include "gateway/http/problem.h"

#include "base/encoding/json_escape.h"

namespace fencegate::gateway {
namespace {

void AppendKey(std::string_view key, std::string* out) {
  out->push_back(',');
  out->push_back('"');
  out->append(key);
  out->append("\":");
}

}  // namespace

void RenderProblemJson(const ProblemDetails& problem, std::string* out) {
  out->clear();
  out->append("{\"type\":\"");
  out->append(kProblemTypePrefix);
  AppendJsonEscaped(problem.slug, out);  // adapters provide slugs too: escape them
  out->push_back('"');
  AppendKey("title", out);
  AppendJsonString(problem.title, out);
  AppendKey("status", out);
  out->append(std::to_string(problem.status));
  AppendKey("detail", out);
  AppendJsonString(problem.detail, out);
  AppendKey("instance", out);
  AppendJsonString(problem.instance, out);
  AppendKey("request_id", out);
  AppendJsonString(problem.request_id, out);
  if (!problem.reason.empty()) {
    AppendKey("reason", out);
    AppendJsonString(problem.reason, out);
  }
  if (!problem.fence_key.empty()) {
    AppendKey("fence_key", out);
    AppendJsonString(problem.fence_key, out);
  }
  if (problem.presented_token) {
    AppendKey("presented_token", out);
    out->append(std::to_string(*problem.presented_token));
  }
  if (problem.highest_token) {
    AppendKey("highest_token", out);
    out->append(std::to_string(*problem.highest_token));
  }
  out->push_back('}');
}

}  // namespace fencegate::gateway
