// What operators read (README "Logs"): the event log's JSON lines on stderr, the access log's
// user agent, principal, refusal and trace id, and W3C traceparent passed on or generated.
#include <signal.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/held_put.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

namespace json = boost::json;

constexpr std::string_view kClientTraceparent =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::string_view kClientTraceId = "4bf92f3577b34da6a3ce929d0e0e4736";

// The finished lines of `text` (a line being written is left for the next look), each parsed;
// a line that is not one JSON object fails the test.
std::vector<json::object> JsonLines(std::string text, const std::string& what) {
  text.erase(text.find_last_of('\n') + 1);
  std::vector<json::object> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    boost::system::error_code ec;
    json::value parsed = json::parse(line, ec);
    if (ec || !parsed.is_object()) {
      ADD_FAILURE() << what << ": not a JSON object: " << line;
      continue;
    }
    lines.push_back(std::move(parsed.as_object()));
  }
  return lines;
}

// The event lines whose msg is `msg`.
std::vector<json::object> Events(Process& process, std::string_view msg) {
  std::vector<json::object> found;
  for (json::object& line : JsonLines(process.Stderr(), "stderr")) {
    if (line.at("msg").as_string() == msg) found.push_back(std::move(line));
  }
  return found;
}

// Waits for the event `msg` and returns the first one.
std::optional<json::object> AwaitEvent(Process& process, std::string_view msg) {
  std::optional<json::object> event;
  Eventually([&] {
    std::vector<json::object> events = Events(process, msg);
    if (!events.empty()) event = std::move(events.front());
    return event.has_value();
  });
  return event;
}

// The access-log line of request `id`, once written (just after the answer).
std::optional<json::object> AwaitAccessLine(const std::string& path, const std::string& id) {
  std::optional<json::object> found;
  Eventually([&] {
    for (json::object& line : JsonLines(ReadWholeFile(path), path)) {
      if (line.at("request_id").as_string() == id) found = std::move(line);
    }
    return found.has_value();
  });
  return found;
}

bool IsLowerHex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Route "kv" to the recording backend, and route "dead" to a backend nothing listens on.
class OperatorLogsTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    // Port 1 (tcpmux) is privileged and unused on test machines: connecting is refused.
    config->Backend("dead") = HttpBackendAt(1);
    config->Route("dead", "/dead/", "dead", "dead:{segment:2}");
  }

  std::string AccessLogPath() const { return dir_.Join("access.log"); }

  Response SendWith(http::verb method, const std::string& target,
                    std::vector<std::pair<std::string, std::string>> fields) {
    Request request =
        MakeRequest(method, target, {}, method == http::verb::get ? std::string() : "data");
    for (const auto& [name, value] : fields) request.set(name, value);
    return Send(std::move(request));
  }
};

