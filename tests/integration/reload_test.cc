// Hot reload (README "Reloading"): SIGHUP and POST /admin/reload re-read the configuration file;
// new connections get the new routes, connections already open finish on the configuration they
// started with and end gracefully, nothing in flight is lost, and a broken file changes nothing.
#include <signal.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <future>
#include <iostream>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

class ReloadTest : public HttpGatewayTest {
 protected:
  // The fixture's configuration, plus the route "extra" (/extra/ to the same backend) if asked.
  std::string ConfigYaml(bool with_extra_route) const {
    GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
    if (with_extra_route) config.Route("extra", "/extra/", "api", "extra:{segment:2}");
    return config.Yaml();
  }
  void WriteConfig(const std::string& text) { dir_.WriteFile("fencegate.yaml", text); }

  unsigned Get(const std::string& target) {
    return Send(MakeRequest(http::verb::get, target)).result_int();
  }

  Response PostReload(const std::string& query = "") {
    std::string error;
    auto response = Fetch(gateway_->admin_port(),
                          MakeRequest(http::verb::post, "/admin/reload" + query), &error);
    if (!response) {
      ADD_FAILURE() << "POST /admin/reload failed: " << error;
      return Response{};
    }
    return *response;
  }

  double Metric(const std::string& name, const std::string& labels = "") {
    return MetricValue(FetchMetricsText(gateway_->admin_port()), name, labels).value_or(-1);
  }
};

std::vector<std::string> Strings(const boost::json::value& array) {
  std::vector<std::string> out;
  for (const auto& item : array.as_array()) out.emplace_back(item.as_string());
  return out;
}

using Names = std::vector<std::string>;

TEST_F(ReloadTest, SighupAddsAndRemovesARoute) {
  EXPECT_EQ(Get("/extra/a"), 404u);
  WriteConfig(ConfigYaml(true));
  gateway_->process().Signal(SIGHUP);
  EXPECT_TRUE(Eventually([&] { return Get("/extra/a") == 200u; })) << gateway_->process().Stderr();
  EXPECT_EQ(Get("/kv/a"), 200u);
  EXPECT_TRUE(gateway_->process().WaitForStderr("\"msg\":\"reload applied\",\"trigger\":\"SIGHUP\"",
                                                std::chrono::seconds(10)));

  WriteConfig(ConfigYaml(false));
  gateway_->process().Signal(SIGHUP);
  EXPECT_TRUE(Eventually([&] { return Get("/extra/a") == 404u; }));
  EXPECT_EQ(Get("/kv/a"), 200u);
}

TEST_F(ReloadTest, PostAnswersWhatChangedAndAppliesBeforeAnswering) {
  EXPECT_EQ(Get("/extra/a"), 404u);
  WriteConfig(ConfigYaml(true));
  const Response added = PostReload();
  ASSERT_EQ(added.result_int(), 200) << added.body();
  EXPECT_EQ(added[http::field::content_type], "application/json");
  const boost::json::value body = boost::json::parse(added.body());
  EXPECT_EQ(body.at("result").as_string(), "applied");
  EXPECT_EQ(Strings(body.at("routes").at("added")), Names{"extra"});
  EXPECT_EQ(Strings(body.at("routes").at("removed")), Names{});
  EXPECT_EQ(Strings(body.at("routes").at("changed")), Names{});
  EXPECT_EQ(Strings(body.at("backends").at("changed")), Names{});
  EXPECT_EQ(Strings(body.at("restart_required")), Names{});
  // Every network thread has the new routes before the answer.
  for (int i = 0; i < 8; ++i) EXPECT_EQ(Get("/extra/a"), 200u);

  // A changed backend and a key that needs a restart are reported as such.
  GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
  config.Backend("api")["response_timeout"] = "7s";
  config["threads"] = 3;
  WriteConfig(config.Yaml());
  const Response removed = PostReload();
  ASSERT_EQ(removed.result_int(), 200) << removed.body();
  const boost::json::value second = boost::json::parse(removed.body());
  EXPECT_EQ(Strings(second.at("routes").at("removed")), Names{"extra"});
  EXPECT_EQ(Strings(second.at("backends").at("changed")), Names{"api"});
  EXPECT_EQ(Strings(second.at("restart_required")), Names{"threads"});
  EXPECT_EQ(Get("/extra/a"), 404u);
  EXPECT_EQ(Get("/kv/a"), 200u);
  EXPECT_TRUE(gateway_->process().WaitForStderr(
      "takes effect at the next restart; the running value stays\",\"key\":\"threads\"",
      std::chrono::seconds(10)));
}

