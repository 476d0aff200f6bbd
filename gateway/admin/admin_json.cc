#include "gateway/admin/admin_json.h"

#include <boost/json/serialize.hpp>

#include "gateway/http/time_format.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;

void SetJson(http::status status, const json::value& value, AdminResponse* response) {
  response->result(status);
  response->set(http::field::content_type, "application/json");
  response->body() = json::serialize(value);
}

void SetJson(const json::value& value, AdminResponse* response) {
  SetJson(http::status::ok, value, response);
}

void SetProblem(Refusal refusal, std::string_view detail, std::string_view instance,
                AdminResponse* response) {
  ProblemDetails problem = RefusalProblem(refusal, detail);
  problem.instance = instance;
  response->result(problem.status);
  response->set(http::field::content_type, kProblemContentType);
  RenderProblemJson(problem, &response->body());
}

json::value Rfc3339OrNull(std::int64_t unix_ms) {
  if (unix_ms == 0) return nullptr;
  std::string text;
  AppendRfc3339Ms(unix_ms, &text);
  return json::value(text);
}

bool ReadTextMember(const json::object& body, std::string_view key, bool required,
                    std::string* out) {
  const json::value* value = body.if_contains(key);
  if (value == nullptr) return !required;
  if (!value->is_string() || value->as_string().empty() ||
      value->as_string().size() > kMaxAdminTextMember) {
    return false;
  }
  *out = std::string(value->as_string());
  return true;
}

}  // namespace fencegate::gateway