TEST_F(OperatorLogsTest, StartListeningAndDrainAreJsonEventsOnStderr) {
  const std::optional<json::object> started = AwaitEvent(gateway_->process(), "fencegate starting");
  ASSERT_TRUE(started.has_value()) << gateway_->process().Stderr();
  EXPECT_EQ(started->at("level").as_string(), "info");
  EXPECT_FALSE(started->at("version").as_string().empty());
  EXPECT_EQ(started->at("config").as_string(), config_path_);
  const std::string time(started->at("time").as_string());
  EXPECT_EQ(time.size(), 24u) << time;  // 2026-12-06T06:30:00.123Z
  EXPECT_EQ(time.back(), 'Z') << time;

  const std::optional<json::object> store = AwaitEvent(gateway_->process(), "store opened");
  ASSERT_TRUE(store.has_value()) << gateway_->process().Stderr();
  EXPECT_EQ(store->at("kind").as_string(), "rocksdb");
  EXPECT_NE(store->at("path").as_string().find(dir_.Join("data")), std::string::npos);

  const std::optional<json::object> listening = AwaitEvent(gateway_->process(), "listening");
  ASSERT_TRUE(listening.has_value()) << gateway_->process().Stderr();
  EXPECT_EQ(listening->at("traffic").as_string(),
            "127.0.0.1:" + std::to_string(gateway_->traffic_port()));
  EXPECT_EQ(listening->at("admin").as_string(),
            "127.0.0.1:" + std::to_string(gateway_->admin_port()));
  // The line scripts read stays on stdout.
  EXPECT_TRUE(gateway_->process()
                  .WaitForStdoutLine(
                      [](const std::string& line) {
                        return line.rfind("fencegate listening traffic=", 0) == 0;
                      },
                      std::chrono::seconds(5))
                  .has_value());

  gateway_->process().Signal(SIGTERM);
  ASSERT_EQ(gateway_->process().Wait(std::chrono::seconds(20)), 0) << gateway_->process().Stderr();
  ASSERT_TRUE(gateway_->process().WaitForOutputEnd(std::chrono::seconds(10)));
  const std::vector<json::object> draining = Events(gateway_->process(), "draining");
  ASSERT_EQ(draining.size(), 1u) << gateway_->process().Stderr();
  EXPECT_EQ(draining[0].at("signal").as_string(), "SIGTERM");
  EXPECT_EQ(draining[0].at("in_flight").as_int64(), 0);
  const std::vector<json::object> drained = Events(gateway_->process(), "drained");
  ASSERT_EQ(drained.size(), 1u) << gateway_->process().Stderr();
  EXPECT_EQ(drained[0].at("cut").as_int64(), 0);
  const std::vector<json::object> stopped = Events(gateway_->process(), "stopped");
  ASSERT_EQ(stopped.size(), 1u) << gateway_->process().Stderr();
  EXPECT_EQ(stopped[0].at("exit_code").as_int64(), 0);
  // Every stderr line of the run was an event (JsonLines fails on any other).
  for (const json::object& line : JsonLines(gateway_->process().Stderr(), "stderr")) {
    EXPECT_TRUE(line.contains("time") && line.contains("level") && line.contains("msg"));
  }
}

TEST_F(OperatorLogsTest, ARefusedBackendConnectionNamesTheBackendAndAddress) {
  EXPECT_EQ(SendWith(http::verb::get, "/dead/x", {}).result_int(), 503);
  const std::optional<json::object> failed =
      AwaitEvent(gateway_->process(), "backend connection failed");
  ASSERT_TRUE(failed.has_value()) << gateway_->process().Stderr();
  EXPECT_EQ(failed->at("level").as_string(), "error");
  EXPECT_EQ(failed->at("backend").as_string(), "dead");
  EXPECT_EQ(failed->at("address").as_string(), "127.0.0.1:1");
  EXPECT_EQ(failed->at("route").as_string(), "dead");
  EXPECT_FALSE(failed->at("error").as_string().empty());

  // A flood is accounted for, not written line by line: every line plus the refusals it says it
  // held back never exceeds the refusals sent (the rate itself: base/log unit tests).
  constexpr int kMore = 20;
  for (int i = 0; i < kMore; ++i) {
    EXPECT_EQ(SendWith(http::verb::get, "/dead/x", {}).result_int(), 503);
  }
  std::uint64_t accounted = 0;
  for (const json::object& line : Events(gateway_->process(), "backend connection failed")) {
    accounted += 1 + line.at("suppressed").to_number<std::uint64_t>();
  }
  EXPECT_LE(accounted, std::uint64_t{kMore + 1});
}