TEST_F(ReloadTest, KeepAliveConnectionIsAnsweredThenClosedGracefully) {
  HttpConnection connection;
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port()));
  auto before = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a"));
  ASSERT_TRUE(before.has_value()) << connection.error();
  EXPECT_EQ(before->result_int(), 200);
  EXPECT_TRUE(before->keep_alive());

  WriteConfig(ConfigYaml(true));
  ASSERT_EQ(PostReload().result_int(), 200);

  // The request sent on the old connection after the reload is answered, on the configuration
  // the connection started with (no "extra" route there), and the connection then ends cleanly.
  auto after = connection.RoundTrip(MakeRequest(http::verb::get, "/extra/a"));
  ASSERT_TRUE(after.has_value()) << connection.error();
  EXPECT_EQ(after->result_int(), 404);
  EXPECT_FALSE(after->keep_alive());
  EXPECT_EQ((*after)[http::field::connection], "close");
  EXPECT_EQ(connection.ReadUntilClose(), "");
  // A new connection has the new configuration.
  EXPECT_EQ(Get("/extra/a"), 200u);
}

// 50 keep-alive connections send 20 requests each; the second 10 of every connection are sent
// while the configuration is reloaded (POST, then SIGHUP): every one of the 1,000 requests is
// answered, none reset. A connection told Connection: close reconnects, as clients do.
TEST_F(ReloadTest, ThousandRequestsInFlightAcrossReloadsAreAllAnswered) {
  constexpr int kConnections = 50;
  constexpr int kRequestsEach = 20;
  std::atomic<int> answered{0};
  std::atomic<int> failed{0};
  std::atomic<int> reconnects{0};
  std::latch halfway(kConnections);
  std::promise<void> reload_starting;
  std::shared_future<void> reload_started = reload_starting.get_future().share();
  std::vector<std::thread> clients;
  for (int c = 0; c < kConnections; ++c) {
    clients.emplace_back([&, c] {
      std::optional<HttpConnection> connection;
      for (int r = 0; r < kRequestsEach; ++r) {
        if (r == kRequestsEach / 2) {
          halfway.count_down();
          reload_started.wait();
        }
        if (!connection) {
          connection.emplace();
          if (!connection->Connect(gateway_->traffic_port())) {
            ++failed;
            return;
          }
        }
        const std::string target = "/kv/c" + std::to_string(c) + "/r" + std::to_string(r);
        auto response = connection->RoundTrip(MakeRequest(http::verb::get, target));
        if (!response || response->result_int() != 200) {
          ADD_FAILURE() << target << ": " << (response ? response->body() : connection->error());
          ++failed;
          return;
        }
        ++answered;
        if (!response->keep_alive()) {
          connection.reset();
          ++reconnects;
        }
      }
    });
  }
  halfway.wait();
  WriteConfig(ConfigYaml(true));
  reload_starting.set_value();
  EXPECT_EQ(PostReload().result_int(), 200);
  WriteConfig(ConfigYaml(false));
  gateway_->process().Signal(SIGHUP);
  for (auto& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(answered.load(), kConnections * kRequestsEach);
  EXPECT_EQ(backend_.Requests().size(), static_cast<std::size_t>(kConnections * kRequestsEach));
  EXPECT_TRUE(Eventually(
      [&] { return Metric("fencegate_config_reloads_total", "result=\"success\"") == 2; }));
  RecordProperty("reconnects", reconnects.load());
  std::cout << "reload under load: " << kConnections * kRequestsEach << " requests on "
            << kConnections << " keep-alive connections across a POST /admin/reload and a "
            << "SIGHUP: " << answered.load() << " answered, " << failed.load() << " failed, "
            << reconnects.load() << " reconnects after Connection: close" << std::endl;
}

TEST_F(ReloadTest, BrokenConfigurationChangesNothing) {
  const std::string good = ConfigYaml(false);
  // A syntax error, an unknown key, and no file at all: each refused with --check-config's
  // FILE:LINE:COL lines, and the configuration in force keeps serving.
  const std::string syntax = good + "routes: [unclosed\n";
  const std::string unknown = good + "no_such_key: 1\n";
  struct Case {
    std::string text;  // empty: the file is removed
    std::string expected;
  };
  for (const Case& broken : {Case{syntax, "fencegate.yaml:"}, Case{unknown, "no_such_key"},
                             Case{"", "fencegate.yaml"}}) {
    if (broken.text.empty()) {
      std::filesystem::remove(config_path_);
    } else {
      WriteConfig(broken.text);
    }
    const Response refused = PostReload();
    EXPECT_EQ(refused.result_int(), 422) << refused.body();
    EXPECT_EQ(refused[http::field::content_type], "application/problem+json");
    const boost::json::value body = boost::json::parse(refused.body());
    EXPECT_EQ(body.at("type").as_string(), "https://fencegate.dev/problems/config-invalid");
    const auto errors = Strings(body.at("errors"));
    ASSERT_FALSE(errors.empty());
    EXPECT_NE(errors.front().find(broken.expected), std::string::npos) << errors.front();
    EXPECT_EQ(Get("/kv/a"), 200u);
  }
  // The syntax error's line and column, as --check-config prints them.
  WriteConfig(syntax);
  const Response refused = PostReload();
  const auto errors = Strings(boost::json::parse(refused.body()).at("errors"));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find(config_path_ + ":"), std::string::npos) << errors.front();
  const std::string located = errors.front().substr(config_path_.size());
  EXPECT_TRUE(located.size() > 4 && located[0] == ':' && std::isdigit(located[1]))
      << errors.front();

  // SIGHUP logs the same lines to stderr.
  WriteConfig(unknown);
  gateway_->process().Signal(SIGHUP);
  EXPECT_TRUE(gateway_->process().WaitForStderr("no_such_key", std::chrono::seconds(10)));
  EXPECT_TRUE(Eventually(
      [&] { return Metric("fencegate_config_reloads_total", "result=\"failure\"") == 5; }));
  EXPECT_EQ(Metric("fencegate_config_reloads_total", "result=\"success\""), 0);
  EXPECT_EQ(Get("/kv/a"), 200u);
  EXPECT_EQ(Get("/extra/a"), 404u);
}

