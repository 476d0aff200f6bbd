#include "tests/etcd/etcd_cluster.h"

#include <chrono>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "tests/integration/http_client.h"

namespace fencegate::etcdtest {
namespace {

constexpr auto kStartDeadline = std::chrono::seconds(30);

bool Healthy(std::uint16_t port) {
  std::string error;
  const auto response = integration::Fetch(
      port, integration::MakeRequest(integration::http::verb::get, "/health"), &error);
  return response && response->result_int() == 200 &&
         response->body().find("\"true\"") != std::string::npos;
}

}  // namespace

std::uint16_t FreePort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

std::unique_ptr<EtcdCluster> EtcdCluster::Start(int members, std::string* error) {
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  std::string initial;
  for (int i = 0; i < members; ++i) {
    Member member;
    member.name = "m" + std::to_string(i);
    member.client_port = FreePort();
    member.peer_port = FreePort();
    if (!initial.empty()) initial += ",";
    initial += member.name + "=http://127.0.0.1:" + std::to_string(member.peer_port);
    cluster->members_.push_back(std::move(member));
  }
  for (Member& member : cluster->members_) {
    const std::string client = "http://127.0.0.1:" + std::to_string(member.client_port);
    const std::string peer = "http://127.0.0.1:" + std::to_string(member.peer_port);
    member.process = integration::Process::Start({"/usr/bin/etcd",
                                                  "--logger",
                                                  "zap",
                                                  "--name",
                                                  member.name,
                                                  "--data-dir",
                                                  cluster->dir_.Join(member.name),
                                                  "--listen-client-urls",
                                                  client,
                                                  "--advertise-client-urls",
                                                  client,
                                                  "--listen-peer-urls",
                                                  peer,
                                                  "--initial-advertise-peer-urls",
                                                  peer,
                                                  "--initial-cluster",
                                                  initial,
                                                  "--initial-cluster-state",
                                                  "new",
                                                  "--initial-cluster-token",
                                                  "fencegate-test",
                                                  "--heartbeat-interval",
                                                  "50",
                                                  "--election-timeout",
                                                  "500",
                                                  "--log-level",
                                                  "warn"},
                                                 error);
    if (!member.process) return nullptr;
  }
  const auto end = std::chrono::steady_clock::now() + kStartDeadline;
  for (Member& member : cluster->members_) {
    while (!Healthy(member.client_port)) {
      if (std::chrono::steady_clock::now() > end) {
        *error = "etcd member " + member.name + " not healthy: " + member.process->Stderr();
        return nullptr;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return cluster;
}

EtcdCluster::~EtcdCluster() {
  for (Member& member : members_) member.process.reset();  // SIGKILL and reap
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> out;
  for (const Member& member : members_) {
    out.push_back("127.0.0.1:" + std::to_string(member.client_port));
  }
  return out;
}

void EtcdCluster::Kill(int member) { members_[member].process.reset(); }

}  // namespace fencegate::etcdtest