TEST_F(OperatorLogsTest, ARequestWithoutTraceparentGetsOneUpstreamAndInTheAccessLog) {
  const Response response =
      SendWith(http::verb::put, "/kv/t/x", {{"Fencing-Token", "1"}, {"User-Agent", "ops/1.0"}});
  ASSERT_EQ(response.result_int(), 200);
  const std::vector<RecordedRequest> requests = backend_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const std::string sent(requests[0].headers["traceparent"]);
  ASSERT_EQ(sent.size(), 55u) << requests[0];
  EXPECT_EQ(sent.substr(0, 3), "00-");
  EXPECT_EQ(sent.substr(52), "-01");
  const std::string trace_id = sent.substr(3, 32);
  EXPECT_TRUE(IsLowerHex(trace_id) && trace_id != std::string(32, '0')) << sent;

  const std::optional<json::object> line =
      AwaitAccessLine(AccessLogPath(), std::string(response["X-Request-Id"]));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->at("trace_id").as_string(), trace_id);
  EXPECT_EQ(line->at("user_agent").as_string(), "ops/1.0");
  EXPECT_EQ(line->at("principal").as_string(), "");  // an open route
  EXPECT_EQ(line->at("refusal").as_string(), "");
}

TEST_F(OperatorLogsTest, AValidTraceparentReachesTheBackendUnchanged) {
  const Response response = SendWith(http::verb::put, "/kv/t/x",
                                     {{"Fencing-Token", "1"},
                                      {"traceparent", std::string(kClientTraceparent)},
                                      {"tracestate", "a=1"}});
  ASSERT_EQ(response.result_int(), 200);
  const std::vector<RecordedRequest> requests = backend_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].headers["traceparent"], kClientTraceparent);
  EXPECT_EQ(requests[0].headers.count("traceparent"), 1u);
  EXPECT_EQ(requests[0].headers["tracestate"], "a=1");
  const std::optional<json::object> line =
      AwaitAccessLine(AccessLogPath(), std::string(response["X-Request-Id"]));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->at("trace_id").as_string(), kClientTraceId);
}

TEST_F(OperatorLogsTest, AnInvalidTraceparentIsReplacedWithANewTrace) {
  const std::string invalid = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
  ASSERT_EQ(SendWith(http::verb::put, "/kv/t/x", {{"Fencing-Token", "1"}, {"traceparent", invalid}})
                .result_int(),
            200);
  const std::vector<RecordedRequest> requests = backend_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const std::string sent(requests[0].headers["traceparent"]);
  EXPECT_EQ(sent.size(), 55u);
  EXPECT_NE(sent, invalid);
}

TEST_F(OperatorLogsTest, AStaleWritesRejectionRecordCarriesItsTraceId) {
  ASSERT_EQ(SendWith(http::verb::put, "/kv/s/x", {{"Fencing-Token", "5"}}).result_int(), 200);
  const Response stale =
      SendWith(http::verb::put, "/kv/s/x",
               {{"Fencing-Token", "3"}, {"traceparent", std::string(kClientTraceparent)}});
  ASSERT_EQ(stale.result_int(), 409);

  std::string error;
  std::optional<json::value> rejections =
      FetchAdminJson(gateway_->admin_port(), "/admin/rejections?limit=1", &error);
  ASSERT_TRUE(rejections.has_value()) << error;
  ASSERT_EQ(rejections->at("rejections").as_array().size(), 1u);
  const json::object& record = rejections->at("rejections").as_array()[0].as_object();
  EXPECT_EQ(record.at("reason").as_string(), "stale_token");
  EXPECT_EQ(record.at("request_id").as_string(), stale["X-Request-Id"]);
  EXPECT_EQ(record.at("trace_id").as_string(), kClientTraceId);

  const std::optional<json::object> line =
      AwaitAccessLine(AccessLogPath(), std::string(stale["X-Request-Id"]));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->at("refusal").as_string(), "stale-token");
  EXPECT_EQ(line->at("outcome").as_string(), "stale_token");
  EXPECT_EQ(line->at("trace_id").as_string(), kClientTraceId);
}

TEST_F(OperatorLogsTest, Usr1ReopenIsAnEvent) {
  gateway_->process().Signal(SIGUSR1);
  const std::optional<json::object> reopened =
      AwaitEvent(gateway_->process(), "access log reopened");
  ASSERT_TRUE(reopened.has_value()) << gateway_->process().Stderr();
  EXPECT_EQ(reopened->at("path").as_string(), AccessLogPath());
}

