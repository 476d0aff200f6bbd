// Several servers behind one http route, through the real binary and three real nginx instances
// (Debian's nginx-light, with its WebDAV PUT): spread by round robin, a server killed (SIGKILL)
// during a write load, a server answering 500, and fence_key affinity (docs/UPSTREAMS.md). Every
// write is a distinct file, so what each server holds on disk says where each write went.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/free_port.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace json = boost::json;

constexpr const char* kFailoverAdminKey = "failover-admin-2b7e41";
// printf %s failover-admin-2b7e41 | sha256sum
constexpr const char* kFailoverAdminKeySha256 =
    "4e7764cb4394a75317cae4c7f0408a708449af1386fcf2703072be618e9f11a1";

// One nginx server of the pool: a WebDAV-PUT file store under its own root, with an access log
// of "METHOD URI STATUS" lines, answering 500 to everything while the file `fail` exists.
struct PoolServer {
  std::uint16_t port = 0;
  std::string dir;
  std::unique_ptr<Process> process;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  std::string root() const { return dir + "/files"; }
  std::string fail_flag() const { return dir + "/fail"; }

  // The access log's lines "PUT <uri> <status>".
  std::vector<std::string> Puts() const {
    std::ifstream log(dir + "/access.log");
    std::vector<std::string> puts;
    for (std::string line; std::getline(log, line);) {
      if (line.rfind("PUT ", 0) == 0) puts.push_back(line);
    }
    return puts;
  }
  bool Holds(const std::string& path, const std::string& body) const {
    std::ifstream file(root() + path);
    std::stringstream content;
    content << file.rdbuf();
    return file.good() && content.str() == body;
  }
};

class BackendFailoverTest : public ::testing::Test {
 protected:
  void TearDown() override {
    gateway_.reset();
    for (PoolServer& server : servers_) {
      if (server.process) server.process->Stop(std::chrono::seconds(10));
    }
  }

  void StartServer(PoolServer& server) {
    std::filesystem::create_directories(server.root());
    const std::string& dir = server.dir;
    std::ofstream(dir + "/nginx.conf")
        << "daemon off;\nmaster_process off;\nworker_processes 1;\npid " << dir
        << "/nginx.pid;\nerror_log " << dir << "/error.log warn;\n"
        << "events { worker_connections 256; }\nhttp {\n"
        << "  log_format plain '$request_method $uri $status';\n"
        << "  access_log " << dir << "/access.log plain;\n"
        << "  client_body_temp_path " << dir << ";\n  proxy_temp_path " << dir << ";\n"
        << "  fastcgi_temp_path " << dir << ";\n  uwsgi_temp_path " << dir << ";\n"
        << "  scgi_temp_path " << dir << ";\n"
        << "  server {\n    listen 127.0.0.1:" << server.port << ";\n    root " << server.root()
        << ";\n    location = /health {\n      if (-f " << server.fail_flag()
        << ") { return 500; }\n      return 200 \"ok\\n\";\n    }\n"
        << "    location / {\n      if (-f " << server.fail_flag() << ") { return 500; }\n"
        << "      dav_methods PUT;\n      create_full_put_path on;\n    }\n  }\n}\n";
    std::string error;
    server.process =
        Process::Start({"/usr/sbin/nginx", "-p", dir, "-c", dir + "/nginx.conf"}, &error);
    ASSERT_NE(server.process, nullptr) << error;
    ASSERT_TRUE(Eventually([&] {
      HttpConnection probe;
      return probe.Connect(server.port);
    })) << "nginx did not start: "
        << server.process->Stderr();
  }

  void StartServers(int count) {
    servers_.resize(count);
    for (int i = 0; i < count; ++i) {
      servers_[i].port = FreeLoopbackPort();
      servers_[i].dir = dir_.Join("server" + std::to_string(i));
      ASSERT_NO_FATAL_FAILURE(StartServer(servers_[i]));
    }
  }

  void Kill(PoolServer& server) {
    server.process->Signal(SIGKILL);
    server.process->Wait(std::chrono::seconds(10));
    server.process.reset();
  }

