#include "tests/webdav/webdav_support.h"

#include <charconv>
#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include <boost/json/parse.hpp>

#include "tests/support/eventually.h"

namespace fencegate::webdav_test {

namespace http = boost::beast::http;
using integration::MakeRequest;

void ApacheDavTest::StartApacheAndGateways(int count, const YAML::Node& extra_backend_keys) {
  if (!ApacheAvailable()) GTEST_SKIP() << "apache2 is not installed (scripts/install-deps.sh)";
  std::string error;
  apache_ = ApacheDav::Start(&error);
  ASSERT_NE(apache_, nullptr) << error;
  for (int i = 0; i < count; ++i) {
    gateways_.push_back(StartGateway(apache_->port(), &error, extra_backend_keys));
    ASSERT_NE(gateways_.back(), nullptr) << error;
  }
}

void ApacheDavTest::TearDown() {
  if (!HasFailure() || apache_ == nullptr) return;
  const std::string log = integration::ReadWholeFile(apache_->access_log());
  std::size_t from = log.size();
  for (int lines = 0; lines <= 80 && from != std::string::npos && from > 0; ++lines) {
    from = log.rfind('\n', from - 1);
  }
  from = from == std::string::npos ? 0 : from + 1;
  std::cerr << "--- Apache's access log (method path status write-token usec port "
               "earlier-requests), last lines:\n"
            << log.substr(from) << "--- Apache's error log:\n"
            << apache_->ErrorLog() << "---\n";
}

unsigned ApacheDavTest::UnconditionalWriteStatus(const std::string& path) {
  return Send(dav(), MakeRequest(http::verb::proppatch, path, {},
                                 "<?xml version=\"1.0\"?><D:propertyupdate "
                                 "xmlns:D=\"DAV:\"><D:set><D:prop><x:probe "
                                 "xmlns:x=\"urn:test\">1</x:probe></D:prop>"
                                 "</D:set></D:propertyupdate>"))
      .result_int();
}

integration::Request Fenced(http::verb method, const std::string& path, std::uint64_t token,
                            std::string body, const std::string& destination) {
  auto request =
      MakeRequest(method, path, {{"Fencing-Token", std::to_string(token)}}, std::move(body));
  if (!destination.empty()) request.set(http::field::destination, destination);
  return request;
}

integration::GatewayConfig DavGatewayConfig(const std::string& url,
                                            const YAML::Node& extra_backend_keys) {
  integration::GatewayConfig config;
  config["access_log"]["path"] = "";
  YAML::Node dav = config.Backend("dav");
  dav["kind"] = "webdav";
  dav["url"] = url;
  // Apache serves WebDAV under /dav/ only: the condition probes' scratch resources go there.
  dav["probe_prefix"] = "dav/.fencegate-probe/";
  integration::SetKeys(dav, extra_backend_keys);
  config.Route("dav", "/dav/", "dav", "dav:{segment:2}")["fenced_methods"] =
      integration::Sequence({"PUT", "DELETE", "MOVE", "COPY", "MKCOL"});
  return config;
}

namespace {

// A gateway probes its webdav backend when it starts. mod_dav_fs loses lock database updates when
// requests run at once (docs/BACKEND_TRUST.md): an UNLOCK of a test's write racing the probe's
// own UNLOCKs and DELETE came back as a lock still held, and the next write found the resource
// locked through every attempt. So a test's requests start once the probe has reported.
bool WaitForConditionProbe(const Gateway& gateway, std::string* error) {
  const std::uint16_t admin = gateway.instance->admin_port();
  std::string last;
  const bool reported = integration::Eventually(
      [&] {
        const auto response =
            Send(admin, MakeRequest(http::verb::get, "/admin/backends?backend=dav"));
        if (response.result_int() == 404) return true;  // no backend of that name: no probe
        last = response.body();
        if (response.result_int() != 200) return false;
        const boost::json::value conditions =
            boost::json::parse(response.body()).at("backends").at(0).at("conditions");
        if (conditions.is_null() || conditions.at("policy") != "verify") return true;
        for (const boost::json::value& report : conditions.at("reports").as_array()) {
          if (report.at("scope") == "" && report.at("verdict") != "pending") return true;
        }
        return false;
      },
      std::chrono::seconds(60));
  if (!reported) *error = "the gateway's condition probe reported no verdict in 60 s: " + last;
  return reported;
}

}  // namespace

std::unique_ptr<Gateway> StartGateway(const integration::GatewayConfig& config,
                                      std::string* error) {
  auto gateway = std::make_unique<Gateway>();
  gateway->instance = integration::GatewayInstance::Start(
      gateway->dir.WriteFile("fencegate.yaml", config.Yaml()), gateway->dir.Join("data"), error);
  if (!gateway->instance) return nullptr;
  if (!WaitForConditionProbe(*gateway, error)) return nullptr;
  return gateway;
}

std::unique_ptr<Gateway> StartGateway(std::uint16_t dav_port, std::string* error,
                                      const YAML::Node& extra_backend_keys) {
  return StartGateway(
      DavGatewayConfig("http://127.0.0.1:" + std::to_string(dav_port), extra_backend_keys), error);
}

YAML::Node LockRetries(int attempts, const std::string& retry_delay) {
  YAML::Node keys;
  keys["lock_attempts"] = attempts;
  keys["lock_retry_delay"] = retry_delay;
  return keys;
}

integration::Response Send(std::uint16_t port, integration::Request request) {
  std::string error;
  auto response = integration::Fetch(port, std::move(request), &error);
  if (!response) {
    integration::Response failed;
    failed.result(http::status::unknown);
    failed.body() = "request failed: " + error;
    return failed;
  }
  return *response;
}

std::optional<std::uint64_t> StoredToken(std::uint16_t dav_port, const std::string& path) {
  const auto response =
      Send(dav_port, MakeRequest(http::verb::propfind, path, {{"Depth", "0"}},
                                 "<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\"><D:prop>"
                                 "<F:fencing-token xmlns:F=\"urn:fencegate\"/></D:prop>"
                                 "</D:propfind>"));
  static const std::regex value(R"(fencing-token[^>/]*>\s*([0-9]+)\s*<)");
  std::smatch match;
  if (!std::regex_search(response.body(), match, value)) return std::nullopt;
  return std::stoull(match[1].str());
}

namespace {
std::string JsonMember(const std::string& body, const char* name) {
  boost::system::error_code ec;
  const auto json = boost::json::parse(body, ec);
  if (ec || !json.is_object()) return {};
  const auto* member = json.as_object().if_contains(name);
  if (member == nullptr || !member->is_string()) return {};
  return std::string(member->as_string());
}
}  // namespace

std::string ProblemType(const std::string& body) {
  const std::string type = JsonMember(body, "type");
  const std::size_t slash = type.rfind('/');
  return slash == std::string::npos ? type : type.substr(slash + 1);
}

std::string ProblemReason(const std::string& body) { return JsonMember(body, "reason"); }

std::vector<LogLine> ReadAccessLog(const std::string& path) {
  std::vector<LogLine> lines;
  std::ifstream in(path);
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream fields(text);
    LogLine line;
    std::string token;
    fields >> line.method >> line.path >> line.status >> token >> line.begin_usec;
    if (!fields) continue;
    fields >> line.remote_port >> line.earlier_requests;
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec == std::errc{} && ptr == token.data() + token.size()) line.write_token = value;
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace fencegate::webdav_test