// A request still running at the drain deadline is cut, and the event log says how many were.
class ShortDrainLogTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["timeouts"]["shutdown_drain"] = "200ms";
  }
};

TEST_F(ShortDrainLogTest, TheDrainDeadlineEventCountsTheCutRequests) {
  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/s/x", "1", 1500, "slow");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(5)));
  gateway_->process().Signal(SIGTERM);
  ASSERT_EQ(gateway_->process().Wait(std::chrono::seconds(10)), 4) << gateway_->process().Stderr();
  slow.wait();
  ASSERT_TRUE(gateway_->process().WaitForOutputEnd(std::chrono::seconds(10)));
  const std::vector<json::object> draining = Events(gateway_->process(), "draining");
  ASSERT_EQ(draining.size(), 1u) << gateway_->process().Stderr();
  EXPECT_EQ(draining[0].at("in_flight").as_int64(), 1);
  const std::vector<json::object> cut = Events(gateway_->process(), "drain deadline reached");
  ASSERT_EQ(cut.size(), 1u) << gateway_->process().Stderr();
  EXPECT_EQ(cut[0].at("level").as_string(), "warn");
  EXPECT_EQ(cut[0].at("cut").as_int64(), 1);
  EXPECT_TRUE(Events(gateway_->process(), "drained").empty());
  const std::vector<json::object> stopped = Events(gateway_->process(), "stopped");
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].at("exit_code").as_int64(), 4);
}

// `trace_context.generate: false`: a request without a traceparent goes upstream without one.
class NoTraceGenerationTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["trace_context"]["generate"] = false;
  }
};

TEST_F(NoTraceGenerationTest, NothingIsAddedAndTheLogHasNoTraceId) {
  const Response response = Put("/kv/t/x", "1");
  ASSERT_EQ(response.result_int(), 200);
  const std::vector<RecordedRequest> requests = backend_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].headers.count("traceparent"), 0u) << requests[0];
  const std::optional<json::object> line =
      AwaitAccessLine(dir_.Join("access.log"), std::string(response["X-Request-Id"]));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->at("trace_id").as_string(), "");
}

// With a policy on route "kv", the access log names who wrote.
class PrincipalLogTest : public HttpGatewayTest {
 protected:
  // sha256("writer-key-0001")
  static constexpr const char* kWriterKey = "writer-key-0001";
  void CustomizeConfig(GatewayConfig* config) const override {
    YAML::Node principal;
    principal["name"] = "writer";
    principal["api_key_sha256"] =
        Sequence({"c00a4004de64f22ea119c865293d8d000d4eeac6237eed43919a8d720fb0debb"});
    (*config)["auth"]["principals"].push_back(principal);
    YAML::Node kv = config->Route("kv");
    kv["policy"]["read"] = Sequence({"writer"});
    kv["policy"]["write"] = Sequence({"writer"});
    kv["policy"]["advance"]["writer"] = Sequence({"*"});
  }
};

TEST_F(PrincipalLogTest, TheAuthenticatedPrincipalIsLoggedAndARefusalHasItsSlug) {
  Request request = MakeRequest(http::verb::put, "/kv/p/x", {}, "data");
  request.set("Fencing-Token", "1");
  request.set(http::field::authorization, std::string("Bearer ") + kWriterKey);
  const Response written = Send(std::move(request));
  ASSERT_EQ(written.result_int(), 200) << written.body();
  std::optional<json::object> line =
      AwaitAccessLine(dir_.Join("access.log"), std::string(written["X-Request-Id"]));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->at("principal").as_string(), "writer");

  const Response anonymous = Put("/kv/p/x", "2");
  ASSERT_EQ(anonymous.result_int(), 401);
  line = AwaitAccessLine(dir_.Join("access.log"), std::string(anonymous["X-Request-Id"]));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->at("principal").as_string(), "");
  EXPECT_EQ(line->at("refusal").as_string(), "unauthenticated");
}

}  // namespace
}  // namespace fencegate::integration