  // Backend "pool" over the servers, health checks every 100ms, a first ejection of 1s.
  void StartGateway(const std::string& policy, unsigned consecutive_failures = 3) {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    YAML::Node pool = config.Backend("pool");
    pool["kind"] = "http";
    for (const PoolServer& server : servers_) pool["servers"].push_back(server.url());
    pool["policy"] = policy;
    pool["health_check"]["path"] = "/health";
    pool["health_check"]["interval"] = "100ms";
    pool["health_check"]["timeout"] = "500ms";
    pool["health_check"]["healthy_threshold"] = 1;
    pool["health_check"]["unhealthy_threshold"] = 1;
    pool["outlier"]["consecutive_failures"] = consecutive_failures;
    pool["outlier"]["base_ejection_time"] = "1s";
    pool["outlier"]["max_ejected_percent"] = 100;
    config.Route("pool", "/pool/", "pool", "pool:{segment:2}");
    YAML::Node principal;
    principal["name"] = "ops";
    principal["api_key_sha256"].push_back(kFailoverAdminKeySha256);
    config["admin"]["principals"].push_back(principal);
    std::string error;
    gateway_ = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config.Yaml()),
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  // A fenced write of `body` to /pool/<key>/f with `token`: its status (0: no answer).
  static unsigned Write(std::unique_ptr<HttpConnection>& connection, std::uint16_t port,
                        const std::string& key, int token, const std::string& body) {
    std::optional<Response> response = connection->RoundTrip(MakeRequest(
        http::verb::put, "/pool/" + key + "/f", {{"Fencing-Token", std::to_string(token)}}, body));
    if (!response) {
      // The gateway closed the connection after a failed exchange: a fresh one for the next.
      connection = std::make_unique<HttpConnection>();
      connection->Connect(port);
      return 0;
    }
    if (!response->keep_alive()) {
      connection = std::make_unique<HttpConnection>();
      connection->Connect(port);
    }
    return response->result_int();
  }
  unsigned Write(const std::string& key, int token, const std::string& body) {
    if (!client_) {
      client_ = std::make_unique<HttpConnection>();
      client_->Connect(gateway_->traffic_port());
    }
    return Write(client_, gateway_->traffic_port(), key, token, body);
  }

  // Server `url` of backend "pool" in GET /admin/backends; null if absent.
  json::value AdminServer(const std::string& url) {
    Request request = MakeRequest(http::verb::get, "/admin/backends");
    request.set(http::field::authorization, std::string("Bearer ") + kFailoverAdminKey);
    const auto response = Fetch(gateway_->admin_port(), std::move(request));
    if (!response || response->result() != http::status::ok) return nullptr;
    json::error_code ec;
    const json::value body = json::parse(response->body(), ec);
    return ec ? json::value(nullptr) : FindBackendServer(body, "pool", url);
  }
  bool Usable(const PoolServer& server, bool usable) {
    const json::value state = AdminServer(server.url());
    return state.is_object() && state.at("usable") == usable;
  }
  std::int64_t Requests(const PoolServer& server) {
    const json::value state = AdminServer(server.url());
    return state.is_object() ? state.at("requests").to_number<std::int64_t>() : -1;
  }

  // Which servers hold /pool/<key>/f with `body`.
  std::vector<int> Holders(const std::string& key, const std::string& body) const {
    std::vector<int> holders;
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      if (servers_[i].Holds("/pool/" + key + "/f", body)) holders.push_back(static_cast<int>(i));
    }
    return holders;
  }

  TempDir dir_;
  std::vector<PoolServer> servers_;
  std::unique_ptr<GatewayInstance> gateway_;
  std::unique_ptr<HttpConnection> client_;
};

TEST_F(BackendFailoverTest, RoundRobinSpreadsWritesOverTheServers) {
  ASSERT_NO_FATAL_FAILURE(StartServers(3));
  ASSERT_NO_FATAL_FAILURE(StartGateway("round_robin"));
  constexpr int kWrites = 150;
  for (int i = 0; i < kWrites; ++i) {
    ASSERT_EQ(Write("rr" + std::to_string(i), 1, "v"), 201u) << i;
  }
  // nginx logs a request after answering it.
  EXPECT_TRUE(Eventually([&] {
    std::size_t logged = 0;
    for (const PoolServer& server : servers_) logged += server.Puts().size();
    return logged == kWrites;
  }));
  for (const PoolServer& server : servers_) {
    // An even share (50) within a tolerance: the network threads each keep their own cursor.
    EXPECT_GE(server.Puts().size(), 35u) << server.url();
    EXPECT_LE(server.Puts().size(), 65u) << server.url();
  }
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_EQ(Holders("rr" + std::to_string(i), "v").size(), 1u) << i;
  }
}

