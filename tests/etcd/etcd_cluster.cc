#include "tests/etcd/etcd_cluster.h"

#include <chrono>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "tests/support/eventually.h"
#include "tests/support/http_client.h"

namespace fencegate::etcdtest {
namespace {

constexpr auto kStartDeadline = std::chrono::seconds(30);
constexpr int kStartAttempts = 3;

bool Healthy(std::uint16_t port, const EtcdTls* tls) {
  std::string error;
  auto request = integration::MakeRequest(integration::http::verb::get, "/health");
  const auto response = tls ? integration::TlsFetch(port, tls->probe, std::move(request), &error)
                            : integration::Fetch(port, std::move(request), &error);
  return response && response->result_int() == 200 &&
         response->body().find("\"true\"") != std::string::npos;
}

}  // namespace

std::uint16_t FreePort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

std::unique_ptr<EtcdCluster> EtcdCluster::Start(int members, std::string* error,
                                                const EtcdTls* tls) {
  // A port picked free may be taken by another process before etcd binds it ("address already
  // in use"): the cluster is started again on new ports, a bounded number of times.
  for (int attempt = 1;; ++attempt) {
    auto cluster = StartOnce(members, error, tls);
    if (cluster || attempt == kStartAttempts ||
        error->find("address already in use") == std::string::npos) {
      return cluster;
    }
  }
}

std::unique_ptr<EtcdCluster> EtcdCluster::StartOnce(int members, std::string* error,
                                                    const EtcdTls* tls) {
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  std::string initial;
  // Every port is held until all are picked, so that no two members get the same one.
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::acceptor> held;
  const auto pick = [&io, &held] {
    held.emplace_back(
        io, boost::asio::ip::tcp::endpoint{boost::asio::ip::make_address("127.0.0.1"), 0});
    return held.back().local_endpoint().port();
  };
  for (int i = 0; i < members; ++i) {
    Member member;
    member.name = "m" + std::to_string(i);
    member.client_port = pick();
    member.peer_port = pick();
    if (!initial.empty()) initial += ",";
    initial += member.name + "=http://127.0.0.1:" + std::to_string(member.peer_port);
    cluster->members_.push_back(std::move(member));
  }
  held.clear();
  for (Member& member : cluster->members_) {
    const std::string client =
        std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(member.client_port);
    const std::string peer = "http://127.0.0.1:" + std::to_string(member.peer_port);
    std::vector<std::string> tls_flags;
    if (tls) {
      tls_flags = {"--cert-file", tls->cert_file, "--key-file", tls->key_file};
      if (!tls->client_ca_file.empty()) {
        tls_flags.insert(tls_flags.end(),
                         {"--client-cert-auth", "--trusted-ca-file", tls->client_ca_file});
      }
    }
    std::vector<std::string> argv = {"/usr/bin/etcd",
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
                                     "warn"};
    argv.insert(argv.end(), tls_flags.begin(), tls_flags.end());
    member.process = integration::Process::Start(argv, error);
    if (!member.process) return nullptr;
  }
  for (Member& member : cluster->members_) {
    bool port_taken = false;
    const bool healthy = integration::Eventually(
        [&] {
          port_taken = member.process->Stderr().find("address already in use") != std::string::npos;
          return port_taken || Healthy(member.client_port, tls);
        },
        kStartDeadline);
    if (port_taken || !healthy) {
      *error = "etcd member " + member.name + " not healthy: " + member.process->Stderr();
      return nullptr;
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