TEST_F(ReloadTest, MetricsCountReloadsAndCarryTheConfigHash) {
  const std::string text = ConfigYaml(false);
  const std::string metrics = FetchMetricsText(gateway_->admin_port());
  const double started =
      MetricValue(metrics, "fencegate_config_last_reload_success_timestamp_seconds", "")
          .value_or(0);
  EXPECT_GT(started, 1.6e9);
  const Response first = PostReload();
  ASSERT_EQ(first.result_int(), 200) << first.body();
  const std::string old_hash(boost::json::parse(first.body()).at("config_hash").as_string());
  EXPECT_EQ(old_hash.size(), 16u);
  EXPECT_EQ(Metric("fencegate_config_info", "hash=\"" + old_hash + "\""), 1);

  WriteConfig(ConfigYaml(true));
  const Response second = PostReload();
  ASSERT_EQ(second.result_int(), 200) << second.body();
  const std::string new_hash(boost::json::parse(second.body()).at("config_hash").as_string());
  EXPECT_NE(new_hash, old_hash);
  const std::string after = FetchMetricsText(gateway_->admin_port());
  EXPECT_EQ(MetricValue(after, "fencegate_config_info", "hash=\"" + new_hash + "\""), 1);
  EXPECT_FALSE(MetricValue(after, "fencegate_config_info", "hash=\"" + old_hash + "\""));
  EXPECT_EQ(MetricValue(after, "fencegate_config_reloads_total", "result=\"success\""), 2);
  EXPECT_GE(
      MetricValue(after, "fencegate_config_last_reload_success_timestamp_seconds", "").value_or(0),
      started);
}