// kill -9 of one server while four clients write: every acknowledged write is on exactly one
// server, at most the writes in flight to the dead server fail, nothing goes to it once it is
// out, and it returns after a restart.
TEST_F(BackendFailoverTest, AServerKilledDuringAWriteLoadLosesNoWriteAndReturns) {
  ASSERT_NO_FATAL_FAILURE(StartServers(3));
  ASSERT_NO_FATAL_FAILURE(StartGateway("round_robin"));
  constexpr int kClients = 4;
  constexpr int kWritesPerClient = 60;
  std::atomic<int> completed{0};
  std::vector<std::vector<unsigned>> statuses(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto connection = std::make_unique<HttpConnection>();
      connection->Connect(gateway_->traffic_port());
      for (int i = 0; i < kWritesPerClient; ++i) {
        const std::string key = "c" + std::to_string(c) + "-" + std::to_string(i);
        statuses[c].push_back(Write(connection, gateway_->traffic_port(), key, 1, "body-" + key));
        ++completed;
      }
    });
  }
  // Kill once the load is under way (a state of the load, not a time).
  ASSERT_TRUE(Eventually([&] { return completed.load() >= kClients * kWritesPerClient / 4; }));
  const auto killed_at = std::chrono::steady_clock::now();
  Kill(servers_[1]);
  // Reported, not asserted: how long the pool took to stop picking the dead server (seen from
  // /admin/backends, polled every 10 ms), for the failover figures of docs/UPSTREAMS.md.
  ASSERT_TRUE(Eventually([&] { return Usable(servers_[1], false); }));
  const auto ejected_after = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed_at);
  for (std::thread& client : clients) client.join();

  int failed = 0;
  for (int c = 0; c < kClients; ++c) {
    for (int i = 0; i < kWritesPerClient; ++i) {
      const std::string key = "c" + std::to_string(c) + "-" + std::to_string(i);
      const std::vector<int> holders = Holders(key, "body-" + key);
      if (statuses[c][i] == 201) {
        EXPECT_EQ(holders.size(), 1u) << key << " acknowledged but held by " << holders.size();
      } else {
        ++failed;
        EXPECT_LE(holders.size(), 1u) << key;
      }
    }
  }
  EXPECT_LE(failed, kClients) << "more writes failed than were in flight";

  // Out of the pool: nothing more goes to it.
  const std::int64_t sent_to_dead = Requests(servers_[1]);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(Write("after" + std::to_string(i), 1, "x"), 201u) << i;
  }
  EXPECT_EQ(Requests(servers_[1]), sent_to_dead);
  std::cout << "failover: " << kClients * kWritesPerClient << " writes on " << kClients
            << " connections, one of 3 servers killed after " << kClients * kWritesPerClient / 4
            << ": ejected within " << ejected_after.count() << " ms of the kill, " << failed
            << " writes failed, " << Requests(servers_[1]) - sent_to_dead
            << " requests sent to the dead server after its ejection" << std::endl;

  // Restarted: back in the pool, and writes reach it again.
  ASSERT_NO_FATAL_FAILURE(StartServer(servers_[1]));
  ASSERT_TRUE(Eventually([&] { return Usable(servers_[1], true); }));
  const std::size_t before = servers_[1].Puts().size();
  int i = 0;
  EXPECT_TRUE(Eventually([&] {
    EXPECT_EQ(Write("back" + std::to_string(i++), 1, "y"), 201u);
    return servers_[1].Puts().size() > before;
  }));
}

TEST_F(BackendFailoverTest, AServerAnswering500IsEjectedAndReturns) {
  ASSERT_NO_FATAL_FAILURE(StartServers(3));
  ASSERT_NO_FATAL_FAILURE(StartGateway("round_robin"));
  std::ofstream(servers_[2].fail_flag()) << "1";
  ASSERT_TRUE(Eventually([&] { return Usable(servers_[2], false); }));
  const std::size_t failing = servers_[2].Puts().size();
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(Write("ok" + std::to_string(i), 1, "v"), 201u) << i;
  }
  EXPECT_EQ(servers_[2].Puts().size(), failing);

  std::filesystem::remove(servers_[2].fail_flag());
  ASSERT_TRUE(Eventually([&] { return Usable(servers_[2], true); }));
  int i = 0;
  EXPECT_TRUE(Eventually([&] {
    EXPECT_EQ(Write("again" + std::to_string(i++), 1, "v"), 201u);
    return servers_[2].Puts().size() > failing;
  }));
}

// Under fence_key every write of a key goes to one server; when that server dies only its keys
// move.
TEST_F(BackendFailoverTest, FenceKeyKeepsEachKeyOnOneServerAndMovesOnlyTheDeadServersKeys) {
  ASSERT_NO_FATAL_FAILURE(StartServers(3));
  ASSERT_NO_FATAL_FAILURE(StartGateway("fence_key"));
  constexpr int kKeys = 24;
  std::map<std::string, int> owner;
  for (int token = 1; token <= 3; ++token) {
    for (int k = 0; k < kKeys; ++k) {
      const std::string key = "key" + std::to_string(k);
      const std::string body = key + "-" + std::to_string(token);
      ASSERT_EQ(Write(key, token, body), token == 1 ? 201u : 204u) << key;
      const std::vector<int> holders = Holders(key, body);
      ASSERT_EQ(holders.size(), 1u) << key;
      if (token == 1) {
        owner[key] = holders[0];
      } else {
        EXPECT_EQ(holders[0], owner[key]) << key << " moved while its server lived";
      }
    }
  }
  std::map<int, int> keys_of;
  for (const auto& [key, server] : owner) ++keys_of[server];
  ASSERT_GE(keys_of.size(), 2u) << "the keys did not spread";
  const int dead = keys_of.begin()->first;
  Kill(servers_[dead]);
  ASSERT_TRUE(Eventually([&] { return Usable(servers_[dead], false); }));
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "key" + std::to_string(k);
    const std::string body = key + "-4";
    const unsigned status = Write(key, 4, body);
    EXPECT_TRUE(status == 201u || status == 204u) << key << " " << status;
    const std::vector<int> holders = Holders(key, body);
    ASSERT_EQ(holders.size(), 1u) << key;
    if (owner[key] == dead) {
      EXPECT_NE(holders[0], dead) << key;
    } else {
      EXPECT_EQ(holders[0], owner[key]) << key << " moved although its server lives";
    }
  }
}

}  // namespace
}  // namespace fencegate::integration
