// fencegate's decisions never depend on wall-clock time. The gateway runs under libfaketime
// with its wall clock jumped years forward and back, mid-run and across a restart; admission
// (stale, equal, newer), the advance barrier and every timeout (barrier wait, backend response,
// header read) must behave exactly as without the jumps. A decision or deadline computed from
// the wall clock would fire at once on a forward jump or never on a backward one.
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/faults/faketime_gateway.h"
#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::faults {
namespace {

using namespace integration;

constexpr char kTenYearsAhead[] = "+3650d";
constexpr char kTenYearsBack[] = "-3650d";
constexpr char kCenturyAhead[] = "+36500d";

class ClockSkewTest : public ::testing::Test {
 protected:
  // What every test starts from; a test may add keys before Start.
  GatewayConfig BaseConfig() const {
    GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
    config.Backend("api")["forward_token_header"] = "Fencing-Token";
    // One network thread: the requests a test sends while a write waits wake the same event
    // loop, so a deadline kept in wall-clock time would be re-checked against the jumped clock.
    config["threads"] = 1;
    return config;
  }

  void Start(const std::string& offset) { Start(offset, BaseConfig()); }
  void Start(const std::string& offset, const GatewayConfig& config) {
    config_ = dir_.WriteFile("fencegate.yaml", config.Yaml());
    Restart(offset);
  }