// access_log.path from one file to another applies live; lines of requests after the reload go
// to the new file.
TEST_F(ReloadTest, AccessLogMovesToAnotherFile) {
  const std::string moved = dir_.Join("moved.log");
  const std::string before(Send(MakeRequest(http::verb::get, "/kv/a"))["X-Request-Id"]);
  ASSERT_TRUE(Eventually(
      [&] { return ReadWholeFile(dir_.Join("access.log")).find(before) != std::string::npos; }));
  WriteConfig(GatewayConfig::HttpBackend(backend_.port(), moved).Yaml());
  const Response reloaded = PostReload();
  ASSERT_EQ(reloaded.result_int(), 200) << reloaded.body();
  EXPECT_EQ(Strings(boost::json::parse(reloaded.body()).at("restart_required")), Names{});
  const std::string after(Send(MakeRequest(http::verb::get, "/kv/a"))["X-Request-Id"]);
  EXPECT_TRUE(Eventually([&] { return ReadWholeFile(moved).find(after) != std::string::npos; }));
  EXPECT_EQ(ReadWholeFile(dir_.Join("access.log")).find(after), std::string::npos);
}

// The first route with idempotency records arrives by reload: the store opens then, and a retry
// is answered from it without reaching the backend again.
TEST_F(ReloadTest, ReloadCanTurnOnIdempotencyRecords) {
  GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
  config.Route("kv")["idempotency"] = YAML::Node(YAML::NodeType::Map);
  WriteConfig(config.Yaml());
  const Response reloaded = PostReload();
  ASSERT_EQ(reloaded.result_int(), 200) << reloaded.body();
  EXPECT_EQ(Strings(boost::json::parse(reloaded.body()).at("routes").at("changed")), Names{"kv"});
  const auto post = [&] {
    Request request = MakeRequest(http::verb::post, "/kv/a/orders", {}, "order-1");
    request.set("Fencing-Token", "1");
    request.set("Idempotency-Key", "\"k1\"");
    return Send(std::move(request));
  };
  const Response first = post();
  EXPECT_EQ(first.result_int(), 200);
  const Response replay = post();
  EXPECT_EQ(replay.result_int(), 200);
  EXPECT_EQ(replay["Idempotency-Replayed"], "?1");
  EXPECT_EQ(backend_.Requests().size(), 1u);
}

// A reload that changes the fence-key template of a route that admitted writes is refused,
// naming the route, and nothing changes; the request that accepts it for that route applies it.
TEST_F(ReloadTest, AFenceKeyTemplateChangeIsRefusedUnlessAccepted) {
  ASSERT_EQ(Put("/kv/a/x", "5").result_int(), 200);
  GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
  config.Route("kv")["fence_key"] = "kv:{path}";
  WriteConfig(config.Yaml());
  const Response refused = PostReload();
  EXPECT_EQ(refused.result_int(), 422) << refused.body();
  const auto errors = Strings(boost::json::parse(refused.body()).at("errors"));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors.front().find("kv"), std::string::npos) << errors.front();
  // Still the old template: the fence of "kv:a" refuses a lower token.
  EXPECT_EQ(Put("/kv/a/y", "4").result_int(), 409);

  const Response accepted = PostReload("?accept_fence_key_change=kv");
  EXPECT_EQ(accepted.result_int(), 200) << accepted.body();
  EXPECT_EQ(Strings(boost::json::parse(accepted.body()).at("routes").at("changed")), Names{"kv"});
  // "kv:/kv/a/y" is a new fence.
  EXPECT_EQ(Put("/kv/a/y", "4").result_int(), 200);
}

TEST_F(ReloadTest, ReloadAnswersOnlyToPost) {
  const auto response =
      Fetch(gateway_->admin_port(), MakeRequest(http::verb::get, "/admin/reload"));
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->result_int(), 405);
  EXPECT_EQ((*response)[http::field::allow], "POST");
}

}  // namespace
}  // namespace fencegate::integration
