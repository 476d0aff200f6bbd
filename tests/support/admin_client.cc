#include "tests/support/admin_client.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <boost/json/parse.hpp>

#include "tests/support/eventually.h"
#include "tests/support/http_client.h"

namespace fencegate::integration {

namespace {

// Splits `a="x",b="y"` into sorted label pairs so that label order does not matter.
std::vector<std::string> SortedLabels(std::string_view labels) {
  std::vector<std::string> out;
  std::string current;
  bool in_quotes = false;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    char c = labels[i];
    if (c == '"' && (i == 0 || labels[i - 1] != '\\')) in_quotes = !in_quotes;
    if (c == ',' && !in_quotes) {
      out.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) out.push_back(current);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::optional<boost::json::value> FetchAdminJson(std::uint16_t admin_port,
                                                 const std::string& target, std::string* error) {
  std::string failure;
  std::optional<Response> response =
      Fetch(admin_port, MakeRequest(http::verb::get, target), &failure);
  if (!response) {
    if (error != nullptr) *error = failure;
    return std::nullopt;
  }
  if (response->result_int() != 200) {
    if (error != nullptr) {
      *error = "status " + std::to_string(response->result_int()) + ": " + response->body();
    }
    return std::nullopt;
  }
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(response->body(), ec);
  if (ec) {
    if (error != nullptr) *error = "not JSON: " + response->body();
    return std::nullopt;
  }
  return value;
}

boost::json::value FindBackendServer(const boost::json::value& backends, std::string_view backend,
                                     std::string_view url) {
  if (!backends.is_object() || !backends.as_object().contains("backends")) return nullptr;
  for (const boost::json::value& each : backends.at("backends").as_array()) {
    const boost::json::string* name = each.at("name").if_string();
    if (name == nullptr || *name != backend) continue;
    for (const boost::json::value& server : each.at("servers").as_array()) {
      const boost::json::string* server_url = server.at("url").if_string();
      if (server_url != nullptr && *server_url == url) return server;
    }
  }
  return nullptr;
}

std::string FetchMetricsText(std::uint16_t admin_port) {
  std::optional<Response> response = Fetch(admin_port, MakeRequest(http::verb::get, "/metrics"));
  return response && response->result_int() == 200 ? response->body() : std::string();
}

std::optional<double> MetricValue(std::string_view exposition, std::string_view name,
                                  const std::string& labels) {
  const std::vector<std::string> wanted = SortedLabels(labels);
  std::istringstream lines{std::string(exposition)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.compare(0, name.size(), name) != 0) continue;
    std::string_view rest = std::string_view(line).substr(name.size());
    std::string_view label_text;
    if (!rest.empty() && rest[0] == '{') {
      std::size_t close = rest.rfind('}');
      if (close == std::string_view::npos) continue;
      label_text = rest.substr(1, close - 1);
      rest = rest.substr(close + 1);
    }
    if (rest.empty() || rest[0] != ' ') continue;  // a longer metric name with this prefix
    if (SortedLabels(label_text) != wanted) continue;
    return std::stod(std::string(rest.substr(1)));
  }
  return std::nullopt;
}

bool GatewayIdle(std::uint16_t admin_port, std::chrono::milliseconds limit) {
  return Eventually(
      [&] {
        const std::string metrics = FetchMetricsText(admin_port);
        return MetricValue(metrics, "fencegate_connections_open", "") == 0.0 &&
               MetricValue(metrics, "fencegate_requests_in_flight", "") == 0.0;
      },
      limit);
}

}  // namespace fencegate::integration