  void Restart(const std::string& offset) {
    gateway_.reset();
    SetFakeOffset(clock_file_, offset);
    std::string error;
    gateway_ = StartUnderFaketime(config_, dir_.Join("data"), clock_file_, &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  Response Put(const std::string& target, std::uint64_t token,
               std::initializer_list<std::pair<std::string, std::string>> fields = {}) {
    Request request = MakeRequest(http::verb::put, target, fields, "data");
    request.set("Fencing-Token", std::to_string(token));
    std::string error;
    std::optional<Response> response = Fetch(gateway_->traffic_port, std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << "request failed: " << error;
      Response failed;
      failed.result(0);
      return failed;
    }
    return *response;
  }

  boost::json::object Fence(const std::string& key) {
    std::string error;
    auto state = FetchAdminJson(gateway_->admin_port, "/admin/fences/" + key, &error);
    EXPECT_TRUE(state.has_value()) << error;
    return state ? state->as_object() : boost::json::object{};
  }

  // The year of the gateway's wall clock, as it stamped the fence's last advance: proof that
  // the fake clock is the one the gateway reads.
  int AdvancedYear(const std::string& key) {
    const boost::json::object fence = Fence(key);
    const auto* at = fence.if_contains("advanced_at");
    return at && at->is_string() ? std::stoi(std::string(at->as_string()).substr(0, 4)) : 0;
  }

  static int RealYear() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    return utc.tm_year + 1900;
  }

  // The recorded request that carried `token`; nullptr if none.
  static const RecordedRequest* WithToken(const std::vector<RecordedRequest>& requests,
                                          std::uint64_t token) {
    for (const RecordedRequest& request : requests) {
      if (request.headers["Fencing-Token"] == std::to_string(token)) return &request;
    }
    return nullptr;
  }

  // Polls the admin API until a write waits at the barrier of `key` (bounded: 10 s).
  bool WaitForBarrierWaiter(const std::string& key) {
    return Eventually(
        [&] {
          const boost::json::object fence = Fence(key);
          return fence.contains("writes_waiting") &&
                 fence.at("writes_waiting").to_number<int>() > 0;
        },
        std::chrono::seconds(10));
  }

  // Sends `count` reads of another resource, 100 ms apart, so the gateway's event loop runs
  // (and looks at its timers) while a write waits. The spacing is the subject: time passes on
  // the real clock while the wall clock is jumped.
  void KeepBusy(int count) {
    for (int i = 0; i < count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::optional<Response> read =
          Fetch(gateway_->traffic_port, MakeRequest(http::verb::get, "/kv/other/x"));
      EXPECT_TRUE(read && read->result_int() == 200);
    }
  }

  TempDir dir_;
  const std::string clock_file_ = dir_.Join("faketime");
  RecordingBackend backend_;
  std::string config_;
  std::unique_ptr<FaketimeGateway> gateway_;  // declared last: stops before the backend
};

// Tokens are compared, never timestamps: a clock ten years back neither revives a stale token
// nor refuses a newer one, within one process and across a restart on the same store.
TEST_F(ClockSkewTest, AdmissionIgnoresWallClockJumpsWithinAndAcrossRuns) {
  Start(kTenYearsAhead);
  ASSERT_EQ(Put("/kv/a/x", 10).result_int(), 200);
  EXPECT_GE(AdvancedYear("kv:a"), RealYear() + 9) << "the gateway does not run on the fake clock";

  SetFakeOffset(clock_file_, kTenYearsBack);
  EXPECT_EQ(Put("/kv/a/x", 9).result_int(), 409);
  EXPECT_EQ(Put("/kv/a/x", 10).result_int(), 200);
  EXPECT_EQ(Put("/kv/a/x", 11).result_int(), 200);
  EXPECT_LE(AdvancedYear("kv:a"), RealYear() - 9) << "the clock did not jump back";

  // A new process twenty years behind the first advance's stamp.
  gateway_->process->Signal(SIGKILL);
  ASSERT_TRUE(gateway_->process->Wait(std::chrono::seconds(10)).has_value());
  Restart("-7300d");
  EXPECT_EQ(Fence("kv:a").at("highest_token").to_number<std::uint64_t>(), 11u);
  EXPECT_EQ(Put("/kv/a/x", 10).result_int(), 409);
  EXPECT_EQ(Put("/kv/a/x", 11).result_int(), 200);
  EXPECT_EQ(Put("/kv/a/x", 12).result_int(), 200);
}

// The advance barrier holds a newer write until the older one completed, however far the
// clock jumps while it waits: a century forward must not look like barrier_wait expiring.
TEST_F(ClockSkewTest, BarrierHoldsTheNewerWriteWhileTheClockJumps) {
  GatewayConfig config = BaseConfig();
  config["timeouts"]["barrier_wait"] = "30s";
  Start("+0d", config);
  ASSERT_EQ(Put("/kv/a/x", 1).result_int(), 200);

  std::thread older([&] {
    EXPECT_EQ(Put("/kv/a/x", 2, {{"X-Test-Delay-Ms", "1500"}}).result_int(), 200);
  });
  ASSERT_TRUE(backend_.WaitForArrived(2, std::chrono::seconds(10)));
  std::thread newer([&] { EXPECT_EQ(Put("/kv/a/x", 3).result_int(), 200); });
  ASSERT_TRUE(WaitForBarrierWaiter("kv:a"));
  SetFakeOffset(clock_file_, kCenturyAhead);
  KeepBusy(5);
  SetFakeOffset(clock_file_, kTenYearsBack);
  KeepBusy(3);
  older.join();
  newer.join();

  const std::vector<RecordedRequest> requests = backend_.Requests();
  const RecordedRequest* two = WithToken(requests, 2);
  const RecordedRequest* three = WithToken(requests, 3);
  ASSERT_NE(two, nullptr);
  ASSERT_NE(three, nullptr);
  EXPECT_GT(three->arrival, two->completion) << "token 3 reached the backend before 2 completed";
}

// Every timeout still fires when the clock jumps ten years back while it runs: barrier_wait
// (503), the backend's response_timeout (504) and header_read (connection cut).
TEST_F(ClockSkewTest, TimeoutsFireWhenTheClockJumpsBack) {
  GatewayConfig config = BaseConfig();
  config["timeouts"]["barrier_wait"] = "1s";
  config["timeouts"]["header_read"] = "1s";
  config.Backend("api")["response_timeout"] = "3s";
  Start("+0d", config);
  ASSERT_EQ(Put("/kv/a/x", 1).result_int(), 200);

  // barrier_wait: the newer write gives up while the older one (2 s at the backend) runs. The
  // clock jumps while it waits, after its deadline was set.
  std::thread older([&] {
    EXPECT_EQ(Put("/kv/a/x", 2, {{"X-Test-Delay-Ms", "2000"}}).result_int(), 200);
  });
  ASSERT_TRUE(backend_.WaitForArrived(2, std::chrono::seconds(10)));
  std::thread newer([&] {
    Response held = Put("/kv/a/x", 3);
    EXPECT_EQ(held.result_int(), 503);
    EXPECT_NE(held.body().find("barrier-timeout"), std::string::npos) << held.body();
  });
  ASSERT_TRUE(WaitForBarrierWaiter("kv:a"));
  SetFakeOffset(clock_file_, kTenYearsBack);
  newer.join();
  older.join();
  EXPECT_EQ(WithToken(backend_.Requests(), 3), nullptr) << "the held write was forwarded";

  // response_timeout: a backend slower than it gets 504.
  SetFakeOffset(clock_file_, "+0d");
  const std::size_t before_slow = backend_.Requests().size();
  std::thread slow([&] {
    Response response = Put("/kv/b/x", 1, {{"X-Test-Delay-Ms", "6000"}});
    EXPECT_EQ(response.result_int(), 504) << response.body();
  });
  ASSERT_TRUE(backend_.WaitForArrived(before_slow + 1, std::chrono::seconds(10)));
  SetFakeOffset(clock_file_, kTenYearsBack);
  slow.join();

  // header_read: a header that never ends is cut off.
  SetFakeOffset(clock_file_, "+0d");
  ASSERT_TRUE(GatewayIdle(gateway_->admin_port));  // so the next connection is the only one
  HttpConnection trickle(std::chrono::seconds(10));
  ASSERT_TRUE(trickle.Connect(gateway_->traffic_port)) << trickle.error();
  ASSERT_TRUE(trickle.WriteRaw("PUT /kv/c/x HTTP/1.1\r\nHost: t\r\n"));
  // The gateway armed its header deadline once it holds the connection (its metrics say so).
  ASSERT_TRUE(Eventually([&] {
    return MetricValue(FetchMetricsText(gateway_->admin_port), "fencegate_connections_open", "") ==
           1.0;
  }));
  SetFakeOffset(clock_file_, kTenYearsBack);
  trickle.ReadUntilClose();
  EXPECT_EQ(trickle.error().find("timeout"), std::string::npos)
      << "the gateway never cut the unfinished header: " << trickle.error();
}

}  // namespace
}  // namespace fencegate::faults
