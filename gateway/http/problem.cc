#include "gateway/http/problem.h"

#include "base/encoding/json_escape.h"

namespace fencegate::gateway {
void RenderProblemJson(const ProblemDetails& problem, std::string* out) {
  out->clear();
  out->append("{\"type\":\"");
  out->append(kProblemTypePrefix);
  AppendJsonEscaped(problem.slug, out);  // adapters provide slugs too: escape them
  out->push_back('"');
  AppendJsonKey("title", out);
  AppendJsonString(problem.title, out);
  AppendJsonKey("status", out);
  out->append(std::to_string(problem.status));
  AppendJsonKey("detail", out);
  AppendJsonString(problem.detail, out);
  AppendJsonKey("instance", out);
  AppendJsonString(problem.instance, out);
  AppendJsonKey("request_id", out);
  AppendJsonString(problem.request_id, out);
  if (!problem.reason.empty()) {
    AppendJsonKey("reason", out);
    AppendJsonString(problem.reason, out);
  }
  if (!problem.fence_key.empty()) {
    AppendJsonKey("fence_key", out);
    AppendJsonString(problem.fence_key, out);
  }
  if (problem.presented_token) {
    AppendJsonKey("presented_token", out);
    out->append(std::to_string(*problem.presented_token));
  }
  if (problem.highest_token) {
    AppendJsonKey("highest_token", out);
    out->append(std::to_string(*problem.highest_token));
  }
  if (!problem.stale_reason.empty()) {
    AppendJsonKey("stale_reason", out);
    AppendJsonString(problem.stale_reason, out);
  }
  if (problem.audit_id) {
    AppendJsonKey("audit_id", out);
    out->append(std::to_string(*problem.audit_id));
  }
  out->push_back('}');
}

}  // namespace fencegate::gateway
